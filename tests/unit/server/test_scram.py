"""Unit tests for server.scram against scramp's client (an independent SCRAM implementation)."""

from __future__ import annotations

import base64

import pytest
import scramp

from catalog.roles import make_verifier
from server.scram import ScramError, ScramServer


def exchange(password: str, stored_for: str = "right", tamper=lambda final: final) -> str:
    client = scramp.ScramClient(["SCRAM-SHA-256"], "someone", password)
    server = ScramServer(make_verifier(stored_for))
    client.set_server_first(server.first(client.get_client_first()))
    server_final = server.final(tamper(client.get_client_final()))
    client.set_server_final(server_final)  # the client checks the server's signature
    return server_final


def test_right_password_and_server_signature():
    assert exchange("right").startswith("v=")


def test_wrong_password_is_refused():
    with pytest.raises(ScramError, match="wrong password"):
        exchange("wrong")


def test_tampered_nonce_and_binding_are_refused():
    with pytest.raises(ScramError, match="nonce"):
        exchange("right", tamper=lambda f: f.replace("r=", "r=x", 1))
    with pytest.raises(ScramError, match="channel-binding"):
        exchange(
            "right", tamper=lambda f: f.replace("c=biws", "c=" + base64.b64encode(b"y,,").decode())
        )


def test_empty_user_name_in_client_first_is_accepted_as_libpq_sends_it():
    server = ScramServer(make_verifier("pw"))
    assert server.first("n,,n=,r=abc").startswith("r=abc")


@pytest.mark.parametrize("first", ["p=tls-server-end-point,,n=,r=a", "x,,n=,r=a", "n,,n=", "n,,r="])
def test_malformed_or_channel_bound_client_first_is_refused(first):
    with pytest.raises(ScramError):
        ScramServer(make_verifier("pw")).first(first)
