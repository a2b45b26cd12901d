"""The extended query protocol: Parse, Bind, Describe, Execute and Close.

``ExtendedQuery`` is the part of a ``connection.Connection`` that answers these
messages; the connection keeps the session loop (reading, Sync, errors,
the simple query protocol) and the statement thread.  An Execute runs its
portal on that thread one worker step at a time (``_advance_portal``), or on
the event loop when the statement is a short read or a lone keyed write
(``Session.runs_inline``).  A pipelined run of Bind/Execute of one prepared
write is taken as one batch (``batches``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from server import answers, batches, codec, copy_protocol, params, timeouts
from server import messages as m
from server.config import Config
from server.portal import Portal, PortalRegistry, ResultStream, resolve_formats
from server.steps import Step
from sql.common import date_styles, time_zones
from sql.common.result import MustWait, PreparedStatement, Result, ResultColumn
from storage.errors import DbError, InvalidSqlStatementName, ProtocolViolation, QueryCanceled

if TYPE_CHECKING:
    from sql.session.session import Session

T = TypeVar("T")

_ROW_DESCRIPTIONS_KEPT = 64
"""Framed RowDescriptions a connection keeps (``ExtendedQuery._row_description``)."""
_BIND_SHAPES_KEPT = 64
"""Statements' parameter decoders a connection keeps (``ExtendedQuery._bind_values``)."""
_BIND_COMPLETE = codec.encode(m.BindComplete())
_NO_DATA = codec.encode(m.NoData())
_EXECUTE_ALL_MESSAGE = m.Execute("", 0)
_EXECUTE_ALL = codec.encode_frontend(_EXECUTE_ALL_MESSAGE)
_DESCRIBE_EXECUTE = codec.encode_frontend(m.Describe("P", "")) + _EXECUTE_ALL
_SYNC = codec.encode_frontend(m.Sync())


class _NoBatch(Exception):
    """The run of Bind/Execute messages is too short to batch."""


