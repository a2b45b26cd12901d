"""The asyncio listener: accepts clients, keeps the registry cancel requests use, shuts down.

Each accepted socket becomes a ``Connection`` running in its own task, with a
BackendKeyData pair (process id, secret) that identifies it to a later
CancelRequest; the registry maps the process id to the connection and the
secret is compared in constant time.  Each connection runs its statements on
a thread of its own, so no number of waiting statements can starve the rest.

A session takes one of ``max_connections`` slots once authenticated; the
last ``superuser_reserved_connections`` go to superusers only, and a client
beyond them gets FATAL 53300, as from PostgreSQL.

Shutdown (SIGTERM or SIGINT, wired in ``__main__``): stop listening, end
idle connections at once with FATAL 57P01, give running statements
``shutdown_grace_s`` to finish, then cancel them and close what is left.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import logging
import secrets
import ssl
from typing import TYPE_CHECKING

from server import metrics
from server.auth import Authenticator, TrustAuthenticator
from server.client_stream import ClientStream
from server.config import Config
from server.connection import Connection
from storage.errors import TooManyConnections

if TYPE_CHECKING:
    from sql.session.database import Database

log = logging.getLogger(__name__)

_MAX_PROCESS_ID = 2**31 - 1


def tls_context(config: Config) -> ssl.SSLContext | None:
    """The server's TLS context from ``tls_cert``/``tls_key`` (None: TLS is off); TLS 1.2 or newer."""
    if not config.tls_cert:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(config.tls_cert, config.tls_key)
    return context


class Server:
    """Listens for clients of one database and tracks their connections."""

    def __init__(
        self, database: Database, config: Config, authenticator: Authenticator | None = None
    ) -> None:
        self._database = database
        self._config = config
        self._authenticator = authenticator or TrustAuthenticator()
        self._connections: dict[int, Connection] = {}
        self._sessions: set[int] = set()
        """Process ids of the connections holding a session slot (``max_connections``)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._listener: asyncio.Server | None = None
        self._next_process_id = secrets.randbelow(2**30) + 1000
        self._tls_context = tls_context(config)

    async def start(self) -> tuple[str, int]:
        """Start listening; returns the bound host and port (the real one when port is 0)."""
        loop = asyncio.get_running_loop()
        self._listener = await loop.create_server(
            self._client_stream, self._config.host, self._config.port, reuse_address=True
        )
        host, port = self._listener.sockets[0].getsockname()[:2]
        return host, port

    async def serve_until(self, stop: asyncio.Event) -> None:
        """Serve until ``stop`` is set, then shut down gracefully."""
        await stop.wait()
        await self.shutdown()

    def cancel(self, process_id: int, secret_key: int) -> None:
        """Handle a CancelRequest: cancel that connection's statement if the secret matches."""
        connection = self._connections.get(process_id)
        if connection is None or not hmac.compare_digest(
            connection.secret_key.to_bytes(4, "big", signed=True),
            secret_key.to_bytes(4, "big", signed=True),
        ):
            log.info("cancel request for unknown backend %d ignored", process_id)
            return
        log.info("cancel request for backend %d", process_id)
        connection.cancel_statement()

    def _client_stream(self) -> ClientStream:
        """A new client's protocol; once connected it is served in a task of its own."""
        return ClientStream(self._config.max_message_size_bytes, on_connected=self._connected)

    def _connected(self, stream: ClientStream) -> None:
        task = asyncio.get_running_loop().create_task(self._accept(stream))
        self._tasks.add(task)
        task.add_done_callback(functools.partial(_served, stream))

    async def _accept(self, stream: ClientStream) -> None:
        process_id = self._allocate_process_id()
        connection = Connection(
            stream,
            database=self._database,
            config=self._config,
            authenticator=self._authenticator,
            process_id=process_id,
            secret_key=secrets.randbelow(2**31),
            on_cancel_request=self.cancel,
            tls_context=self._tls_context,
            admit=lambda is_superuser: self._admit(process_id, is_superuser),
        )
        task = asyncio.current_task()
        assert task is not None, "connections run in tasks"
        self._connections[process_id] = connection
        self._tasks.add(task)
        log.debug("connection %d from %s", process_id, connection.peer)
        metrics.CONNECTIONS.inc()
        metrics.CONNECTIONS_TOTAL.inc()
        try:
            await connection.run()
        finally:
            metrics.CONNECTIONS.dec()
            self._sessions.discard(process_id)
            self._connections.pop(process_id, None)
            self._tasks.discard(task)

    def _admit(self, process_id: int, is_superuser: bool) -> None:
        """Give a new session a slot, as PostgreSQL does: the last
        ``superuser_reserved_connections`` of ``max_connections`` only to superusers."""
        in_use = len(self._sessions)
        if in_use >= self._config.max_connections:
            raise TooManyConnections("sorry, too many clients already")
        reserved = self._config.superuser_reserved_connections
        if not is_superuser and in_use >= self._config.max_connections - reserved:
            raise TooManyConnections(
                "remaining connection slots are reserved for non-replication superuser connections"
            )
        self._sessions.add(process_id)

    def _allocate_process_id(self) -> int:
        while True:
            self._next_process_id = self._next_process_id % _MAX_PROCESS_ID + 1
            if self._next_process_id not in self._connections:
                return self._next_process_id

    async def shutdown(self) -> None:
        """Stop listening and end the connections (each releases its own thread)."""
        if self._listener is not None:
            self._listener.close()
        log.info("shutting down: %d connections", len(self._connections))
        for connection in list(self._connections.values()):
            connection.shutdown()
        tasks = set(self._tasks)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=self._config.shutdown_grace_s)
            if pending:
                log.warning("cancelling %d running statements", len(pending))
                for connection in list(self._connections.values()):
                    connection.cancel_statement()
                await asyncio.wait(pending, timeout=self._config.shutdown_grace_s)


def _served(stream: ClientStream, task: asyncio.Task[None]) -> None:
    """A connection's task ended: one that failed is logged and its socket closed."""
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        log.error("connection failed", exc_info=exc)
        stream.close()
