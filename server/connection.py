"""One client connection: startup, authentication, then the simple and extended query protocols.

The extended protocol's messages are answered by ``extended_query.ExtendedQuery``,
the base of ``Connection``; this module keeps the session loop around them.

Lifecycle: the start-up phase (``startup.StartupHandshake``: SSLRequest and
GSSENCRequest, a CancelRequest handed to the server, the StartupMessage and
authentication) runs first; then the database opens a session and
ParameterStatus, BackendKeyData and ReadyForQuery follow.  Then messages are answered in order as they arrive,
without waiting for Sync (pipelining).  After an error in an extended-protocol
message everything up to the next Sync is discarded; Sync answers
ReadyForQuery with the session's transaction status.

Every call into the session runs on the connection's own statement thread,
and so does pulling and encoding result rows: one worker step runs a
statement and encodes its answer (RowDescription, DataRows, CommandComplete
or PortalSuspended) until it is done or ``write_buffer_bytes`` of output have
piled up, so a small query costs one thread hop and a large one streams with
bounded memory.  The thread is the connection's alone (PostgreSQL's backend
process per connection): a statement waiting on a row lock, on group commit
or on COPY data holds nothing another session needs, however many wait.
The one exception is an Execute of a short read (``Session.runs_inline``: a
few rows by key, which never waits): it runs on the event loop, because a
thread hop would cost more than the statement; a read that may stop being short
(a direct read through an index) says where in its Result's ``ReadPause``, and
the rest of it goes on the thread.  So does a write of one row by key
(``Session.runs_inline``) unless it finds the row locked by another
transaction: then it has done nothing (MustWait) and runs again on the
thread, which waits.  Otherwise the event loop only moves bytes.  Output is coalesced and written at sync
points (ReadyForQuery, Flush) or when the buffer is full, with ``drain()``
for backpressure.

Between commands the connection *parks* on its ``ClientStream``: commands that
arrive are answered right in ``data_received`` (``_answer_arrived``), so a short
statement costs one event-loop turn and no task wake-up; the first thing that
has to wait (a thread hop, a slow client) hands the rest of that answering to
the connection's task (``_Resumed``), which carries on exactly where it stopped.

A CancelRequest reaches ``cancel_statement`` through the server's registry
and calls ``Session.cancel()`` if a Query or Execute is in progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import socket
import ssl
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, TypeVar

from server import answers, codec, copy_protocol, metrics, timeouts
from server import messages as m
from server.auth import Authenticator
from server.client_stream import ClientStream
from server.config import Config
from server.errors import as_db_error, error_response, is_fatal
from server.extended_query import ExtendedQuery, close_portals_and_session
from server.lone_run import LoneRun
from server.portal import Portal, PortalRegistry, ResultStream
from server.startup import StartupHandshake
from server.statement_thread import Runs, StatementThread
from server.steps import QueryProgress, Step
from sql.execution.backends import ClientLink
from storage.errors import (
    AdminShutdown,
    DbError,
    FeatureNotSupported,
    ProtocolViolation,
)

if TYPE_CHECKING:
    from sql.session.database import Database
    from sql.session.ready_state import ReadyState
    from sql.session.session import Session

log = logging.getLogger(__name__)

T = TypeVar("T")

_EXTENDED_TYPES = (b"P", b"B", b"D", b"E", b"C", b"H")
_READY_FOR_QUERY = {status: codec.encode(m.ReadyForQuery(status)) for status in "ITE"}
"""ReadyForQuery's three possible messages, framed once."""


class _Closed(Exception):
    """The connection ends: the client left, sent Terminate, or a FATAL error was reported."""


def _admin_shutdown() -> AdminShutdown:
    return AdminShutdown("terminating connection due to administrator command")


