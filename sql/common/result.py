"""Result and PreparedStatement: the only things server/ reads back from sql/.

A ``Result`` is one statement's outcome: the row description (or None when
the statement returns no rows), a stream of Arrow record batches, the command
tag, and any notices.  The server encodes the batches column by column in the
formats the client asked for, so nothing here knows about bytes on the wire.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa

from storage.errors import DbError


@dataclass(frozen=True, slots=True)
class ResultColumn:
    """One RowDescription field: name, PostgreSQL type OID and typmod, and its source table."""

    name: str
    type_oid: int
    typmod: int = -1
    table_oid: int = 0
    attnum: int = 0


class MustWait(Exception):
    """A write started on the connection's event loop found it must wait (a row lock held
    by another transaction) or needs the general path: nothing of it was done, and the
    connection runs it again on its thread, where it may wait."""


@dataclass(slots=True)
class ReadPause:
    """Where a read's rows stop being short.  A connection may run a short read on its
    event loop (a thread hop would cost more than the statement); before a part that may
    take long (a scan, a long index range) the read sets ``is_due`` and yields an empty
    batch, and such a connection moves the rest of the statement to its thread."""

    is_due: bool = False


class RowShape(Protocol):
    """How a direct read's rows, as storage read them, become wire-ready
    (``sql.execution.direct_shape.DirectShape``)."""

    def wire_batch(self, batch: pa.RecordBatch, zone: Any) -> pa.RecordBatch: ...

    def values(self, batch: pa.RecordBatch) -> list[tuple[Any, ...]] | None: ...


class ShortRows:
    """A few rows of a read by key or index, as storage read them: the server frames them
    from their Python values (``values``) where it spells each column row by row, with no
    Arrow batch built for them; else it encodes ``batch()``, the batch the general path
    gives.  Stands in for a batch in ``Result.batches`` (``num_rows``, ``slice``), so what
    counts or times a result's batches counts these too."""

    __slots__ = ("raw", "num_rows", "_shape", "_zone")

    def __init__(self, raw: pa.RecordBatch, shape: RowShape, zone: Any) -> None:
        self.raw = raw
        self.num_rows: int = raw.num_rows
        self._shape = shape
        self._zone = zone

    def slice(self, offset: int = 0, length: int | None = None) -> ShortRows:
        return ShortRows(self.raw.slice(offset, length), self._shape, self._zone)

    def values(self) -> list[tuple[Any, ...]] | None:
        """Each row's output values as Python objects, exactly those of ``batch()``; None
        when a column's values are not (``to_wire`` would change them)."""
        return self._shape.values(self.raw)

    def batch(self) -> pa.RecordBatch:
        """The rows as the general path gives them (``DirectShape.wire_batch``)."""
        return self._shape.wire_batch(self.raw, self._zone)


def arrow_batch(item: pa.RecordBatch | ShortRows) -> pa.RecordBatch:
    """An item of ``Result.batches`` as an Arrow batch, for a reader that needs one."""
    return item.batch() if isinstance(item, ShortRows) else item


@dataclass(slots=True)
class Result:
    """One statement's outcome.

    ``columns`` is None for statements that return no rows (the server sends
    NoData on Describe).  ``command_tag`` is None for a plain query, whose tag
    is ``SELECT <rows sent>`` and only known once the stream has been drained;
    statements that know their tag up front (``INSERT 0 3``, ``CREATE TABLE``,
    ``UPDATE 2`` even with RETURNING) set it.  ``is_empty_query`` marks a query
    string with no statement in it (EmptyQueryResponse).  ``deallocate`` asks the
    server to drop protocol-level prepared statements (DEALLOCATE, DISCARD ALL):
    ``""`` for all of them, else the one named.  ``extra_float_digits`` is the
    session's setting when the statement ran: at 0 or below, float text output
    is rounded as PostgreSQL rounds it; ``date_style`` and ``interval_style`` are the
    session's DateStyle and IntervalStyle then, which text output of dates, times and
    intervals follows, and ``bytea_output`` the format bytea's text output takes.

    COPY: ``copy_in`` is the running COPY FROM STDIN the server feeds CopyData
    to (``sql.copy_in.CopyIn``); ``copy_out`` holds the options of a COPY TO
    STDOUT whose rows are ``batches`` (``sql.copy.CopyOptions``).  ``pause``: where the
    rows stop being short (``ReadPause``), for a read that says so; only such a read (an
    Execute's) may yield ``ShortRows`` among its batches.
    """

    columns: tuple[ResultColumn, ...] | None = None
    batches: Iterator[pa.RecordBatch | ShortRows] = field(default_factory=lambda: iter(()))
    command_tag: str | None = None
    notices: list[DbError] = field(default_factory=list)
    is_empty_query: bool = False
    deallocate: str | None = None
    copy_in: Any = None
    copy_out: Any = None
    extra_float_digits: int = 1
    date_style: str = "ISO, MDY"
    interval_style: str = "postgres"
    bytea_output: str = "hex"
    pause: ReadPause | None = None


@dataclass(slots=True)
class PreparedStatement:
    """A parsed, bound statement ready to run with parameters.

    ``param_oids`` holds one PostgreSQL type OID per ``$n``, inferred from
    context where the client sent 0.  ``columns`` describes the rows the
    statement will return (None: none), without running it.
    """

    sql: str
    param_oids: tuple[int, ...]
    columns: tuple[ResultColumn, ...] | None
    plan: object = None
    is_empty_query: bool = False
    fingerprint: object = None
    """How pg_stat_statements names it (``sql.frontend.fingerprint.Fingerprint``)."""
    prepare_time: dt.datetime | None = None
    from_sql: bool = False
    """Made by SQL-level PREPARE (whose whole text is ``statement_text``), not by Parse."""
    statement_text: str = ""
