"""Unit tests for server.startup: the first-packet loop's TLS answers and --tls-required."""

from __future__ import annotations

import asyncio

from server import messages as m
from server.auth import TrustAuthenticator
from server.codec import FrontendDecoder
from server.config import Config
from server.startup import StartupHandshake
from tests.unit.server.test_connection import STARTUP, MemoryWriter, backend, converse


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

    assert command_line_settings(
        "-c statement_timeout=200 --search-path=a\\ b -cDateStyle=ISO"
    ) == {
        "statement_timeout": "200",
        "search_path": "a b",
        "DateStyle": "ISO",
    }
    assert command_line_settings("") == {}


class MessagesExchange:
    """The connection's message I/O as the handshake sees it, replaying client messages."""

    peer = ("127.0.0.1", 1)

    def __init__(self, *client: m.FrontendMessage) -> None:
        self.client = list(client)
        self.sent: list[m.BackendMessage] = []

    def send(self, message: m.BackendMessage) -> None:
        self.sent.append(message)

    async def flush(self) -> None:
        return None

    async def receive(self) -> m.FrontendMessage | None:
        return self.client.pop(0) if self.client else None


def handshake(*client: m.FrontendMessage):
    """Run the handshake without a Connection: only its message I/O and raw writer."""
    exchange, writer, cancels = MessagesExchange(*client), MemoryWriter(), []
    startup = asyncio.run(
        StartupHandshake(
            exchange,
            writer,  # type: ignore[arg-type]
            FrontendDecoder(1 << 20),
            config=Config(),
            authenticator=TrustAuthenticator(),
            tls_context=None,
            process_id=42,
            on_cancel_request=lambda pid, key: cancels.append((pid, key)),
        ).run()
    )
    return startup, exchange.sent, bytes(writer.data), cancels


def test_handshake_alone_returns_the_authenticated_startup():
    startup, sent, raw, _ = handshake(
        m.SSLRequest(),
        m.StartupMessage(parameters={"user": "bob", "application_name": "x", "options": "-c a=1"}),
    )
    assert (startup.user, startup.database) == ("bob", "bob")
    assert startup.settings == {"application_name": "x", "a": "1"}
    assert raw == b"N"
    assert sent == [m.AuthenticationOk()]


def test_handshake_hands_a_cancel_request_over_and_ends():
    startup, sent, _, cancels = handshake(m.CancelRequest(7, 9))
    assert (startup, sent, cancels) == (None, [], [(7, 9)])
