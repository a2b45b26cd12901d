"""The start of a connection: the first-packet loop, the TLS upgrade, authentication, the session.

SSLRequest is answered ``S`` and the socket upgraded to TLS when the server
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
from typing import TYPE_CHECKING

from server import messages as m
from storage.errors import (
    DbError,
    FeatureNotSupported,
    InvalidAuthorizationSpecification,
    ProtocolViolation,
)

if TYPE_CHECKING:
    from server.connection import Connection

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


class Startup:
    """The startup half of ``Connection`` (a mixin: it uses the connection's I/O)."""

    tls_context: ssl.SSLContext | None = None
    is_tls = False

    async def _startup(self: Connection) -> bool:
        """Run the first-packet loop and authentication; False if the connection just ends."""
        try:
            while True:
                message = await self.receive()
                if message is None:
                    return False
                if isinstance(message, m.SSLRequest):
                    await self._answer_ssl_request()
                elif isinstance(message, m.GSSENCRequest):
                    self._writer.write(b"N")
                    await self._writer.drain()
                elif isinstance(message, m.CancelRequest):
                    self._on_cancel_request(message.process_id, message.secret_key)
                    return False
                elif isinstance(message, m.StartupMessage):
                    break
                else:
                    raise ProtocolViolation("expected a startup message")
            await self._start_session(message)
        except DbError as exc:
            await self._fatal(exc)
        return True

    async def _answer_ssl_request(self: Connection) -> None:
        """Answer 'S' and run the TLS handshake if the server has a certificate, else 'N'."""
        if self.tls_context is None or self.is_tls:
            self._writer.write(b"N")
            await self._writer.drain()
            return
        if self._decoder.buffered_bytes():
            raise ProtocolViolation("received unencrypted data after SSL request")
        self._writer.write(b"S")
        await self._writer.drain()
        try:
            await self._writer.start_tls(self.tls_context)
        except (ssl.SSLError, OSError) as exc:
            log.info("connection %d: TLS handshake failed: %s", self.process_id, exc)
            raise ConnectionError("TLS handshake failed") from exc
        self.is_tls = True

    async def _start_session(self: Connection, startup: m.StartupMessage) -> None:
        major, minor = startup.protocol_version >> 16, startup.protocol_version & 0xFFFF
        if major != 3:
            raise FeatureNotSupported(
                f"unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0"
            )
        parameters = startup.parameters
        options = tuple(k for k in parameters if k.startswith("_pq_."))
        if minor > SERVER_MINOR_VERSION or options:
            self.send(m.NegotiateProtocolVersion(SERVER_MINOR_VERSION, options))
        user = parameters.get("user")
        if not user:
            raise InvalidAuthorizationSpecification(
                "no PostgreSQL user name specified in startup packet"
            )
        database = parameters.get("database") or user
        if self._config.tls_required and not self.is_tls:
            host = self.peer[0] if isinstance(self.peer, tuple) else "local"
            log.info("connection %d: refused, TLS is required", self.process_id)
            raise InvalidAuthorizationSpecification(
                f'no pg_hba.conf entry for host "{host}", user "{user}", '
                f'database "{database}", no encryption'
            )
        await self._authenticator.authenticate(self, user, database)
        settings = {
            k: v
            for k, v in parameters.items()
            if k not in ("user", "database", "options") and k not in options
        }
        settings.update(command_line_settings(parameters.get("options", "")))
        self._session = await self._run(self._database.session, user, database, settings)
        log.debug("connection %d: user %r, database %r", self.process_id, user, database)
        self._send_parameter_changes()
        self.send(m.BackendKeyData(self.process_id, self.secret_key))
        self.send(m.ReadyForQuery(self._session.transaction_status))
        await self.flush()
