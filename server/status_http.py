"""StatusServer: the HTTP listener for the status page (``/``) and ``/metrics``, on ``--http-port``.

A few routes of plain HTTP/1.1 GET, one request per connection, on the same
event loop as the PostgreSQL listener; what a page needs from storage is read
on a worker thread, so a slow read never stalls the loop.  It listens on
127.0.0.1 unless ``--http-host`` says otherwise: the page shows table names
and has no authentication.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from server import metrics, status_page
from sql.session.tablet_status import tablet_status

if TYPE_CHECKING:
    from sql.session.database import Database

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 16 * 1024
READ_TIMEOUT_S = 10.0


class StatusServer:
    """Serves one database's status page and metrics until closed."""

    def __init__(self, database: Database, host: str, port: int) -> None:
        self._database = database
        self._host = host
        self._port = port
        self._listener: asyncio.Server | None = None
        self._collector = metrics.TabletCollector(
            lambda: tablet_status(database), database.engine.maintenance_totals
        )

    async def start(self) -> tuple[str, int]:
        """Listen; returns the bound host and port (the real one when port is 0)."""
        self._listener = await asyncio.start_server(
            self._serve, self._host, self._port, reuse_address=True
        )
        metrics.REGISTRY.register(self._collector)
        host, port = self._listener.sockets[0].getsockname()[:2]
        return host, port

    async def close(self) -> None:
        if self._listener is None:
            return
        self._listener.close()
        await self._listener.wait_closed()
        metrics.REGISTRY.unregister(self._collector)
        self._listener = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT_S)
            status, content_type, body = await self._answer(head)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            status, content_type, body = "400 Bad Request", "text/plain", b"bad request\n"
        except Exception:
            log.exception("status page failed")
            status, content_type, body = "500 Internal Server Error", "text/plain", b"error\n"
        try:
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\n"
                "Connection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def _answer(self, head: bytes) -> tuple[str, str, bytes]:
        parts = head[:MAX_REQUEST_BYTES].split(b"\r\n", 1)[0].split()
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/"):
            return "400 Bad Request", "text/plain", b"bad request\n"
        method, target = parts[0], parts[1].split(b"?", 1)[0]
        if method != b"GET":
            return "405 Method Not Allowed", "text/plain", b"only GET\n"
        loop = asyncio.get_running_loop()
        if target == b"/":
            text = await loop.run_in_executor(None, self._page)
            return "200 OK", "text/html; charset=utf-8", text.encode()
        if target == b"/metrics":
            body = await loop.run_in_executor(None, metrics.render)
            return "200 OK", "text/plain; version=0.0.4; charset=utf-8", body
        return "404 Not Found", "text/plain", b"not found\n"

    def _page(self) -> str:
        return status_page.page(
            tablet_status(self._database),
            self._database.engine.maintenance_status(),
            self._database.name,
        )
