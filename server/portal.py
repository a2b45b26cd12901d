"""Prepared statements and portals of one connection: names, formats, row-limit suspension.

A prepared statement is what Parse made (``sql.result.PreparedStatement``);
a portal is a statement bound to parameter values and result formats.  A
portal starts its statement at the first Execute and keeps the batch stream
open, so an Execute with a row limit suspends it and the next Execute carries
on from the same row.  The unnamed statement and portal are silently
replaced; a named one must be closed before its name is reused.

Pulling rows runs the query, so ``Portal.start`` and ``ResultStream.fetch`` are
called on a worker thread, never on the event loop.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from server import pgtypes, value_rows
from sql.common.result import PreparedStatement, ReadPause, Result, ResultColumn, ShortRows
from storage.errors import (
    DuplicateCursor,
    DuplicatePreparedStatement,
    InvalidCursorName,
    InvalidSqlStatementName,
    ProtocolViolation,
)

if TYPE_CHECKING:
    from sql.session.session import Session


def resolve_formats(codes: Sequence[int], count: int, what: str) -> tuple[int, ...]:
    """Expand Bind's format codes (none: all text; one: all alike; else one each) to ``count``."""
    return _resolved(tuple(codes), count, what)


@functools.lru_cache(maxsize=256)
def _resolved(codes: tuple[int, ...], count: int, what: str) -> tuple[int, ...]:
    """``resolve_formats``, worked out once per shape: a statement's Binds repeat theirs (an
    error is raised again each time, never kept)."""
    if not codes:
        return (0,) * count  # the usual Bind: every value in text
    if any(code not in (0, 1) for code in codes):
        bad = next(code for code in codes if code not in (0, 1))
        raise ProtocolViolation(f"unsupported format code: {bad}")
    if len(codes) == 1:
        return (codes[0],) * count
    if len(codes) != count:
        raise ProtocolViolation(f"bind message has {len(codes)} {what} formats but {count} {what}s")
    return tuple(codes)


_ALL_ROWS = 1 << 62
_TYPE_OID = operator.attrgetter("type_oid")


class RowStream:
    """Hands out a batch stream in slices of at most N rows, keeping the rest of a split batch."""

    def __init__(
        self, batches: Iterator[pa.RecordBatch | ShortRows], pause: ReadPause | None = None
    ) -> None:
        self._batches = batches
        self._pause = pause
        self._pending: pa.RecordBatch | ShortRows | None = None
        self.is_exhausted = False

    def take(self, max_rows: int, stop_at_pause: bool = False) -> pa.RecordBatch | ShortRows | None:
        """Up to ``max_rows`` rows from the current batch; None once the stream has ended,
        or (``stop_at_pause``) where the rows stop being short (``ReadPause``)."""
        while self._pending is None or self._pending.num_rows == 0:
            try:
                self._pending = next(self._batches)
            except StopIteration:
                self.is_exhausted = True
                self._pending = None
                return None
            pause = self._pause
            if pause is not None and pause.is_due:
                pause.is_due = False
                if stop_at_pause:
                    return None
        batch = self._pending
        if batch.num_rows <= max_rows:
            self._pending = None
            return batch
        self._pending = batch.slice(max_rows)
        return batch.slice(0, max_rows)

    def close(self) -> None:
        close = getattr(self._batches, "close", None)
        if close is not None and not self.is_exhausted:
            close()
        self.is_exhausted = True


@dataclass(slots=True)
class Fetched:
    """One chunk of output: framed DataRow messages, their count, and whether the rows ended."""

    data: bytes
    rows: int
    is_exhausted: bool
    is_paused: bool = False
    """The rows stopped being short here: a connection running the statement on its event
    loop goes on on its thread."""


class ResultStream:
    """A started statement's Result, encoded chunk by chunk in the formats the client chose."""

    def __init__(self, result: Result, formats: Sequence[int]) -> None:
        self.result = result
        self.rows = RowStream(result.batches, result.pause)
        columns = result.columns or ()
        self.type_oids = tuple(map(_TYPE_OID, columns))
        self.formats = _resolved(tuple(formats), len(columns), "result")

    def fetch(self, max_rows: int) -> Fetched:
        """Pull and encode up to ``max_rows`` rows (worker thread: this runs the query)."""
        return self._fetch(max_rows, stop_at_pause=False)

    def fetch_short(self, max_rows: int) -> Fetched:
        """``fetch`` on the event loop: stops where the rows stop being short (``is_paused``)."""
        return self._fetch(max_rows, stop_at_pause=True)

    def fetch_all(self) -> Fetched:
        """``fetch_short`` of every row: a short read's few rows, taken whole on the event loop
        (stopping only where they stop being short)."""
        rows = self.rows
        parts: list[bytes] = []
        count = 0
        while (batch := rows.take(_ALL_ROWS, stop_at_pause=True)) is not None:
            parts.append(self._data_rows(batch))
            count += batch.num_rows
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        return Fetched(data, count, rows.is_exhausted, is_paused=not rows.is_exhausted)

    def _data_rows(self, batch: pa.RecordBatch | ShortRows) -> bytes:
        """``batch`` as DataRow messages: a read by key's ``ShortRows`` from their values
        where every column has a row encoder (``value_rows``), else through Arrow."""
        result = self.result
        if type(batch) is ShortRows:
            data = value_rows.encode(
                batch,
                self.type_oids,
                self.formats,
                result.extra_float_digits,
                result.date_style,
                result.bytea_output,
            )
            if data is not None:
                return data
            batch = batch.batch()
        return pgtypes.encode_rows(
            batch,
            self.type_oids,
            self.formats,
            b"D",
            result.extra_float_digits,
            result.date_style,
            result.interval_style,
            result.bytea_output,
        )

    def _fetch(self, max_rows: int, stop_at_pause: bool) -> Fetched:
        parts: list[bytes] = []
        count = 0
        while count < max_rows:
            batch = self.rows.take(max_rows - count, stop_at_pause)
            if batch is None:
                if not self.rows.is_exhausted:
                    return Fetched(b"".join(parts), count, False, is_paused=True)
                break
            parts.append(self._data_rows(batch))
            count += batch.num_rows
        return Fetched(b"".join(parts), count, self.rows.is_exhausted)

    def command_tag(self, sent: int) -> str:
        """The CommandComplete tag once ``sent`` rows are out."""
        return self.result.command_tag or f"SELECT {sent}"

    def close(self) -> None:
        """Abandon the rest of the rows (worker thread: closing may end a transaction)."""
        self.rows.close()


