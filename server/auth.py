"""Authentication methods: how a client proves who it is between StartupMessage and AuthenticationOk.

An ``Authenticator`` drives the exchange through an ``AuthExchange`` (the
connection): it sends Authentication* requests, reads the client's
PasswordMessage / SASL responses, and ends by sending AuthenticationOk or
raising a FATAL ``InvalidAuthorizationSpecification`` / ``InvalidPassword``.
Only ``trust`` exists today; cleartext, md5 and SCRAM-SHA-256 are further
classes with the same method, chosen in ``server.server``.
"""

from __future__ import annotations

from typing import Protocol

from server.messages import AuthenticationOk, BackendMessage, FrontendMessage


class AuthExchange(Protocol):
    """The connection as seen by an authentication method."""

    def send(self, message: BackendMessage) -> None: ...

    async def flush(self) -> None: ...

    async def receive(self) -> FrontendMessage | None: ...


class Authenticator(Protocol):
    async def authenticate(self, exchange: AuthExchange, user: str, database: str) -> None:
        """Authenticate ``user``; send AuthenticationOk or raise a FATAL DbError."""
        ...


class TrustAuthenticator:
    """Accepts every user without a password (PostgreSQL's ``trust``)."""

    async def authenticate(self, exchange: AuthExchange, user: str, database: str) -> None:
        exchange.send(AuthenticationOk())