class ExtendedQuery:
    """Answers Parse/Bind/Describe/Execute/Close for the ``Connection`` it is a base of."""

    _session: Session | None
    _registry: PortalRegistry
    _config: Config
    _decoder: codec.FrontendDecoder
    _out: bytearray
    _statement_kind: str
    _timer: timeouts.StatementTimer
    _is_running_statement: bool
    is_cancelled: bool

    if TYPE_CHECKING:
        # The connection's side, which these messages use (``connection.Connection``).
        def send(self, message: m.BackendMessage) -> None: ...
        def _completed(self, tag: str) -> None: ...
        async def flush(self) -> None: ...
        async def receive(self) -> m.FrontendMessage | None: ...
        async def _read_more(self) -> bool: ...
        async def _sync(self) -> None: ...
        async def _run(self, fn: Callable[..., T], *args: Any) -> T: ...
        def _begin_statement(self) -> None: ...
        def _end_statement(self) -> None: ...
        def _reword(self, exc: BaseException) -> BaseException: ...
        def _copy_cancelled(self) -> bool: ...

    def __init__(self) -> None:
        self._unbatched_until = 0
        """The decoder's ``taken_bytes`` at the end of the last run found unfit for a batch:
        its rows are answered one by one, not framed as a run again from each of them."""
        self._row_descriptions: dict[
            tuple[int, tuple[int, ...]], tuple[tuple[ResultColumn, ...], bytes]
        ] = {}
        self._bind_shapes: dict[
            tuple[str, tuple[int, ...]],
            tuple[PreparedStatement, tuple[str, str], tuple[Callable[[bytes], object], ...]],
        ] = {}
        """Parameter decoders by statement name and Bind's format codes, with the statement
        and the date reading (``_date_reading``, a new object after any SET) they were chosen
        for: a re-Parse or a SET chooses again."""
        self._reading: tuple[str, str] = ("MDY", "UTC")
        self._reading_version = -1
        """The settings version ``_reading`` (``_date_reading``'s answer) was made at."""

    def _pump_rows(
        self, stream: ResultStream, sent: int, max_rows: int, out: bytearray, inline: bool = False
    ) -> tuple[int, str]:
        """Encode rows into ``out`` (worker thread, or ``inline`` on the event loop).

        Stops at the end of the rows (CommandComplete, state "done"), at
        ``max_rows`` (PortalSuspended, "suspended"), when ``out`` is full or
        (``inline``) where the rows stop being short ("more"); returns the rows
        sent so far in this Execute and the state.
        """
        chunk_rows = self._config.result_chunk_rows
        while True:
            want = chunk_rows if max_rows <= 0 else min(chunk_rows, max_rows - sent)
            fetched = stream.fetch_short(want) if inline else stream.fetch(want)
            out += fetched.data
            sent += fetched.rows
            if fetched.is_paused:
                return sent, "more"
            if fetched.is_exhausted:
                tag = stream.command_tag(sent)
                self._completed(tag)
                out += answers.command_complete(tag)
                return sent, "done"
            if 0 < max_rows <= sent:
                out += codec.encode(m.PortalSuspended())
                return sent, "suspended"
            if len(out) >= self._config.write_buffer_bytes:
                return sent, "more"

    async def _on_parse(self, message: m.Parse) -> None:
        assert self._session is not None, "queries run only after startup"
        self._registry.check_statement_name(message.statement)
        if not message.statement:
            self._registry.drop_unnamed_statement()
        statement = await self._run(self._session.prepare, message.query, message.param_oids)
        self._registry.add_statement(message.statement, statement)
        self.send(m.ParseComplete())

    async def _on_bind(self, message: m.Bind) -> None:
        if not message.portal:
            if self._may_batch(message) and await self._on_batch(message):
                return
            dropped = self._registry.close_portal("")
            if dropped:
                await self._close_portals(dropped)
            portal = self._bind(message)
            await self._run_bound(portal)
            return
        self._bind(message)

    def _bind(self, message: m.Bind) -> Portal:
        """Make and register the portal a Bind asks for; BindComplete."""
        statement = self._registry.statement(message.statement)
        values = self._bind_values(message, statement)
        columns = statement.columns
        result_formats = (
            resolve_formats(message.result_formats, len(columns), "result")
            if columns is not None
            else tuple(message.result_formats[:1])
        )
        portal = Portal(message.portal, statement, values, result_formats)
        self._registry.add_portal(portal)
        self._out += _BIND_COMPLETE
        return portal

    async def _run_bound(self, portal: Portal) -> None:
        """The Describe and Execute of all rows a driver sends right after its Bind into the
        unnamed portal, and the Sync after them, taken by their bytes (one comparison, no
        decoding or dispatch of three messages) and answered as ``_on_describe``,
        ``_on_execute`` and Sync answer them.  Any other message after the Bind is left for
        the message loop."""
        decoder = self._decoder
        if decoder.next_if(_DESCRIBE_EXECUTE):
            self._describe_portal(portal)
        elif not decoder.next_if(_EXECUTE_ALL):
            return
        await self._on_execute(_EXECUTE_ALL_MESSAGE)
        if decoder.next_if(_SYNC):
            await self._sync()

    def _may_batch(self, first: m.Bind) -> bool:
        """Whether ``first`` may begin a run for ``_on_batch`` (checked without a coroutine:
        a lone Bind, the usual one, fails it)."""
        decoder = self._decoder
        if batches.is_lone(decoder) or decoder.taken_bytes < self._unbatched_until:
            return False  # one row, or within a run already found unfit for a batch
        statement = self._registry.statements.get(first.statement)
        session = self._session
        return statement is not None and session is not None and session.batchable(statement)

    async def _on_batch(self, first: m.Bind) -> bool:
        """Apply a buffered run of Bind/Execute of one prepared INSERT, UPDATE or DELETE as one write
        (``batches``), given ``_may_batch``; False when ``first`` is to be answered on its own.
        The run's messages stay in the decoder until applied: when it is not, they are
        answered one by one."""
        session = self._session
        assert session is not None, "queries run only after startup"
        decoder = self._decoder
        statement = self._registry.statement(first.statement)
        taker = batches.RunTaker(first, decoder)
        taker.scan()
        if taker.waiting and taker.rows:
            await self._read_run(taker)
        kept, columns = taker.columns(taker.rows) if taker.rows else (0, [])
        batched = kept - 1  # the last row runs as usual: it leaves the portal behind
        try:
            if batched < batches.MIN_BATCH_ROWS:
                raise _NoBatch
            rows = batches.bind_rows(
                first, batched, [column[:batched] for column in columns],
                statement.param_oids, *self._date_reading(),
            )  # fmt: skip
        except (_NoBatch, DbError):
            self._unbatched_until = decoder.taken_bytes + taker.end(taker.rows)
            return False
        await self._close_portals(self._registry.close_portal(""))
        self._begin_statement()
        try:
            tags = await self._run(session.execute_batch, statement, rows)
        except Exception:
            # Canceled while applying the batch: the first row reports it, the rest skip to Sync.
            self.send(m.BindComplete())
            raise
        finally:
            self._end_statement()
        if tags is None:
            self._unbatched_until = decoder.taken_bytes + taker.end(taker.rows)
            return False
        taker.take_rows(batched)
        self._out += batches.answers(taker.described[:batched], tags)
        self._statement_kind = batches.count_statements(tags)
        return True

    async def _read_run(self, taker: batches.RunTaker) -> None:
        """Read the rest of a run the client is still sending.  Its first rows were sent, so
        they count as running (PostgreSQL would be executing them): a CancelRequest or
        statement_timeout meanwhile cancels the first row, and the run skips to Sync."""
        self._begin_statement()
        try:
            while taker.waiting and await self._read_more():
                taker.scan()
            if self.is_cancelled:
                self.send(m.BindComplete())
                raise self._reword(QueryCanceled("canceling statement due to user request"))
        finally:
            self._timer.stop()
            self._is_running_statement = False  # the run's statement starts when it is applied

    def _bind_values(self, message: m.Bind, statement: PreparedStatement) -> list[object]:
        """The parameters of a Bind, decoded by the statement's parameter types."""
        expected = len(statement.param_oids)
        if len(message.params) != expected:
            raise ProtocolViolation(
                f"bind message supplies {len(message.params)} parameters, but prepared statement "
                f'"{message.statement}" requires {expected}'
            )
        date_reading = self._date_reading()
        key = (message.statement, message.param_formats)
        shape = self._bind_shapes.get(key)
        if shape is None or shape[0] is not statement or shape[1] is not date_reading:
            formats = resolve_formats(message.param_formats, expected, "parameter")
            decoders = params.decoders(statement.param_oids, formats, *date_reading)
            if len(self._bind_shapes) >= _BIND_SHAPES_KEPT:
                self._bind_shapes.clear()
            shape = self._bind_shapes[key] = (statement, date_reading, decoders)
        return [
            None if raw is None else decode(raw)
            for raw, decode in zip(message.params, shape[2], strict=True)
        ]

    def _date_reading(self) -> tuple[str, str]:
        """How a Bind's text dates and timestamps are read: the order DateStyle reads their
        fields in, and the zone (TimeZone's, as Arrow names it) of a timestamptz given
        without an offset."""
        session = self._session
        if session is None:
            return "MDY", "UTC"
        settings = session.settings
        if settings.version != self._reading_version:
            self._reading = (
                date_styles.parse(settings.get("DateStyle")).order,
                time_zones.session_zone(settings.get("TimeZone")).arrow,
            )
            self._reading_version = settings.version
        return self._reading

    async def _on_describe(self, message: m.Describe) -> None:
        if message.kind == "S":
            statement = self._registry.statement(message.name)
            self.send(m.ParameterDescription(statement.param_oids))
            columns = statement.columns
            formats: tuple[int, ...] = (0,) * len(columns or ())
        elif (
            message.name not in self._registry.portals
            and self._session is not None
            and (self._session.has_cursor(message.name))
        ):
            # A cursor made with SQL DECLARE is a portal too (psycopg describes it so).
            columns = self._session.cursor_columns(message.name)
            formats = (0,) * len(columns)
        else:
            self._describe_portal(self._registry.portal(message.name))
            return
        if columns is None:
            self.send(m.NoData())
        else:
            self._out += self._row_description(columns, formats)

    def _describe_portal(self, portal: Portal) -> None:
        self._out += self._describe_bytes(portal)

    def _describe_bytes(self, portal: Portal) -> bytes:
        """RowDescription (or NoData) of a portal's rows, in the formats bound."""
        columns = portal.columns()
        if columns is None:
            return _NO_DATA
        return self._row_description(columns, portal.formats())

    def _row_description(
        self, columns: tuple[ResultColumn, ...], formats: tuple[int, ...]
    ) -> bytes:
        """RowDescription framed, kept per statement's columns (by identity: a re-planned
        statement has new ones) and formats: a prepared statement describes the same each time."""
        key = (id(columns), formats)
        cached = self._row_descriptions.get(key)
        if cached is not None and cached[0] is columns:
            return cached[1]
        frame = codec.encode(answers.row_description(columns, formats))
        if len(self._row_descriptions) >= _ROW_DESCRIPTIONS_KEPT:
            self._row_descriptions.clear()
        self._row_descriptions[key] = (columns, frame)
        return frame

    async def _on_execute(self, message: m.Execute) -> None:
        portal = self._registry.portal(message.portal)
        if portal.statement.is_empty_query:
            self.send(m.EmptyQueryResponse())
            return
        if portal.is_complete:
            self.send(m.CommandComplete(_completed_tag(portal)))
            return
        assert self._session is not None, "queries run only after startup"
        # A short read (a few rows by key) runs right here: it never waits, and a thread hop
        # would cost more than the statement.  Anything left of it goes on the thread.
        inline = portal.stream is None and self._session.runs_inline(
            portal.statement, portal.params
        )
        self._begin_statement()
        try:
            await self._execute_steps(portal, message.max_rows, inline, None)
        finally:
            self._end_statement()

    async def _execute_steps(
        self, portal: Portal, max_rows: int, inline: bool, step: Step | None
    ) -> None:
        """Run a started Execute's portal step by step (``step``: its first, already run)
        until its rows are done, suspended or an error ends it."""
        sent = 0
        while True:
            if step is None:
                if inline:
                    inline = False
                    try:
                        step = self._advance_portal(portal, max_rows, sent, inline=True)
                    except MustWait:
                        continue  # a write that must wait did nothing: run it on the thread
                else:
                    step = await self._run(self._advance_portal, portal, max_rows, sent)
            self._out += step.output
            sent = step.sent
            if step.error is not None:
                portal.is_complete = True
                raise self._reword(step.error)
            if step.state == "done":
                portal.is_complete = True
            if step.state == "copy_in":
                await self.flush()
                portal.is_complete = True
                try:
                    tag = await copy_protocol.copy_in(
                        step.copy_in, self.receive, self._run, self._copy_cancelled
                    )
                except DbError as exc:
                    raise self._reword(exc) from None
                self.send(m.CommandComplete(tag))
                return
            if step.state != "more":
                return
            step = None
            await self.flush()

    def _advance_portal(
        self, portal: Portal, max_rows: int, sent: int, inline: bool = False
    ) -> Step:
        """Start the portal if needed and encode its rows until a stopping point (worker; or
        ``inline`` on the event loop, until the rows stop being short)."""
        assert self._session is not None, "queries run only after startup"
        out = bytearray()
        try:
            if portal.stream is None:
                result = portal.start(self._session, inline)
                if (  # rows alone, all at once: ``_all_rows`` in this call
                    inline
                    and max_rows <= 0
                    and result.columns is not None
                    and not result.notices
                    and result.deallocate is None
                    and result.copy_in is None
                    and result.copy_out is None
                    and not result.is_empty_query
                ):
                    stream = portal.stream
                    assert stream is not None, "a started portal has a stream"
                    fetched = stream.fetch_all()
                    out += fetched.data
                    if fetched.is_paused:
                        return Step(out, "more", sent=fetched.rows)  # the rest on the thread
                    tag = stream.command_tag(fetched.rows)
                    self._completed(tag)
                    out += answers.command_complete(tag)
                    return Step(out, "done", sent=fetched.rows)
                self._deallocate(result)
                out += answers.notices(result)
                if result.copy_in is not None:
                    out += codec.encode(copy_protocol.copy_in_response(result.copy_in))
                    return Step(out, "copy_in", copy_in=result.copy_in)
                if result.is_empty_query or result.columns is None:
                    out += answers.no_rows_answer(result)
                    if not result.is_empty_query:
                        self._completed(result.command_tag or "")
                    return Step(out, "done")
                if result.copy_out is not None:
                    portal.stream = copy_protocol.copy_out_stream(result)
                    out += portal.stream.response()
            assert portal.stream is not None, "a started portal has a stream"
            sent, state = self._pump_rows(portal.stream, sent, max_rows, out, inline)
            return Step(out, state, sent=sent)
        except MustWait:
            raise
        except Exception as exc:
            return Step(out, "error", exc)

    def _deallocate(self, result: Result) -> None:
        """Drop prepared statements as a DEALLOCATE or DISCARD ALL result asks."""
        if result.deallocate is None:
            return
        statements = self._registry.statements
        if result.deallocate == "":
            statements.clear()
        elif statements.pop(result.deallocate, None) is None:
            raise InvalidSqlStatementName(
                f'prepared statement "{result.deallocate}" does not exist'
            )

    async def _on_close(self, message: m.Close) -> None:
        if message.kind == "S":
            await self._close_portals(self._registry.close_statement(message.name))
        else:
            await self._close_portals(self._registry.close_portal(message.name))
        self.send(m.CloseComplete())

    async def _close_portals(self, portals: list[Portal]) -> None:
        """Abandon the rows of portals that were dropped (on a worker: it may end a transaction)."""
        if any(p.is_streaming for p in portals):
            await self._run(close_portals_and_session, portals, None)


def _completed_tag(portal: Portal) -> str:
    result = portal.stream.result if portal.stream is not None else None
    if result is None or result.columns is not None:
        return "SELECT 0"
    return result.command_tag or ""


def close_portals_and_session(portals: list[Portal], session: Session | None) -> None:
    """Abandon portals' rows and close the session (on the statement thread: either may end a transaction)."""
    for portal in portals:
        portal.close()
    if session is not None:
        session.close()