@dataclass(slots=True)
class Portal:
    """A prepared statement bound to parameters and result formats, and once started its rows."""

    name: str
    statement: PreparedStatement
    params: list[object]
    result_formats: tuple[int, ...]
    stream: ResultStream | None = None
    is_complete: bool = False

    @property
    def is_streaming(self) -> bool:
        """Whether rows are left to abandon (on the statement thread: closing a stream may end
        a transaction); a statement without rows (a write) has none."""
        stream = self.stream
        return (
            stream is not None
            and stream.result.columns is not None
            and not (stream.rows.is_exhausted)
        )

    def columns(self) -> tuple[ResultColumn, ...] | None:
        if self.stream is not None:
            return self.stream.result.columns
        return self.statement.columns

    def formats(self) -> tuple[int, ...]:
        """The format of each column of ``columns()``."""
        return self.stream.formats if self.stream is not None else self.result_formats

    def start(self, session: Session, inline: bool = False) -> Result:
        """Run the statement (worker thread, or ``inline`` on the event loop: see
        ``Session.runs_inline``); its rows are pulled later through ``stream``."""
        result = session.execute_prepared(self.statement, self.params, inline)
        formats = self.result_formats
        if result.columns is not None and len(formats) != len(result.columns):
            formats = formats[:1]
        self.stream = ResultStream(result, formats)
        return result

    def close(self) -> None:
        """Abandon the result stream (worker thread)."""
        if self.stream is not None:
            self.stream.close()


class PortalRegistry:
    """The named and unnamed prepared statements and portals of one connection."""

    def __init__(self) -> None:
        self.statements: dict[str, PreparedStatement] = {}
        self.portals: dict[str, Portal] = {}

    def check_statement_name(self, name: str) -> None:
        """Refuse a Parse into a named statement that exists (the unnamed one is replaced)."""
        if name and name in self.statements:
            raise DuplicatePreparedStatement(f'prepared statement "{name}" already exists')

    def add_statement(self, name: str, statement: PreparedStatement) -> None:
        self.check_statement_name(name)
        self.statements[name] = statement

    def statement(self, name: str) -> PreparedStatement:
        try:
            return self.statements[name]
        except KeyError:
            raise InvalidSqlStatementName(f'prepared statement "{name}" does not exist') from None

    def add_portal(self, portal: Portal) -> None:
        """Register a portal; the caller has closed an unnamed one of before."""
        if portal.name in self.portals:
            raise DuplicateCursor(f'cursor "{portal.name}" already exists')
        self.portals[portal.name] = portal

    def portal(self, name: str) -> Portal:
        try:
            return self.portals[name]
        except KeyError:
            raise InvalidCursorName(f'portal "{name}" does not exist') from None

    def close_statement(self, name: str) -> list[Portal]:
        """Drop a statement and the portals made from it; returns those portals."""
        statement = self.statements.pop(name, None)
        if statement is None:
            return []
        doomed = [p for p in self.portals.values() if p.statement is statement]
        for portal in doomed:
            del self.portals[portal.name]
        return doomed

    def drop_unnamed_statement(self) -> None:
        """Forget the unnamed statement; portals bound from it keep running, as in PostgreSQL."""
        self.statements.pop("", None)

    def close_portal(self, name: str) -> list[Portal]:
        portal = self.portals.pop(name, None)
        return [portal] if portal is not None else []

    def end_of_transaction(self, transaction_status: str) -> list[Portal]:
        """At Sync: drop the unnamed portal, and every portal once no block is open."""
        portals = self.portals
        if not portals:
            return []
        if transaction_status == "T":
            unnamed = portals.pop("", None)
            return [] if unnamed is None else [unnamed]
        doomed = list(portals.values())
        portals.clear()
        return doomed

    def clear(self) -> list[Portal]:
        portals = list(self.portals.values())
        self.portals.clear()
        self.statements.clear()
        return portals
