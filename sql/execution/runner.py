"""QueryRunner: run a CompiledQuery (sql/planner/compiled_query.py) any number of times.

``QueryRunner.run`` registers a fresh ``ScanSource`` per
view at the transaction's snapshot (or an Arrow table standing in for a
table, as RETURNING needs) on a new DuckDB cursor and streams the result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import duckdb
import pyarrow as pa
from sqlglot import exp

from catalog.catalog import Catalog
from catalog.table import TableInfo
from sql.common.datatypes import to_wire, wire_oid
from sql.common.result import ReadPause, ResultColumn, ShortRows
from sql.common.time_zones import UTC_ZONE
from sql.execution import executor, index_scan, point_read, read_plan, system_view_rows
from sql.execution.direct_shape import DirectShape
from sql.execution.table_activity import SessionActivity, TableActivity
from sql.planner import system_views
from sql.planner.binder import BoundQuery, bind_query
from sql.planner.compiled_query import CompiledQuery
from sql.planner.pushdown import ScanPlan
from sql.planner.transpile import OutputColumn
from storage.data_type import TabletId
from storage.errors import OutOfMemory
from storage.predicate import PredicateKind, ScanSpec
from storage.scan_stats import ScanStats as TabletScanStats
from storage.transaction import Transaction
from storage.type_oids import TypeOid


class QueryRunner:
    """Runs compiled queries for one session on its DuckDB database."""

    def __init__(
        self,
        duck: duckdb.DuckDBPyConnection,
        catalog: Catalog,
        check_cancel: Callable[[], None],
        read_snapshot: Callable[[], int | None] = lambda: None,
    ) -> None:
        self._duck = duck
        self.catalog = catalog
        self._check_cancel = check_cancel
        # The session's nyala.read_timestamp: the snapshot of references without their own.
        self._read_snapshot = read_snapshot
        self._running: list[duckdb.DuckDBPyConnection] = []
        self.zone = UTC_ZONE  # the session's TimeZone, which DuckDB and the results follow
        self.date_order = "MDY"  # DateStyle's field order, which date constants are read in
        self.interval_style = "postgres"  # IntervalStyle, which interval constants are read in
        self.buffered_rows_limit: int | None = None
        self.activity: TableActivity | None = None
        """Where scans are counted (pg_stat_user_tables), if anywhere."""
        self.direct_activity: SessionActivity | TableActivity | None = None
        """Where the scans this session's thread runs itself (direct reads) are counted."""
        """Rows ``run_to_table`` may hold at once (the server's --buffered-rows-limit)."""

    def read_snapshot(self) -> int | None:
        """The session's nyala.read_timestamp: the snapshot of references without their own."""
        return self._read_snapshot()

    def bind(self, ast: exp.Expr, declared_oids: list[int] | tuple[int, ...] = ()) -> BoundQuery:
        return bind_query(ast, self.catalog, declared_oids, self.date_order, self.interval_style)

    def _cursor(
        self,
        compiled: CompiledQuery,
        txn: Transaction | None,
        overrides: dict[str, pa.Table] | None,
        params: list[Any] | None = None,
        stats: executor.ScanStats | None = None,
    ) -> duckdb.DuckDBPyConnection:
        cursor = self._duck.cursor()
        if not self.zone.is_utc:
            cursor.execute(f"SET TimeZone = '{self.zone.duckdb}'")
        for binding in compiled.views:
            override = (overrides or {}).get(binding.table.name)
            if system_views.is_system_view(binding.table):
                override = system_view_rows.contents(binding.table, self.catalog, txn)
            if override is not None:
                cursor.register(binding.view, override)
            else:
                spec = binding.scan.spec(params or ())
                source = executor.ScanSource(
                    txn,
                    binding.table,
                    binding.columns,
                    spec,
                    self._check_cancel,
                    stats,
                    binding.scan.tablet_ids(spec),
                    snapshot=(
                        binding.snapshot if binding.snapshot is not None else self._read_snapshot()
                    ),
                    activity=self.activity if txn is not None else None,
                    partial_indexes=binding.scan.partial_indexes,
                    index_plans=binding.scan.index_plans,
                )
                cursor.register(binding.view, source)
        return cursor

    def describe(self, compiled: CompiledQuery) -> tuple[ResultColumn, ...]:
        """The RowDescription of a query, worked out by DuckDB's binder without running it."""
        if compiled.columns is None:
            cursor = self._cursor(compiled, None, None)
            try:
                types = executor.describe(cursor, compiled.sql, compiled.duckdb_param_count)
            finally:
                cursor.close()
            compiled.columns = _result_columns(compiled.outputs, types)
        return compiled.columns

    def _start(
        self,
        compiled: CompiledQuery,
        txn: Transaction,
        params: list[Any] | None,
        now: Any,
        overrides: dict[str, pa.Table] | None,
        stats: executor.ScanStats | None = None,
    ) -> tuple[duckdb.DuckDBPyConnection, list[str], Iterator[pa.RecordBatch]]:
        values = compiled.duckdb_params(params, now)
        cursor = self._cursor(compiled, txn, overrides, params, stats)
        self._running.append(cursor)
        try:
            types, batches = executor.run(cursor, compiled.sql_for(values), values)
        except BaseException:
            self._finish(cursor)
            raise
        return cursor, types, batches

    def run(
        self,
        compiled: CompiledQuery,
        txn: Transaction,
        params: list[Any] | None = None,
        now: Any = None,
        overrides: dict[str, pa.Table] | None = None,
        pause: ReadPause | None = None,
    ) -> tuple[tuple[ResultColumn, ...], Iterator[pa.RecordBatch]]:
        """Start the query; return its RowDescription and a stream of wire-ready batches
        (a direct read marks in ``pause`` where its rows stop being short)."""
        if compiled.direct is not None and not overrides:
            direct = self._run_direct(compiled, txn, params, now, pause)
            if direct is not None:
                return direct
        if compiled.constant and not overrides:
            return self._run_constant(compiled, txn, now)
        if compiled.echoed is not None and not overrides:
            echo = self._run_echo(compiled, params or [])
            if echo is not None:
                return echo
        cursor, types, batches = self._start(compiled, txn, params, now, overrides)
        columns = _result_columns(compiled.outputs, types)
        compiled.columns = columns
        oids = [c.type_oid for c in columns]
        typmods = [c.typmod for c in columns]
        zone = self.zone.arrow

        def stream() -> Iterator[pa.RecordBatch]:
            try:
                for batch in batches:
                    self._check_cancel()
                    arrays = [
                        to_wire(a, oid, zone, typmod)
                        for a, oid, typmod in zip(batch.columns, oids, typmods, strict=True)
                    ]
                    yield pa.RecordBatch.from_arrays(arrays, names=[c.name for c in columns])
            finally:
                self._finish(cursor)

        return columns, stream()

    def _run_constant(
        self, compiled: CompiledQuery, txn: Transaction, now: Any
    ) -> tuple[tuple[ResultColumn, ...], Iterator[pa.RecordBatch]]:
        """``run`` of a constant query (``CompiledQuery.constant``): DuckDB's answer the
        first time, kept whole (a few values); the kept answer after that.  An error is
        never kept: the query runs again next time, and fails as it did."""
        kept = compiled.constant_rows
        if kept is None:
            columns, batches = self.run(replace(compiled, constant=False), txn, None, now)
            kept = (columns, list(batches))
            compiled.columns = columns
            compiled.constant_rows = kept
        return kept[0], iter(kept[1])

    def _run_echo(
        self, compiled: CompiledQuery, params: list[Any]
    ) -> tuple[tuple[ResultColumn, ...], Iterator[pa.RecordBatch]] | None:
        """``run`` of a query that gives back its parameters (``CompiledQuery.echoed``):
        their values, typed as DuckDB types them, without DuckDB (None, for DuckDB to run
        it, should DuckDB describe a column as a type ``_ECHO_ARROW`` lacks)."""
        compiled.check_params(params)
        columns = self.describe(compiled)
        if any(c.type_oid not in _ECHO_ARROW for c in columns):
            return None
        zone = self.zone.arrow
        arrays = [
            to_wire(pa.array([params[n - 1]], _ECHO_ARROW[c.type_oid]), c.type_oid, zone, c.typmod)
            for n, c in zip(compiled.echoed or (), columns, strict=True)
        ]
        batch = pa.RecordBatch.from_arrays(arrays, names=[c.name for c in columns])
        return columns, iter((batch,))

    def read_by_key(
        self,
        compiled: CompiledQuery,
        txn: Transaction,
        params: list[Any],
        now: Any,
        short: bool = False,
    ) -> tuple[tuple[ResultColumn, ...], Sequence[pa.RecordBatch | ShortRows]] | None:
        """``run`` of a direct read that names its rows by primary key, or through an index
        whose entries in range are few (``index_scan.short_keys``), done at once: a few rows
        read by key never wait, so they come back whole (no stream of generators to pull
        them through); None for any other query, which ``run`` answers.  ``short`` (an
        Execute's read) takes a ``ReadPlan``'s rows as ``ShortRows``: storage's batches as
        they are, which the server frames from their values, with no Arrow batch rebuilt."""
        if compiled.direct is None:
            return None
        compiled.check_params(params)
        binding = compiled.views[0]
        if binding.snapshot is not None or self._read_snapshot() is not None:
            return None  # a time-travel read: ``run`` checks its snapshot first
        plan = read_plan.of(compiled)
        if plan is not None:
            read = plan.read(txn, params)
            if read is not None:
                columns, planned = self._planned_rows(compiled, plan, read)
                return columns, planned if short else [r.batch() for r in planned]
        scan = binding.scan
        spec = execution_spec(scan, params)
        if not _is_pushed(compiled, spec):
            return None
        table = scan.table
        lookup = index_scan.choose(table, spec, scan.partial_indexes, scan.index_plans)
        found: list[tuple[TabletId, pa.RecordBatch]]
        by_key = lookup is not None
        if lookup is not None:
            keys = index_scan.short_keys(txn, table, lookup, spec)
            if keys is None:
                return None  # a long read: ``run`` streams it
            found = point_read.read(txn, keys, spec, scan.tablet_ids(spec), lookup.implied)
        else:
            points = point_read.keys_of(table, spec)
            if points is None:
                return None
            implied = point_read.pinning(table, spec)
            # Keys found, the first by an equality: its key range has bounds (reads_key_range).
            by_key = bool(points) and implied[0].kind is PredicateKind.EQUALITY
            found = point_read.read(txn, points, spec, scan.tablet_ids(spec), implied)
        shape = self._shape(compiled, spec.projection)
        remaining = spec.limit
        zone = self.zone.arrow
        rows, out = 0, []
        for _tablet_id, batch in found:
            if remaining == 0:
                break
            self._check_cancel()
            rows += batch.num_rows
            if remaining is not None:
                batch = batch.slice(0, remaining)
                remaining -= batch.num_rows
            out.append(shape.wire_batch(batch, zone))
        activity = self.direct_activity
        if activity is not None and table.tablet_ids:
            by_key = by_key or executor.reads_key_range(table, spec)
            activity.scanned(table.tablet_ids[0], by_key, rows, 0)
        return shape.columns, out

    def _planned_rows(
        self, compiled: CompiledQuery, plan: read_plan.ReadPlan, found: list[pa.RecordBatch]
    ) -> tuple[tuple[ResultColumn, ...], list[ShortRows]]:
        """``read_by_key``'s answer from the rows its ``ReadPlan`` read (by key or index)."""
        assert compiled.direct is not None, "a ReadPlan is a direct read's"
        columns = self.describe(compiled)
        shape = plan.shape
        if shape is None or shape.columns is not columns:
            shape = plan.shape = DirectShape.of(columns, compiled.direct, plan.projection)
        zone = self.zone.arrow
        rows, out = 0, []
        for batch in found:
            self._check_cancel()
            rows += batch.num_rows
            out.append(ShortRows(batch, shape, zone))
        activity = self.direct_activity
        if activity is not None and plan.table.tablet_ids:
            activity.scanned(plan.table.tablet_ids[0], True, rows, 0)
        return shape.columns, out

    def _shape(self, compiled: CompiledQuery, projection: tuple[int, ...]) -> DirectShape:
        """The direct read's ``DirectShape``, made once per compiled query and description."""
        columns = self.describe(compiled)
        shape = compiled.direct_shape
        if not isinstance(shape, DirectShape) or shape.columns is not columns:
            assert compiled.direct is not None, "only direct queries have a shape"
            shape = compiled.direct_shape = DirectShape.of(columns, compiled.direct, projection)
        return shape

    def _run_direct(
        self,
        compiled: CompiledQuery,
        txn: Transaction,
        params: list[Any] | None,
        now: Any,
        pause: ReadPause | None,
    ) -> tuple[tuple[ResultColumn, ...], Iterator[pa.RecordBatch]] | None:
        """Answer a query the scan alone answers (see ``direct_columns``) without DuckDB;
        None when a parameter kept a predicate or the limit from being pushed this time."""
        compiled.check_params(params or ())
        scan = compiled.views[0].scan
        spec = scan.spec(params or ())
        if not _is_pushed(compiled, spec):
            return None
        binding = compiled.views[0]
        snapshot = binding.snapshot if binding.snapshot is not None else self._read_snapshot()
        if snapshot is not None:
            spec = replace(spec, snapshot=snapshot)
            if pause is None:
                txn.check_snapshot(snapshot)  # 72000 before any row, as ``ScanSource`` raises it
        shape = self._shape(compiled, spec.projection)
        tablet_ids = scan.tablet_ids(spec)
        zone = self.zone.arrow

        lookup = index_scan.choose(scan.table, spec, scan.partial_indexes, scan.index_plans)
        points = point_read.keys_of(scan.table, spec) if lookup is None else None
        storage: list[TabletScanStats] = []
        paused = False

        def long_read() -> Iterator[pa.RecordBatch]:
            """Say that the rows stop being short here (``ReadPause``), once."""
            nonlocal paused
            if pause is not None and not paused:
                paused = True
                pause.is_due = True
                yield _empty(scan.table, spec)

        def batches() -> Iterator[pa.RecordBatch]:
            if snapshot is not None and pause is not None:
                # A time-travel read waits for the commits at or below its snapshot to be
                # applied (``check_snapshot``): never on the event loop.
                yield from long_read()
                txn.check_snapshot(snapshot)
            if points is not None:
                implied = point_read.pinning(scan.table, spec)
                for _tablet_id, batch in point_read.read(txn, points, spec, tablet_ids, implied):
                    yield batch
                return
            if lookup is not None:
                keys = index_scan.short_keys(txn, scan.table, lookup, spec)
                if keys is None:
                    yield from long_read()
                for _tablet_id, batch in index_scan.scan(
                    txn, scan.table, lookup, spec, tablet_ids, keys
                ):
                    yield batch
                return
            yield from long_read()
            for tablet_id in tablet_ids:
                storage.append(TabletScanStats())
                yield from txn.scan(tablet_id, spec, stats=storage[-1])

        def counted_batches() -> Iterator[pa.RecordBatch]:
            activity = self.direct_activity
            if activity is None:
                return batches()
            by_key = lookup is not None or executor.reads_key_range(scan.table, spec)
            return executor.counted(batches(), activity, scan.table, by_key, storage)

        def stream() -> Iterator[pa.RecordBatch]:
            remaining = spec.limit
            for batch in counted_batches():
                if remaining == 0:
                    return
                self._check_cancel()
                if remaining is not None:
                    batch = batch.slice(0, remaining)
                    remaining -= batch.num_rows
                yield shape.wire_batch(batch, zone)

        return shape.columns, stream()

    def run_to_table(
        self,
        compiled: CompiledQuery,
        txn: Transaction,
        params: list[Any] | None = None,
        now: Any = None,
        overrides: dict[str, pa.Table] | None = None,
        stats: executor.ScanStats | None = None,
    ) -> pa.Table | None:
        """Run to completion, keeping DuckDB's own types; None when no rows came back."""
        cursor, _, batches = self._start(compiled, txn, params, now, overrides, stats)
        limit = self.buffered_rows_limit
        collected: list[pa.RecordBatch] = []
        held = 0
        try:
            for batch in batches:
                held += batch.num_rows
                if limit is not None and held > limit:
                    # PostgreSQL would spill; nyala holds these rows in memory, so a
                    # statement needing more fails as one out of memory does there.
                    raise OutOfMemory(
                        "out of memory",
                        detail=f"A statement may hold at most {limit} rows in the server "
                        "(--buffered-rows-limit).",
                    )
                collected.append(batch)
        finally:
            self._finish(cursor)
        return pa.Table.from_batches(collected) if collected else None

    def _finish(self, cursor: duckdb.DuckDBPyConnection) -> None:
        if cursor in self._running:
            self._running.remove(cursor)
        cursor.close()

    def interrupt(self) -> None:
        """Stop whatever DuckDB is running for this session (thread-safe)."""
        for cursor in list(self._running):
            with contextlib.suppress(duckdb.Error):
                cursor.interrupt()


