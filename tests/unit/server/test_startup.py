"""Unit tests for server.startup: the first-packet loop's TLS answers and --tls-required."""

from __future__ import annotations

from server import messages as m
from tests.unit.server.test_connection import STARTUP, backend, converse


def test_without_tls_ssl_request_gets_n_and_startup_proceeds():
    output, _ = converse(m.SSLRequest(), STARTUP, m.Terminate())
    assert output[:1] == b"N"
    assert any(isinstance(msg, m.AuthenticationOk) for msg in backend(output[1:]))


def test_tls_required_refuses_a_clear_text_startup_with_28000():
    output, _ = converse(
        STARTUP, m.Terminate(), tls_cert="server.pem", tls_key="server.key", tls_required=True
    )
    (error,) = backend(output)
    assert isinstance(error, m.ErrorResponse)
    assert (error.get("S"), error.get("C")) == ("FATAL", "28000")
    assert "no encryption" in (error.get("M") or "")


def test_options_startup_parameter_carries_settings():
    from server.startup import command_line_settings

    assert command_line_settings("-c statement_timeout=200 --search-path=a\\ b -cDateStyle=ISO") == {
        "statement_timeout": "200",
        "search_path": "a b",
        "DateStyle": "ISO",
    }
    assert command_line_settings("") == {}
