"""A lone prepared statement: Bind, [Describe], Execute and Sync answered in one step.

A driver runs a prepared statement outside a pipeline as four messages in one
packet: Bind into the unnamed portal, Describe of that portal (psycopg; pgjdbc
leaves it out), Execute of all rows, Sync.  ``LoneRun`` recognises that run by
its bytes and answers it right where the bytes arrive, without the message
loop's layers: no message objects, no portal registered (Sync would drop it
at once), no coroutine unless something must wait.  The Bind's parameters are
read with the decoders of a ``BindShape``, found by the Bind's bytes before its
values (statement name, format codes, value count), so a prepared statement's
Bind costs a dict lookup and its values' decoding.

Only a statement that runs on the event loop (``Session.runs_inline``) with no
portal open is taken; anything else, and anything unusual about the Bind (a
parameter that does not decode, a changed statement), is left to the message
loop untouched, which answers it as always.  A commit at the Sync goes to the
statement thread with the stream held (``Connection._commit_held``), and its
end answers ReadyForQuery and what arrived meanwhile on the event loop.  What
else has to wait after the statement ran (the rest of a read that stopped
being short, an error's rollback, a slow client) goes on as a coroutine the
connection's task carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from server import codec, params
from server import messages as m
from server.client_stream import ClientStream
from server.errors import as_db_error, error_response
from server.portal import Portal, PortalRegistry, resolve_formats
from server.statement_thread import Runs
from server.steps import Step
from sql.common.result import MustWait, PreparedStatement, ResultColumn
from storage.errors import DbError

if TYPE_CHECKING:
    from sql.session.ready_state import ReadyState
    from sql.session.session import Session

_BIND = b"B"[0]
_EXECUTE_SYNC = codec.encode_frontend(m.Execute("", 0)) + codec.encode_frontend(m.Sync())
_DESCRIBE = codec.encode_frontend(m.Describe("P", ""))
_DESCRIBE_EXECUTE_SYNC = _DESCRIBE + _EXECUTE_SYNC
_SYNC_BYTES = len(codec.encode_frontend(m.Sync()))
_SHAPES_KEPT = 64
"""Bind shapes a connection keeps (a prepared statement and format codes each)."""

Answering = Coroutine[Any, Any, bool]


@dataclass(slots=True)
class BindShape:
    """What every Bind of one prepared statement with one set of format codes shares: its
    bytes around the values, the statement, and the values' decoders."""

    name: str
    statement: PreparedStatement
    columns: tuple[ResultColumn, ...] | None
    settings_version: int
    """The session settings' version its decoders were chosen at (DateStyle, TimeZone)."""
    decoders: tuple[Callable[[bytes], object], ...]
    tail: bytes
    result_formats: tuple[int, ...]
    described: bytes = b""
    """Its portals' RowDescription (or NoData), once made."""