class _Resumed:
    """The rest of a coroutine that ran, outside any task, up to its first wait (``pending``):
    awaiting this carries it on in the awaiting task, as ``await`` would have."""

    __slots__ = ("_coroutine", "_pending")

    def __init__(self, coroutine: Coroutine[Any, Any, bool], pending: Any) -> None:
        self._coroutine = coroutine
        self._pending = pending

    def __await__(self) -> Generator[Any, Any, bool]:
        coroutine, pending = self._coroutine, self._pending
        while True:
            try:
                sent = yield pending
            except BaseException as exc:  # a cancel, thrown into the task: pass it on
                try:
                    pending = coroutine.throw(exc)
                except StopIteration as stop:
                    return bool(stop.value)
            else:
                try:
                    pending = coroutine.send(sent)
                except StopIteration as stop:
                    return bool(stop.value)


class Connection(LoneRun, ExtendedQuery):
    """Serves one client until it disconnects; its statements run on its own thread."""

    def __init__(
        self,
        stream: ClientStream,
        *,
        database: Database,
        config: Config,
        authenticator: Authenticator,
        process_id: int,
        secret_key: int,
        on_cancel_request: Callable[[int, int], None],
        tls_context: ssl.SSLContext | None = None,
        executor: Runs | None = None,
        admit: Callable[[bool], None] | None = None,
    ) -> None:
        super().__init__()
        self.process_id = process_id
        self.secret_key = secret_key
        self._stream = stream
        self._database = database
        self._config = config
        self._thread: Runs = executor or StatementThread(f"nyala-backend-{process_id}")
        """The connection's statement thread, started at its first statement (tests may
        pass an executor that runs calls in place)."""
        self._authenticator = authenticator
        self._admit = admit
        """Takes a connection slot for a session, given whether its role is a superuser;
        raises TooManyConnections when none is left (the server's ``max_connections``)."""
        self._decoder = stream.decoder
        self._out = bytearray()
        self._session: Session | None = None
        self._registry = PortalRegistry()
        self._lone_shapes = {}
        self._reported: dict[str, str] = {}
        self._reported_from: dict[str, str] | None = None
        """The session's dict ``_reported`` was last compared with (``_send_parameter_changes``)."""
        self._skip_until_sync = False
        self._is_running_statement = False
        self._statement_started = 0.0
        self._statement_kind = ""
        self._uncounted_kind = ""
        """The kind of the running statement's CommandComplete, counted at its end."""
        self._timeout_ms = 0
        self._timeout_version = -1
        """The settings version ``_timeout_ms`` (statement_timeout) was read at."""
        self._is_idle = False
        self._idle_status = "I"
        """The status the last ReadyForQuery reported (while ``_is_idle``)."""
        self.is_cancelled = False
        self._timer = timeouts.StatementTimer(self.cancel_statement)
        self._is_reading = False
        self._is_shutting_down = False
        self._is_terminating = False
        self._task: asyncio.Task[Any] | None = None
        self.peer: object = stream.get_extra_info("peername")
        self._handshake = StartupHandshake(
            self,
            stream,
            self._decoder,
            config=config,
            authenticator=authenticator,
            tls_context=tls_context,
            process_id=process_id,
            on_cancel_request=on_cancel_request,
        )

    # -- lifecycle --------------------------------------------------------------------------

    async def run(self) -> None:
        """Serve the client; returns when the connection is closed."""
        self._task = asyncio.current_task()
        sock = self._stream.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            if await self._startup():
                await self._serve()
        except _Closed:
            pass
        except ConnectionError as exc:
            log.debug("connection %d lost: %s", self.process_id, exc)
        finally:
            await self._cleanup()

    async def _startup(self) -> bool:
        """Run the start-up phase and open the session; False if the connection just ends."""
        try:
            startup = await self._handshake.run()
            if startup is None:
                return False
            self._session = await self._run(
                self._database.session,
                startup.user,
                startup.database,
                startup.settings,
                self._client_link(),
            )
            # Parse and SQL PREPARE name statements in one namespace, as in PostgreSQL.
            self._registry.statements = self._session.prepared_statements
            if self._admit is not None:
                self._admit(self._session.settings.get("is_superuser") == "on")
            log.debug(
                "connection %d: user %r, database %r",
                self.process_id,
                startup.user,
                startup.database,
            )
            self._session.process_id = self.process_id
            loop = asyncio.get_running_loop()

            def wake() -> None:
                loop.call_soon_threadsafe(self._push_notifications)

            self._session.on_notification(wake)
            self._send_parameter_changes()
            self.send(m.BackendKeyData(self.process_id, self.secret_key))
            self.send(m.ReadyForQuery(self._session.transaction_status))
            await self.flush()
        except DbError as exc:
            await self._fatal(exc)
        return True

    def _client_link(self) -> ClientLink:
        """How pg_stat_activity names this client, and how another session's
        pg_cancel_backend or pg_terminate_backend (on its own thread) reaches it."""
        loop = asyncio.get_running_loop()
        peer = self.peer
        is_tcp = isinstance(peer, tuple) and len(peer) >= 2
        return ClientLink(
            self.process_id,
            str(peer[0]) if is_tcp else None,  # type: ignore[index]  # a TCP peer is a tuple
            int(peer[1]) if is_tcp else -1,  # type: ignore[index]
            functools.partial(loop.call_soon_threadsafe, self.cancel_statement),
            functools.partial(loop.call_soon_threadsafe, self.terminate),
        )

    def terminate(self) -> None:
        """pg_terminate_backend: end the connection with FATAL 57P01, cancelling its statement."""
        self._is_terminating = True
        self.cancel_statement()
        self.shutdown()

    def cancel_statement(self) -> None:
        """Cancel the running statement, if any (from a CancelRequest or shutdown)."""
        if self._is_running_statement and self._session is not None:
            self.is_cancelled = True
            self._session.cancel()

    def shutdown(self) -> None:
        """Ask the connection to end: at once if idle, after its statement if busy."""
        self._is_shutting_down = True
        if self._is_reading and self._task is not None:
            self._task.cancel()

    async def _cleanup(self) -> None:
        """Close the session (rolling back) on its thread, even if this task is cancelled."""
        portals = self._registry.clear()
        session, self._session = self._session, None
        try:
            if portals or session is not None:
                await asyncio.shield(self._run(close_portals_and_session, portals, session))
        except asyncio.CancelledError:
            self._stream.close()
            self._thread.shutdown(wait=False)
            raise
        except Exception:
            log.exception("closing the session of connection %d failed", self.process_id)
        self._thread.shutdown(wait=False)
        self._stream.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self._stream.wait_closed()
        log.debug("connection %d closed", self.process_id)

    # -- I/O --------------------------------------------------------------------------------

    def send(self, message: m.BackendMessage) -> None:
        if isinstance(message, m.CommandComplete):
            self._completed(message.tag)
        elif isinstance(message, m.ErrorResponse):
            metrics.statement_errors(message.get("C") or "").inc()
        self._out += codec.encode(message)

    def _completed(self, tag: str) -> None:
        """Count a finished statement by kind (for /metrics): the last of a running
        Query or Execute is counted by ``_end_statement`` with its latency, under one lock."""
        kind = metrics.statement_kind(tag)
        if not self._is_running_statement:
            metrics.TALLY.count(kind)
        elif self._uncounted_kind:
            metrics.TALLY.count(self._uncounted_kind)
        self._statement_kind = self._uncounted_kind = kind

    async def flush(self) -> None:
        if self._write_out():
            await self._stream.drain()

    def _write_out(self) -> bool:
        """Hand the queued output to the transport; True when the client is slow to read it
        (or left), so ``drain()`` must be awaited before more is queued."""
        stream = self._stream
        if self._out:
            stream.write(self._out)
            self._out = bytearray()
        return stream.is_slow()

    async def receive(self) -> m.FrontendMessage | None:
        """The next frontend message, or None at end of stream."""
        while True:
            message = self._decoder.next_message()
            if message is not None:
                return message
            if not await self._read_more():
                return None

    async def _read_more(self) -> bool:
        """Feed the decoder the next bytes the client sends; False at end of stream."""
        if self._is_shutting_down:
            raise AdminShutdown("terminating connection due to administrator command")
        self._is_reading = True
        try:
            return await self._stream.read_more()
        except asyncio.CancelledError:
            if not self._is_shutting_down:
                raise
            raise AdminShutdown("terminating connection due to administrator command") from None
        finally:
            self._is_reading = False

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` on the connection's statement thread: it may block on SQL.

        The thread answers with one ``call_soon_threadsafe`` into a plain asyncio future,
        not ``run_in_executor``'s chained futures (about 15 us less CPU per hop: every
        autocommit write's commit takes one)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def call() -> None:
            try:
                result = fn(*args)
            except BaseException as exc:
                answer: tuple[Callable[..., None], object] = (_fail, exc)
            else:
                answer = (_succeed, result)
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
                loop.call_soon_threadsafe(answer[0], future, answer[1])

        self._thread.submit(call)
        return await future

    async def _fatal(self, exc: BaseException) -> None:
        self.send(error_response(exc, severity="FATAL"))
        await self.flush()
        raise _Closed from None

    # -- message loop -----------------------------------------------------------------------

    async def _serve(self) -> None:
        """Answer commands until Terminate or the end of the stream."""
        self._handlers: dict[type[Any], Callable[[Any], Awaitable[None]]] = {
            m.Query: self._on_query,
            m.Parse: self._on_parse,
            m.Bind: self._on_bind,
            m.Describe: self._on_describe,
            m.Execute: self._on_execute,
            m.Close: self._on_close,
            m.Flush: self._on_flush,
        }
        while await self._answer_buffered():
            if not await self._await_command():
                return

    async def _answer_buffered(self) -> bool:
        """Answer every complete message in the decoder, in order; False once the connection
        is to end (Terminate), True when more input is needed."""
        handlers = self._handlers
        decoder = self._decoder
        while True:
            try:
                message = decoder.next_message()
            except DbError as exc:
                if is_fatal(exc):
                    await self._fatal(exc)
                if not self._skip_until_sync:
                    is_extended = self._decoder.last_type_code in _EXTENDED_TYPES
                    await self._on_error(exc, is_extended=is_extended)
                continue
            if message is None:
                return True
            self._is_idle = False
            handler = handlers.get(type(message))
            if handler is None:
                if isinstance(message, m.Terminate):
                    return False
                if isinstance(message, m.Sync):
                    self._skip_until_sync = False
                    await self._sync()
                elif not self._skip_until_sync:
                    await self._on_other(message)
                continue
            if self._skip_until_sync:
                continue
            try:
                await handler(message)
            except _Closed:
                raise
            except ConnectionError:
                return False  # the client left mid-statement (during COPY FROM STDIN, say)
            except Exception as exc:
                if is_fatal(exc):
                    await self._fatal(exc)
                await self._on_error(exc, is_extended=not isinstance(message, m.Query))

    async def _await_command(self) -> bool:
        """Wait for the next command; False at the end of the stream.

        Parked without a timeout, the commands that arrive are answered as they arrive
        (``_answer_arrived``) and this returns only when one of them has to wait.  Idle in a
        transaction block too long, the connection ends (25P03)."""
        if self._is_shutting_down:
            await self._fatal(_admin_shutdown())
        timeout_ms = self._idle_timeout_ms()
        self._is_reading = True
        try:
            if timeout_ms > 0:
                return await asyncio.wait_for(self._stream.read_more(), timeout_ms / 1000)
            outcome = await self._stream.park(self._answer_arrived)
        except asyncio.CancelledError:
            if not self._is_shutting_down:
                raise
            self._is_reading = False
            await self._fatal(_admin_shutdown())
            raise
        except TimeoutError:
            self._is_reading = False
            log.info("connection %d: idle-in-transaction timeout", self.process_id)
            await self._fatal(timeouts.idle_in_transaction_error())
            raise
        finally:
            self._is_reading = False
        if isinstance(outcome, _Resumed):
            return await outcome
        return bool(outcome)

    def _idle_timeout_ms(self) -> int:
        """idle_in_transaction_session_timeout when idle in a transaction block, else 0."""
        session = self._session
        if not self._is_idle or session is None or session.transaction_status == "I":
            return 0
        return timeouts.milliseconds(session.settings.get("idle_in_transaction_session_timeout"))

    def _answer_arrived(self, waiter: asyncio.Future[Any], is_slow: bool = False) -> bool:
        """Answer the commands that arrived while parked, here in ``data_received`` (after
        waiting for the client first, ``is_slow``); True to stay parked.  Lone runs of a
        prepared statement are answered in one step (``LoneRun``); what has to wait (a thread hop, a slow client) is handed to the
        connection's task through ``waiter`` as a ``_Resumed``."""
        self._is_reading = False
        answering = self._drain_and_answer() if is_slow else self._answer_lone()
        while answering is None:
            if self._stream.is_held:
                return True  # a commit is under way: its end answers what follows
            if not self._decoder.buffered_bytes():
                return self._stay_parked(waiter, True)
            answering = self._answer_lone()
        try:
            pending = answering.send(None)
        except StopIteration as stop:
            return self._stay_parked(waiter, stop.value)
        except Exception as exc:
            waiter.set_exception(exc)
            return False
        waiter.set_result(_Resumed(answering, pending))
        return False

    def _stay_parked(self, waiter: asyncio.Future[Any], more: bool) -> bool:
        """After answering what arrived: stay parked (True), unless the connection is to end
        (``more`` False), shut down or time out idle, which its task does."""
        if (
            more
            and not self._is_shutting_down
            and (not self._is_idle or self._idle_status == "I" or self._idle_timeout_ms() <= 0)
        ):
            self._is_reading = True
            return True
        waiter.set_result(more)
        return False

    async def _drain_and_answer(self) -> bool:
        """Wait for a slow client after a lone run's ReadyForQuery, then the messages after it."""
        await self._stream.drain()
        return await self._answer_buffered()

    async def _execute_and_answer(self, portal: Portal, step: Step) -> bool:
        """The rest of a lone run's Execute that did not finish on the event loop (its error,
        or rows that stopped being short), as the message loop would go on; then its Sync."""
        try:
            try:
                await self._execute_steps(portal, 0, False, step)
            finally:
                self._end_statement()
        except _Closed:
            raise
        except ConnectionError:
            return False
        except Exception as exc:
            if is_fatal(exc):
                await self._fatal(exc)
            await self._on_error(exc, is_extended=True)
        return await self._answer_buffered()

    def _begin_statement(self) -> None:
        """Mark a statement as running (cancel may reach it) and arm statement_timeout."""
        assert self._session is not None, "statements run only after startup"
        self._is_running_statement = True
        self.is_cancelled = False
        self._statement_started = time.perf_counter()
        self._statement_kind = self._uncounted_kind = ""
        settings = self._session.settings
        if settings.version != self._timeout_version:
            self._timeout_ms = timeouts.milliseconds(settings.get("statement_timeout"))
            self._timeout_version = settings.version
        timer = self._timer
        if self._timeout_ms or timer.handle is not None:
            timer.start(self._timeout_ms)
        else:
            timer.has_fired = False

    def _reword(self, exc: BaseException) -> BaseException:
        """The error a statement ended with, as the client hears it: the statement of a
        terminated connection ends it (57P01), a statement_timeout names itself."""
        if self._is_terminating:
            return AdminShutdown("terminating connection due to administrator command")
        return self._timer.reword(exc)

    def _copy_cancelled(self) -> bool:
        return self.is_cancelled

    def _abandon_statement(self) -> None:
        """A statement that did nothing and runs again (``MustWait``): not counted."""
        self._timer.stop()
        self._is_running_statement = False
        self._uncounted_kind = ""

    def _end_statement(self) -> None:
        """The statement's timer stopped, its latency observed and its last CommandComplete
        counted (one lock for both)."""
        if self._timer.handle is not None:
            self._timer.stop()
        self._is_running_statement = False
        kind = self._statement_kind or "OTHER"
        uncounted = self._uncounted_kind
        if uncounted:
            self._uncounted_kind = ""
            if uncounted != kind:
                metrics.TALLY.count(uncounted)
        metrics.TALLY.observe(
            kind, time.perf_counter() - self._statement_started, uncounted == kind
        )

    async def _on_error(self, exc: BaseException, is_extended: bool) -> None:
        """Report an error; skip to Sync in the extended protocol, else say ReadyForQuery."""
        if self._is_terminating:
            await self._fatal(AdminShutdown("terminating connection due to administrator command"))
        self.send(error_response(exc))
        if self._session is not None:
            # An error found here (a bad parameter, a missing portal) aborts the transaction too.
            await self._run(self._session.fail_statement)
        if is_extended:
            self._skip_until_sync = True
        else:
            await self._ready_for_query()

    async def _on_other(self, message: m.FrontendMessage) -> None:
        if isinstance(message, (m.CopyData, m.CopyDone, m.CopyFail)):
            return  # outside COPY these are ignored, as PostgreSQL does
        if isinstance(message, m.UnknownMessage) and message.type_code == b"F":
            error: DbError = FeatureNotSupported("function call messages are not supported")
        else:
            code = (
                message.type_code
                if isinstance(message, m.UnknownMessage)
                else _message_type(message)
            )
            error = ProtocolViolation(f"invalid frontend message type {code[0]}")
        await self._on_error(error, is_extended=False)

    async def _sync(self) -> None:
        """Sync: end the implicit transaction of the messages before it, then ReadyForQuery."""
        assert self._session is not None, "queries run only after startup"
        try:
            if self._session.sync_writes:
                await self._run(self._session.sync)
            else:
                self._session.sync()  # nothing to make durable: no worker round trip
        except Exception as exc:
            self.send(error_response(as_db_error(exc)))
        await self._ready_for_query()

    async def _ready_for_query(self) -> None:
        session = self._session
        assert session is not None, "queries run only after startup"
        status = session.transaction_status
        if self._registry.portals:
            ended = self._registry.end_of_transaction(status)
            if ended and any(p.is_streaming for p in ended):
                await self._close_portals(ended)
        if self._ready_now(status):
            await self._stream.drain()  # wait for a slow client (or hear that it left)

    def _ready_now(self, status: str) -> bool:
        """ReadyForQuery in transaction ``status``, once no portal is left to close, written
        out; True when the client is slow to read it (or left): ``drain`` must be awaited."""
        session = self._session
        assert session is not None, "queries run only after startup"
        ready = session.ready_for_query()
        assert ready.status == status, "the status ReadyForQuery reports is the session's"
        return self._ready_from(ready)

    def _ready_from(self, ready: ReadyState) -> bool:
        """``_ready_now`` with what the session answered (``Session.ready_for_query``, which
        has also marked it idle)."""
        if ready.parameters is not self._reported_from:
            self._report_parameters(ready.parameters)
        for n in ready.notifications:
            self.send(m.NotificationResponse(n.process_id, n.channel, n.payload))
        self._out += _READY_FOR_QUERY[ready.status]
        self._is_idle = True
        self._idle_status = ready.status
        return self._write_out()

    def _send_notifications(self) -> None:
        assert self._session is not None, "notifications come once a session exists"
        for n in self._session.take_notifications():
            self.send(m.NotificationResponse(n.process_id, n.channel, n.payload))

    def _push_notifications(self) -> None:
        """A notification arrived: an idle connection outside a transaction gets it now;
        otherwise it goes before the next ReadyForQuery that ends a transaction."""
        session = self._session
        if session is None or not self._is_reading or self._is_running_statement:
            return
        if session.transaction_status != "I" or self._out:
            return
        self._send_notifications()
        if self._out:
            self._stream.write(self._out)
            self._out = bytearray()

    def _send_parameter_changes(self) -> None:
        assert self._session is not None, "parameters are reported once a session exists"
        self._report_parameters(self._session.reported_parameters())

    def _report_parameters(self, current: dict[str, str]) -> None:
        if current is self._reported_from:
            return  # the settings' own dict, made again only when a value changed
        self._reported_from = current
        if current == self._reported:
            return
        for name, value in current.items():
            if self._reported.get(name) != value:
                self.send(m.ParameterStatus(name, value))
        self._reported = dict(current)

    async def _on_flush(self, message: m.Flush) -> None:
        await self.flush()

    # -- simple query -----------------------------------------------------------------------

    async def _on_query(self, message: m.Query) -> None:
        assert self._session is not None, "queries run only after startup"
        self._registry.drop_unnamed_statement()
        await self._close_portals(self._registry.close_portal(""))
        progress = QueryProgress(message.query)
        self._begin_statement()
        is_finished = False
        try:
            while True:
                step = await self._run(self._advance_query, progress)
                self._out += step.output
                if step.error is not None:
                    error = self._reword(step.error)
                    if is_fatal(error):
                        await self._fatal(error)
                    self.send(error_response(error))
                    break
                if step.state == "done":
                    is_finished = True
                    break
                await self.flush()
                if step.state == "copy_in":
                    sink, progress.copy_in = progress.copy_in, None
                    try:
                        tag = await copy_protocol.copy_in(
                            sink, self.receive, self._run, self._copy_cancelled
                        )
                    except DbError as exc:
                        error = self._reword(exc)
                        if is_fatal(error):
                            await self._fatal(error)
                        self.send(error_response(error))
                        break
                    self.send(m.CommandComplete(tag))
        finally:
            self._end_statement()
            if not is_finished:
                await self._run(progress.close)
        await self._ready_for_query()

    def _advance_query(self, progress: QueryProgress) -> Step:
        """Run statements and encode their answers until done or the buffer fills (worker)."""
        assert self._session is not None, "queries run only after startup"
        out = bytearray()
        try:
            if progress.results is None:
                progress.results = self._session.execute(progress.query)
            while len(out) < self._config.write_buffer_bytes:
                if progress.stream is None:
                    result = next(progress.results, None)
                    if result is None:
                        return Step(out, "done")
                    self._deallocate(result)
                    out += answers.notices(result)
                    if result.copy_in is not None:
                        out += codec.encode(copy_protocol.copy_in_response(result.copy_in))
                        progress.copy_in = result.copy_in
                        return Step(out, "copy_in")
                    if result.is_empty_query or result.columns is None:
                        out += answers.no_rows_answer(result)
                        if not result.is_empty_query:
                            self._completed(result.command_tag or "")
                        continue
                    progress.sent = 0
                    if result.copy_out is not None:
                        progress.stream = copy_protocol.copy_out_stream(result)
                        out += progress.stream.response()
                    else:
                        progress.stream = ResultStream(result, ())
                        out += codec.encode(
                            answers.row_description(result.columns, progress.stream.formats)
                        )
                progress.sent, state = self._pump_rows(progress.stream, progress.sent, 0, out)
                if state == "done":
                    progress.stream = None
            return Step(out, "more")
        except Exception as exc:
            return Step(out, "error", exc)


def _succeed(future: asyncio.Future[T], result: T) -> None:
    if not future.cancelled():
        future.set_result(result)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.cancelled():
        future.set_exception(exc)


def _message_type(message: m.FrontendMessage) -> bytes:
    """The type byte of a typed frontend message (b"?" for the untyped startup packets)."""
    code: bytes = getattr(message, "TYPE", b"?")
    return code
