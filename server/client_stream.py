"""One client's socket as an asyncio protocol: bytes go straight into the frontend decoder.

``ClientStream`` replaces asyncio's StreamReader and StreamWriter pair for a
connection.  Received bytes are fed to the connection's ``FrontendDecoder`` in
``data_received`` (no StreamReader buffer to copy them out of again), output
goes to ``transport.write``, and ``drain`` waits while the transport's buffer
is above its high-water mark (``pause_writing``), as StreamWriter's does.

A connection waiting for its next command *parks* (``park``): the bytes that
arrive are then handed to its callback inside ``data_received``, which
answers every complete message at once without waking the connection's task
(a prepared statement's Bind/Execute/Sync costs one event-loop turn, not
two).  A connection reading in the middle of a statement (COPY data, the rest
of a pipelined run, the start-up packets) waits with ``read_more``.

Reading is paused while more than ``READ_PAUSE_BYTES`` wait in the decoder
(a client that sends faster than statements run, or a large COPY), and
resumed once the connection asks for more.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from typing import Any

from server.codec import FrontendDecoder

READ_PAUSE_BYTES = 256 * 1024
"""Buffered client bytes past which reading the socket pauses (StreamReader's 2 x 64 KiB
limit, with room for a pipelined run of Binds)."""


class ClientStream(asyncio.Protocol):
    """A client connection's transport, with its bytes decoded as they arrive."""

    def __init__(
        self,
        max_message_size_bytes: int,
        on_connected: Callable[[ClientStream], None] | None = None,
    ) -> None:
        self.decoder = FrontendDecoder(max_message_size_bytes)
        self.transport: asyncio.Transport | None = None
        self._on_connected = on_connected
        self._waiter: asyncio.Future[bool] | None = None
        self._parked: Callable[[asyncio.Future[Any]], bool] | None = None
        self._drain_waiter: asyncio.Future[None] | None = None
        self._closed: asyncio.Future[None] | None = None
        self._is_write_paused = False
        self._is_read_paused = False
        self._is_tls = False
        self.at_eof = False
        self.is_held = False
        self._lost: BaseException | None = None

    # -- asyncio.Protocol -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport), "clients connect over a stream"
        self.transport = transport
        if self._on_connected is not None:
            self._on_connected(self)

    def data_received(self, data: bytes) -> None:
        decoder = self.decoder
        decoder.feed(data)
        if decoder.buffered_bytes() > READ_PAUSE_BYTES:
            self._pause_reading()
        if not self.is_held:
            self._answer_parked(self._parked)

    def _answer_parked(self, parked: Callable[[asyncio.Future[Any]], bool] | None) -> None:
        """Hand what is buffered to the parked connection's ``parked``, or wake its task."""
        waiter = self._waiter
        if waiter is None:
            return
        if parked is not None and not waiter.done() and parked(waiter):
            self._resume_reading()  # answered every complete message, and waits again
            return
        if self._waiter is waiter:
            self._waiter = self._parked = None
        if not waiter.done():
            waiter.set_result(True)

    def hold(self) -> None:
        """Keep what arrives buffered, unanswered, until ``release`` (the parked connection
        finishes a command off its event loop: a commit on its thread)."""
        self.is_held = True

    def release(self, answer: Callable[[asyncio.Future[Any]], bool]) -> None:
        """End ``hold``: what arrived meanwhile is answered through ``answer``, as the parked
        callback would have answered it."""
        self.is_held = False
        self._answer_parked(answer)

    def eof_received(self) -> bool:
        """The client will send no more; the answers still being written go out (the
        transport stays open, except over TLS, which cannot half-close)."""
        self.at_eof = True
        self._wake(False)
        return not self._is_tls

    def connection_lost(self, exc: Exception | None) -> None:
        self.at_eof = True
        self._lost = exc or ConnectionResetError("connection lost")
        self._wake(False)
        drain = self._drain_waiter
        if drain is not None and not drain.done():
            drain.set_exception(self._lost)
        self._drain_waiter = None
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(None)

    def pause_writing(self) -> None:
        self._is_write_paused = True

    def resume_writing(self) -> None:
        self._is_write_paused = False
        drain = self._drain_waiter
        self._drain_waiter = None
        if drain is not None and not drain.done():
            drain.set_result(None)

    # -- reading ----------------------------------------------------------------------------

    async def read_more(self) -> bool:
        """Wait until more bytes are in the decoder; False at end of stream."""
        return bool(await self.park(None))

    async def park(self, on_input: Callable[[asyncio.Future[Any]], bool] | None) -> Any:
        """Wait for the next command, answering what arrives meanwhile through ``on_input``.

        ``on_input(waiter)`` runs inside ``data_received`` with the bytes already decoded-ready;
        it returns True to stay parked, or sets ``waiter``'s result (what this returns) to
        wake the caller.  Without it having done either, the caller wakes with True.  With no
        ``on_input`` it is a plain wait for more bytes (``read_more``).
        """
        if self.at_eof:
            return False
        self._resume_reading()
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiter, self._parked = waiter, on_input
        try:
            return await waiter
        finally:
            if self._waiter is waiter:
                self._waiter = self._parked = None

    def _wake(self, value: bool) -> None:
        waiter = self._waiter
        self._waiter = self._parked = None
        if waiter is not None and not waiter.done():
            waiter.set_result(value)

    def _pause_reading(self) -> None:
        if not self._is_read_paused and self.transport is not None:
            self._is_read_paused = True
            self.transport.pause_reading()

    def _resume_reading(self) -> None:
        if self._is_read_paused and self.transport is not None:
            self._is_read_paused = False
            self.transport.resume_reading()

    # -- writing ----------------------------------------------------------------------------

    def write(self, data: bytes | bytearray) -> None:
        assert self.transport is not None, "written only once connected"
        self.transport.write(data)

    def is_slow(self) -> bool:
        """Whether the client has not read what was written (or left): ``drain`` must wait."""
        transport = self.transport
        return (
            transport is None
            or transport.is_closing()
            or self._is_write_paused
            or self._lost is not None
        )

    async def drain(self) -> None:
        """Wait while the transport holds more output than its high-water mark."""
        if self._lost is not None:
            raise ConnectionResetError("connection lost") from self._lost
        transport = self.transport
        if transport is not None and transport.is_closing():
            await asyncio.sleep(0)  # let connection_lost run, as StreamWriter.drain does
            if self._lost is not None:
                raise ConnectionResetError("connection lost") from self._lost
        if not self._is_write_paused:
            return
        drain = self._drain_waiter
        if drain is None or drain.done():
            drain = self._drain_waiter = asyncio.get_running_loop().create_future()
        await drain

    async def start_tls(self, context: ssl.SSLContext) -> None:
        """Upgrade the connection to TLS (after SSLRequest was answered ``S``)."""
        assert self.transport is not None, "upgraded only once connected"
        loop = asyncio.get_running_loop()
        transport = await loop.start_tls(self.transport, self, context, server_side=True)
        assert transport is not None, "a server-side TLS upgrade has a transport"
        self.transport = transport
        self._is_tls = True

    # -- the rest of the transport ------------------------------------------------------------

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        if self.transport is None:
            return default
        return self.transport.get_extra_info(name, default)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    async def wait_closed(self) -> None:
        if self._lost is not None or self.transport is None:
            return
        if self._closed is None:
            self._closed = asyncio.get_running_loop().create_future()
        await self._closed
