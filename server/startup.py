"""The start-up phase of a connection: the first-packet loop, the TLS upgrade, authentication.

``StartupHandshake`` runs the exchange from the first packet up to
AuthenticationOk and returns the ``Startup`` the client asked for (user,
database, run-time parameters); the connection then opens the session and
sends ParameterStatus, BackendKeyData and ReadyForQuery.  SSLRequest is answered ``S`` and the socket upgraded to TLS when the server
has a certificate, else ``N``; GSSENCRequest always gets ``N``.  Bytes the
client sent after SSLRequest but before the handshake are refused (they were
not encrypted).  With ``tls_required`` a StartupMessage that arrives in the
clear is refused with 28000, as a ``hostssl``-only pg_hba.conf does.  A
CancelRequest is handed to the server and the connection closes.
"""

from __future__ import annotations

import logging
import re
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from server import messages as m
from server.auth import Authenticator, AuthExchange
from server.codec import FrontendDecoder
from server.config import Config
from storage.errors import (
    FeatureNotSupported,
    InvalidAuthorizationSpecification,
    ProtocolViolation,
)

log = logging.getLogger(__name__)

SERVER_MINOR_VERSION = 0


def command_line_settings(options: str) -> dict[str, str]:
    r"""Settings from the ``options`` startup parameter: ``-c name=value`` and ``--name=value``.

    As in PostgreSQL, words are separated by spaces and ``\ `` is a space inside one.
    """
    words = [w.replace("\\ ", " ") for w in re.split(r"(?<!\\)\s+", options.strip()) if w]
    settings: dict[str, str] = {}
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "-c" and index < len(words):
            word, index = "-c" + words[index], index + 1
        if word.startswith("-c") or word.startswith("--"):
            assignment = word[2:]
        else:
            continue
        name, equals, value = assignment.partition("=")
        if equals:
            settings[name.replace("-", "_")] = value
    return settings


class RawWriter(Protocol):
    """The connection's socket, for the single-byte SSLRequest answers and the TLS upgrade."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    async def start_tls(self, context: ssl.SSLContext) -> None: ...


@dataclass(frozen=True, slots=True)
class Startup:
    """What an authenticated StartupMessage asks for: who, which database, which settings."""

    user: str
    database: str
    settings: dict[str, str]


class StartupHandshake:
    """The start-up phase of one connection, up to and including AuthenticationOk.

    It shares the connection's message I/O (``exchange``) and, for the
    single-byte SSLRequest answers and the TLS upgrade, its raw ``writer``
    and ``decoder``; the connection keeps everything after authentication.
    """

    def __init__(
        self,
        exchange: AuthExchange,
        writer: RawWriter,
        decoder: FrontendDecoder,
        *,
        config: Config,
        authenticator: Authenticator,
        tls_context: ssl.SSLContext | None,
        process_id: int,
        on_cancel_request: Callable[[int, int], None],
    ) -> None:
        self._exchange = exchange
        self._writer = writer
        self._decoder = decoder
        self._config = config
        self._authenticator = authenticator
        self._tls_context = tls_context
        self._process_id = process_id
        self._on_cancel_request = on_cancel_request
        self.is_tls = False

    async def run(self) -> Startup | None:
        """Run the first-packet loop and authentication; None if the connection just ends.

        A refusal raises a FATAL-worthy ``DbError`` for the connection to report.
        """
        while True:
            message = await self._exchange.receive()
            if message is None:
                return None
            if isinstance(message, m.SSLRequest):
                await self._answer_ssl_request()
            elif isinstance(message, m.GSSENCRequest):
                self._writer.write(b"N")
                await self._writer.drain()
            elif isinstance(message, m.CancelRequest):
                self._on_cancel_request(message.process_id, message.secret_key)
                return None
            elif isinstance(message, m.StartupMessage):
                return await self._authenticate(message)
            else:
                raise ProtocolViolation("expected a startup message")

    async def _answer_ssl_request(self) -> None:
        """Answer 'S' and run the TLS handshake if the server has a certificate, else 'N'."""
        if self._tls_context is None or self.is_tls:
            self._writer.write(b"N")
            await self._writer.drain()
            return
        if self._decoder.buffered_bytes():
            raise ProtocolViolation("received unencrypted data after SSL request")
        self._writer.write(b"S")
        await self._writer.drain()
        try:
            await self._writer.start_tls(self._tls_context)
        except (ssl.SSLError, OSError) as exc:
            log.info("connection %d: TLS handshake failed: %s", self._process_id, exc)
            raise ConnectionError("TLS handshake failed") from exc
        self.is_tls = True

    async def _authenticate(self, startup: m.StartupMessage) -> Startup:
        major, minor = startup.protocol_version >> 16, startup.protocol_version & 0xFFFF
        if major != 3:
            raise FeatureNotSupported(
                f"unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0"
            )
        parameters = startup.parameters
        options = tuple(k for k in parameters if k.startswith("_pq_."))
        if minor > SERVER_MINOR_VERSION or options:
            self._exchange.send(m.NegotiateProtocolVersion(SERVER_MINOR_VERSION, options))
        user = parameters.get("user")
        if not user:
            raise InvalidAuthorizationSpecification(
                "no PostgreSQL user name specified in startup packet"
            )
        database = parameters.get("database") or user
        if self._config.tls_required and not self.is_tls:
            peer = self._exchange.peer
            host = peer[0] if isinstance(peer, tuple) else "local"
            log.info("connection %d: refused, TLS is required", self._process_id)
            raise InvalidAuthorizationSpecification(
                f'no pg_hba.conf entry for host "{host}", user "{user}", '
                f'database "{database}", no encryption'
            )
        await self._authenticator.authenticate(self._exchange, user, database)
        settings = {
            k: v
            for k, v in parameters.items()
            if k not in ("user", "database", "options") and k not in options
        }
        settings.update(command_line_settings(parameters.get("options", "")))
        return Startup(user, database, settings)