class LoneRun:
    """Answers a lone Bind/[Describe]/Execute/Sync for the ``Connection`` it is a base of."""

    _session: Session | None
    _registry: PortalRegistry
    _decoder: codec.FrontendDecoder
    _out: bytearray
    _skip_until_sync: bool
    _is_idle: bool
    _lone_shapes: dict[bytes, BindShape]
    _reading_version: int
    _stream: ClientStream
    _thread: Runs

    if TYPE_CHECKING:

        def _answer_buffered(self) -> Answering: ...
        def _advance_portal(
            self, portal: Portal, max_rows: int, sent: int, inline: bool = False
        ) -> Step: ...
        def _describe_bytes(self, portal: Portal) -> bytes: ...
        def _date_reading(self) -> tuple[str, str]: ...
        def _begin_statement(self) -> None: ...
        def _end_statement(self) -> None: ...
        def _abandon_statement(self) -> None: ...
        def _answer_arrived(self, waiter: asyncio.Future[Any], is_slow: bool = False) -> bool: ...
        def send(self, message: m.BackendMessage) -> None: ...
        def _ready_now(self, status: str) -> bool: ...

        def _ready_from(self, ready: ReadyState) -> bool: ...
        def _drain_and_answer(self) -> Answering: ...
        def _execute_and_answer(self, portal: Portal, step: Step) -> Answering: ...

    def _answer_lone(self) -> Answering | None:
        """Answer the lone run at the head of the decoder, if it is one; None when it was
        answered whole (or its commit is under way, the stream held), else the answering
        that remains (the message loop's, for anything that is not a lone run)."""
        session = self._session
        if session is None or self._skip_until_sync or self._registry.portals:
            return self._answer_buffered()
        decoder = self._decoder
        buffer, start = decoder.unread()
        if len(buffer) - start < 5 or buffer[start] != _BIND or decoder.in_startup:
            return self._answer_buffered()
        bind_end = start + 1 + int.from_bytes(buffer[start + 1 : start + 5], "big", signed=True)
        if buffer.startswith(_DESCRIBE_EXECUTE_SYNC, bind_end):
            is_described = True
            run_end = bind_end + len(_DESCRIBE_EXECUTE_SYNC)
        elif buffer.startswith(_EXECUTE_SYNC, bind_end):
            is_described = False
            run_end = bind_end + len(_EXECUTE_SYNC)
        else:
            return self._answer_buffered()
        if bind_end < start + 9 or bind_end - start - 1 > decoder.max_message_size_bytes:
            return self._answer_buffered()
        found = self._lone_portal(bytes(buffer[start + 5 : bind_end]), session)
        if found is None:
            return self._answer_buffered()
        portal, shape = found
        described = b""
        if is_described:
            described = shape.described or self._described(shape, portal)
        self._is_idle = False
        self._begin_statement()
        try:
            step = self._advance_portal(portal, 0, 0, inline=True)
        except MustWait:
            self._abandon_statement()  # did nothing: the message loop runs it on the thread
            return self._answer_buffered()
        self._out += _BIND_COMPLETE
        self._out += described
        if step.state != "done" or step.error is not None:
            decoder.skip(run_end - _SYNC_BYTES - start)  # the message loop takes the Sync
            self._registry.add_portal(portal)
            return self._execute_and_answer(portal, step)
        decoder.skip(run_end - start)
        self._out += step.output
        portal.is_complete = True
        self._end_statement()
        try:
            ready = session.sync_ready()
        except Exception as exc:
            self.send(error_response(as_db_error(exc)))
            ready = session.ready_for_query()
        if ready is None:
            self._commit_held()
            return None
        if self._ready_from(ready):
            return self._drain_and_answer()
        return None

    def _commit_held(self) -> None:
        """A lone run's Sync that commits: on the statement thread, with what arrives
        meanwhile held in the stream; ``_committed`` answers ReadyForQuery and the rest on
        the event loop, without a turn of the connection's task."""
        session = self._session
        assert session is not None, "queries run only after startup"
        loop = asyncio.get_running_loop()
        committed = self._committed

        def commit() -> None:
            try:
                session.sync()
            except BaseException as exc:
                failure: BaseException | None = exc
            else:
                failure = None
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
                loop.call_soon_threadsafe(committed, failure)

        self._stream.hold()
        self._thread.submit(commit)

    def _committed(self, failure: BaseException | None) -> None:
        """``_commit_held``'s commit is done: its ReadyForQuery (after its error, as ``_sync``
        reports one), then what arrived meanwhile."""
        session = self._session
        if session is None:
            return  # the connection ended meanwhile
        if failure is not None:
            if not isinstance(failure, Exception):
                self._stream.close()  # as an uncaught one ends the connection's task
                return
            self.send(error_response(as_db_error(failure)))
        is_slow = self._ready_now(session.transaction_status)
        self._stream.release(functools.partial(self._answer_arrived, is_slow=is_slow))

    def _described(self, shape: BindShape, portal: Portal) -> bytes:
        """The RowDescription (or NoData) of every portal of ``shape``: its statement's
        columns (by identity) in its result formats, before the statement runs."""
        shape.described = self._describe_bytes(portal)
        return shape.described

    def _lone_portal(self, body: bytes, session: Session) -> tuple[Portal, BindShape] | None:
        """The unnamed portal the Bind ``body`` makes, if it is an ordinary one of a statement
        that runs on the event loop; None to leave it to the message loop."""
        if body[0] != 0:
            return None  # a named portal
        cut = body.find(b"\x00", 1)
        if cut < 0 or cut + 3 > len(body):
            return None
        format_count = int.from_bytes(body[cut + 1 : cut + 3], "big", signed=True)
        head_end = cut + 5 + 2 * format_count
        if format_count < 0 or head_end > len(body):
            return None
        head = body[:head_end]
        shape = self._lone_shapes.get(head)
        statements = self._registry.statements
        if (
            shape is None
            or statements.get(shape.name) is not shape.statement
            or shape.statement.columns is not shape.columns
            or shape.settings_version != session.settings.version
            or not body.endswith(shape.tail)
        ):
            shape = self._new_shape(body, head)
            if shape is None:
                return None
        raws = codec.split_values(body, head_end, len(body) - len(shape.tail), len(shape.decoders))
        if raws is None:
            return None
        try:
            values = [
                None if raw is None else decode(raw)
                for raw, decode in zip(raws, shape.decoders, strict=True)
            ]
        except Exception:
            return None  # the message loop reports it
        statement = shape.statement
        if not session.runs_inline(statement, values):
            return None
        return Portal("", statement, values, shape.result_formats), shape

    def _new_shape(self, body: bytes, head: bytes) -> BindShape | None:
        """The shape of a Bind not seen before (or whose statement or settings changed); None
        when the message loop is to take it."""
        try:
            bind = codec.decode_frontend(b"B", body)
        except DbError:
            return None
        assert isinstance(bind, m.Bind), "a B message is a Bind"
        statement = self._registry.statements.get(bind.statement)
        if statement is None or len(bind.params) != len(statement.param_oids):
            return None
        expected_head, tail = codec.bind_frame_ends(bind)
        if expected_head != head or not body.endswith(tail):
            return None
        columns = statement.columns
        date_reading = self._date_reading()
        try:
            formats = resolve_formats(bind.param_formats, len(bind.params), "parameter")
            decoders = params.decoders(statement.param_oids, formats, *date_reading)
            result_formats = (
                resolve_formats(bind.result_formats, len(columns), "result")
                if columns is not None
                else tuple(bind.result_formats[:1])
            )
        except DbError:
            return None
        if len(self._lone_shapes) >= _SHAPES_KEPT:
            self._lone_shapes.clear()
        shape = BindShape(
            bind.statement,
            statement,
            columns,
            self._reading_version,
            decoders,
            tail,
            result_formats,
        )
        self._lone_shapes[head] = shape
        return shape


_BIND_COMPLETE = codec.encode(m.BindComplete())
