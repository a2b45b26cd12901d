from __future__ import annotations

import asyncio

import pytest
import scramp

from catalog.roles import Role, RoleStore, password_verifier
from server.auth import ScramAuthenticator, TrustAuthenticator
from server.messages import (
    AuthenticationOk,
    AuthenticationSASL,
    AuthenticationSASLContinue,
    AuthenticationSASLFinal,
    PasswordMessage,
)
from storage.errors import InvalidAuthorizationSpecification, InvalidPassword


class ExchangeDouble:
    def __init__(self) -> None:
        self.sent: list[object] = []

    def send(self, message) -> None:
        self.sent.append(message)

    async def flush(self) -> None:
        return None

    async def receive(self):
        raise AssertionError("trust authentication reads nothing from the client")


def test_trust_answers_authentication_ok_without_reading():
    exchange = ExchangeDouble()
    asyncio.run(TrustAuthenticator().authenticate(exchange, "nyala", "nyala"))
    assert exchange.sent == [AuthenticationOk()]


class ScramClientExchange:
    """Plays a SCRAM-SHA-256 client (scramp) against the authenticator, as libpq does."""

    peer = ("127.0.0.1", 1)

    def __init__(self, password: str) -> None:
        self.client = scramp.ScramClient(["SCRAM-SHA-256"], "ignored-by-the-server", password)
        self.sent: list[object] = []
        self._replies: list[object] = []

    def send(self, message) -> None:
        self.sent.append(message)
        if isinstance(message, AuthenticationSASL):
            first = self.client.get_client_first().encode()
            self._replies.append(
                PasswordMessage(b"SCRAM-SHA-256\0" + len(first).to_bytes(4, "big") + first)
            )
        elif isinstance(message, AuthenticationSASLContinue):
            self.client.set_server_first(message.data.decode())
            self._replies.append(PasswordMessage(self.client.get_client_final().encode()))
        elif isinstance(message, AuthenticationSASLFinal):
            self.client.set_server_final(message.data.decode())

    async def flush(self) -> None:
        return None

    async def receive(self):
        return self._replies.pop(0)


@pytest.fixture
def roles(tmp_path):
    store = RoleStore(tmp_path, fsync=False)
    store.bootstrap("admin", "right")
    store.put(Role("locked", login=False, password=password_verifier("pw")))
    store.put(Role("nopass", password=None))
    return store


def authenticate(roles, user, password):
    exchange = ScramClientExchange(password)
    asyncio.run(ScramAuthenticator(roles).authenticate(exchange, user, "nyala"))
    return exchange


def test_scram_accepts_the_right_password_and_verifies_the_server(roles):
    exchange = authenticate(roles, "admin", "right")
    assert exchange.sent[-1] == AuthenticationOk()


@pytest.mark.parametrize(("user", "password"), [("admin", "wrong"), ("ghost", "x"), ("nopass", "")])
def test_scram_failures_are_the_same_28p01(roles, user, password, caplog):
    with pytest.raises(InvalidPassword) as info:
        authenticate(roles, user, password)
    assert (info.value.severity, info.value.message) == (
        "FATAL",
        f'password authentication failed for user "{user}"',
    )
    assert f'password authentication failed for user "{user}"' in caplog.text


def test_nologin_role_is_refused_after_a_correct_password(roles):
    with pytest.raises(InvalidAuthorizationSpecification, match="not permitted to log in"):
        authenticate(roles, "locked", "pw")
