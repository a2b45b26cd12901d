"""Authentication methods: how a client proves who it is between StartupMessage and AuthenticationOk.

An ``Authenticator`` drives the exchange through an ``AuthExchange`` (the
connection): it sends Authentication* requests, reads the client's
PasswordMessage / SASL responses, and ends by sending AuthenticationOk or
raising a FATAL ``InvalidAuthorizationSpecification`` / ``InvalidPassword``.

``trust`` accepts everyone.  ``password`` runs SCRAM-SHA-256 (RFC 5802/7677,
``server.scram``) against the verifier in the role store, which the server
sees only through the ``RoleLookup`` protocol (``sql.Database.roles`` fits
it), so that it never imports the catalog.  An unknown role, a role without
a password and a wrong password all fail the same way, after the same
exchange: an unknown role is checked against a mock verifier made at
start-up, as PostgreSQL does, so the answer takes as long and says the same
thing (28P01).  The reason goes to the server log only.  Since only SCRAM
verifiers are stored, md5 is not offered: PostgreSQL too answers an md5
``pg_hba.conf`` line with SCRAM when the stored password is a SCRAM verifier.
"""

from __future__ import annotations

import logging
from typing import Protocol

from server.messages import (
    AuthenticationOk,
    AuthenticationSASL,
    AuthenticationSASLContinue,
    AuthenticationSASLFinal,
    BackendMessage,
    FrontendMessage,
    PasswordMessage,
)
from server.scram import MECHANISM, ScramError, ScramServer, ScramVerifier, mock_verifier
from storage.errors import (
    InvalidAuthorizationSpecification,
    InvalidPassword,
    ProtocolViolation,
)

log = logging.getLogger(__name__)


class AuthExchange(Protocol):
    """The connection as seen by an authentication method."""

    peer: object

    def send(self, message: BackendMessage) -> None: ...

    async def flush(self) -> None: ...

    async def receive(self) -> FrontendMessage | None: ...


class LoginRole(Protocol):
    """A role as authentication needs it."""

    @property
    def login(self) -> bool: ...

    @property
    def verifier(self) -> ScramVerifier | None: ...


class RoleLookup(Protocol):
    """The role store as authentication needs it: roles by name."""

    def get(self, name: str) -> LoginRole | None: ...


class Authenticator(Protocol):
    async def authenticate(self, exchange: AuthExchange, user: str, database: str) -> None:
        """Authenticate ``user``; send AuthenticationOk or raise a FATAL DbError."""
        ...


class TrustAuthenticator:
    """Accepts every user without a password (PostgreSQL's ``trust``)."""

    async def authenticate(self, exchange: AuthExchange, user: str, database: str) -> None:
        exchange.send(AuthenticationOk())


class ScramAuthenticator:
    """SCRAM-SHA-256 against the role store (``--auth password``)."""

    def __init__(self, roles: RoleLookup) -> None:
        self._roles = roles
        self._mock = mock_verifier()

    async def authenticate(self, exchange: AuthExchange, user: str, database: str) -> None:
        role = self._roles.get(user)
        verifier = role.verifier if role is not None else None
        reason = None
        if role is None:
            reason = f'Role "{user}" does not exist.'
        elif verifier is None:
            reason = f'User "{user}" has no password assigned.'
        server = ScramServer(verifier or self._mock)
        exchange.send(AuthenticationSASL((MECHANISM,)))
        await exchange.flush()
        initial = await self._read(exchange)
        mechanism, _, rest = initial.partition(b"\0")
        if mechanism.decode("ascii", "replace") != MECHANISM or len(rest) < 4:
            raise ProtocolViolation(
                "client selected an invalid SASL authentication mechanism", severity="FATAL"
            )
        length = int.from_bytes(rest[:4], "big", signed=True)
        client_first = rest[4:] if length >= 0 else b""
        try:
            server_first = server.first(client_first.decode("utf-8"))
            exchange.send(AuthenticationSASLContinue(server_first.encode()))
            await exchange.flush()
            client_final = await self._read(exchange)
            server_final = server.final(client_final.decode("utf-8"))
            if reason is not None:
                raise ScramError("mock authentication")
        except (ScramError, UnicodeDecodeError) as exc:
            log.warning(
                'password authentication failed for user "%s" from %s: %s',
                user,
                exchange.peer,
                reason or exc,
            )
            raise InvalidPassword(
                f'password authentication failed for user "{user}"', severity="FATAL"
            ) from None
        exchange.send(AuthenticationSASLFinal(server_final.encode()))
        if role is not None and not role.login:
            log.warning('role "%s" is not permitted to log in', user)
            raise InvalidAuthorizationSpecification(
                f'role "{user}" is not permitted to log in', severity="FATAL"
            )
        exchange.send(AuthenticationOk())

    async def _read(self, exchange: AuthExchange) -> bytes:
        message = await exchange.receive()
        if message is None:
            raise ConnectionError("client left during authentication")
        if not isinstance(message, PasswordMessage):
            raise ProtocolViolation(
                f"expected SASL response, got message type {getattr(message, 'TYPE', b'?')!r}",
                severity="FATAL",
            )
        return message.data