_ECHO_ARROW: dict[int, pa.DataType] = {
    TypeOid.BOOL: pa.bool_(),
    TypeOid.INT2: pa.int16(),
    TypeOid.INT4: pa.int32(),
    TypeOid.INT8: pa.int64(),
    TypeOid.TEXT: pa.string(),
}
"""The Arrow type DuckDB gives an echoed parameter of each ``ECHOED_TYPES`` type."""


def runs_direct(compiled: CompiledQuery, params: Sequence[Any], read_snapshot: int | None) -> bool:
    """Whether ``run`` answers ``compiled`` with ``params`` from the scan alone, without
    DuckDB: a direct query (``CompiledQuery.direct``) whose parameters let every predicate and
    the limit be pushed this time, at the transaction's snapshot or at the one its
    ``FOR SYSTEM_TIME AS OF`` or ``read_snapshot`` (nyala.read_timestamp) names.  A
    time-travel read checks its snapshot (72000) after its ``ReadPause``, as a wait for the
    commits below it must not hold the event loop; ``read_by_key`` leaves it to ``run``.
    (``read_snapshot`` changes which versions are read, not whether the scan answers.)"""
    if compiled.direct is None:
        return False
    plan = read_plan.of(compiled)
    if plan is not None:
        return plan.values(params) is not None
    return _is_pushed(compiled, execution_spec(compiled.views[0].scan, params))


def execution_spec(scan: ScanPlan, params: Sequence[Any]) -> ScanSpec:
    """``scan.spec(params)``: made once for a statement that asks twice (``runs_direct``
    when deciding where it runs, then ``read_by_key``), as ``ScanPlan.spec`` keeps the last
    spec with the very parameter objects it was made from."""
    return scan.spec(params)


def _is_pushed(compiled: CompiledQuery, spec: ScanSpec) -> bool:
    """``runs_direct`` given the execution's ScanSpec."""
    if compiled.direct is None:
        return False
    scan = compiled.views[0].scan
    return len(spec.predicates) == len(scan.predicates) and (
        scan.limit is None or spec.limit is not None
    )


def _empty(table: TableInfo, spec: ScanSpec) -> pa.RecordBatch:
    """No rows of ``spec``'s projection, as a scan of ``table`` would type them."""
    columns = [table.schema.column(c) for c in spec.projection]
    return pa.RecordBatch.from_arrays(
        [pa.array([], c.type.arrow_type) for c in columns], names=[str(c.id) for c in columns]
    )


def _result_columns(outputs: list[OutputColumn], types: list[str]) -> tuple[ResultColumn, ...]:
    columns = []
    for out, duck_type in zip(outputs, types, strict=False):
        oid = wire_oid(duck_type)
        if out.table_oid and out.is_varchar and oid == 25:
            oid = TypeOid.VARCHAR
        if out.is_bpchar and oid == 25:
            oid = TypeOid.BPCHAR
        oid = TypeOid.OID if out.is_oid and oid == TypeOid.INT8 else oid
        if out.text_type_oid and oid in (TypeOid.TEXT, TypeOid.JSON):
            oid = out.text_type_oid
        named_text = out.text_type_oid == TypeOid.VARCHAR
        typmod = out.typmod if out.table_oid or out.is_bpchar or named_text else -1
        columns.append(ResultColumn(out.name, oid, typmod, out.table_oid, out.attnum))
    return tuple(columns)
