"""Run a query on DuckDB over Arrow streams from the tablet scans.

Each base-table reference becomes a ``ScanSource`` registered as a view on a
DuckDB cursor.  DuckDB opens the source's Arrow C stream each time it scans
the table (a self-join scans it twice), and every opening starts a fresh
tablet scan at the statement's snapshot, so rows flow batch by batch from
storage through DuckDB to the wire without the table ever being
materialised.  Each scan reads only what the planner's ScanSpec asks for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import duckdb
import pyarrow as pa

from catalog.table import TableInfo
from sql.common.datatypes import engine_array, engine_type
from sql.common.duckdb_errors import translate, translate_arrow
from sql.execution import index_scan
from sql.execution.table_activity import SessionActivity, TableActivity
from storage.data_type import TabletId
from storage.errors import QueryCanceled
from storage.predicate import ScanSpec
from storage.scan_stats import ScanStats as TabletScanStats
from storage.schema import ColumnSchema
from storage.transaction import Transaction

RESULT_BATCH_ROWS = 8192


@dataclass(slots=True)
class ScanStats:
    """What EXPLAIN ANALYZE reports about the scans: rows returned by each tablet, what its
    storage read and skipped, and time."""

    rows_by_tablet: dict[tuple[str, TabletId], int] = field(default_factory=dict)
    seconds: float = 0.0
    storage_by_tablet: dict[tuple[str, TabletId], TabletScanStats] = field(default_factory=dict)
    """What each tablet's storage scans read and skipped (rowsets, blocks, encoded predicates)."""

    def add(self, table: str, tablet_id: TabletId, rows: int) -> None:
        key = (table, tablet_id)
        self.rows_by_tablet[key] = self.rows_by_tablet.get(key, 0) + rows

    def tablet(self, table: str, tablet_id: TabletId) -> TabletScanStats:
        return self.storage_by_tablet.setdefault((table, tablet_id), TabletScanStats())


class ScanSource:
    """A table's rows at one snapshot, as an Arrow stream DuckDB may open any number of times.

    Without a transaction it still tells DuckDB the table's schema, which is all
    binding a query for Describe needs.
    """

    def __init__(
        self,
        txn: Transaction | None,
        table: TableInfo,
        columns: list[ColumnSchema],
        spec: ScanSpec,
        check_cancel: Callable[[], None],
        stats: ScanStats | None = None,
        tablet_ids: tuple[TabletId, ...] | None = None,
        *,
        snapshot: int | None = None,
        activity: TableActivity | None = None,
        partial_indexes: frozenset[str] = frozenset(),
        index_plans: index_scan.IndexPlans | None = None,
    ) -> None:
        if not columns:
            columns = [table.schema.key_columns[0]]
        self._txn = txn
        self._table = table
        if txn is not None and snapshot is not None:
            txn.check_snapshot(snapshot)  # 72000 here, not from inside DuckDB's stream
        self._spec = spec if snapshot is None else replace(spec, snapshot=snapshot)
        self._schema = pa.schema([pa.field(c.name, engine_type(c.type)) for c in columns])
        self._types = [c.type for c in columns]
        self._check_cancel = check_cancel
        self._stats = stats
        self._tablet_ids = table.tablet_ids if tablet_ids is None else tablet_ids
        self._activity = activity
        self._partial = partial_indexes
        self._index_plans = index_plans

    def _batches(self) -> Iterator[pa.RecordBatch]:
        if self._activity is None:
            yield from self._scan([])
            return
        by_key = index_scan.choose(
            self._table, self._spec, self._partial, self._index_plans
        ) is not None or reads_key_range(self._table, self._spec)
        storage: list[TabletScanStats] = []
        yield from counted(self._scan(storage), self._activity, self._table, by_key, storage)

    def _scan(self, storage_stats: list[TabletScanStats]) -> Iterator[pa.RecordBatch]:
        """The rows; each tablet scan's storage statistics are added to ``storage_stats``."""
        assert self._txn is not None, "a source made only to describe a query is never scanned"
        stats = self._stats
        lookup = index_scan.choose(self._table, self._spec, self._partial, self._index_plans)
        if lookup is not None:
            for tablet_id, batch in index_scan.scan(
                self._txn, self._table, lookup, self._spec, self._tablet_ids
            ):
                self._check_cancel()
                if stats is not None:
                    stats.add(self._table.name, tablet_id, batch.num_rows)
                yield self._engine_batch(batch)
            return
        for tablet_id in self._tablet_ids:
            if stats is not None:
                stats.add(self._table.name, tablet_id, 0)
            storage = (
                stats.tablet(self._table.name, tablet_id)
                if stats is not None
                else TabletScanStats()
            )
            storage_stats.append(storage)
            for batch in self._txn.scan(tablet_id, self._spec, stats=storage):
                self._check_cancel()
                if stats is not None:
                    stats.add(self._table.name, tablet_id, batch.num_rows)
                yield self._engine_batch(batch)

    def _engine_batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        arrays = [engine_array(a, t) for a, t in zip(batch.columns, self._types, strict=True)]
        return pa.RecordBatch.from_arrays(arrays, schema=self._schema)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        reader = pa.RecordBatchReader.from_batches(self._schema, self._batches())
        return reader.__arrow_c_stream__(requested_schema)


def reads_key_range(table: TableInfo, spec: ScanSpec) -> bool:
    """Whether a scan reads only a primary-key range: pg_stat_user_tables counts it as an
    index scan, as PostgreSQL would go through the primary key's index."""
    keys = spec.key_range(table.schema)
    return keys.lower is not None or keys.upper is not None


def counted(
    batches: Iterator[pa.RecordBatch],
    activity: TableActivity | SessionActivity,
    table: TableInfo,
    by_key: bool,
    storage: Sequence[TabletScanStats],
) -> Iterator[pa.RecordBatch]:
    """``batches`` as they come; when the scan ends, however it ends (a LIMIT stops reading
    early), one scan of ``table`` and its rows are counted in ``activity``."""
    rows = 0
    try:
        for batch in batches:
            rows += batch.num_rows
            yield batch
    finally:
        if table.tablet_ids:
            blocks = sum(s.blocks_read for s in storage)
            activity.scanned(table.tablet_ids[0], by_key, rows, blocks)


def run(
    cursor: duckdb.DuckDBPyConnection,
    sql: str,
    params: list[Any] | None,
) -> tuple[list[str], Iterator[pa.RecordBatch]]:
    """Start ``sql`` on ``cursor``; return DuckDB's column types and a stream of result batches.

    DuckDB errors, whether raised while binding or while rows stream, come out
    as nyala DbErrors.
    """
    try:
        relation = cursor.sql(sql, params=params or None)
    except duckdb.Error as exc:
        raise translate(exc) from exc
    if relation is None:
        return [], iter(())
    types = [str(t) for t in relation.types]
    try:
        reader = relation.to_arrow_reader(RESULT_BATCH_ROWS)
    except duckdb.Error as exc:
        raise translate(exc) from exc

    def stream() -> Iterator[pa.RecordBatch]:
        try:
            yield from reader
        except duckdb.Error as exc:
            raise translate(exc) from exc
        except OSError as exc:
            # An interrupt while Arrow pulls from DuckDB surfaces as an Arrow IOError.
            if "INTERRUPT" in str(exc).upper():
                raise QueryCanceled("canceling statement due to user request") from exc
            error = translate_arrow(exc)
            if error is not None:
                raise error from exc
            raise

    return types, stream()


def describe(cursor: duckdb.DuckDBPyConnection, sql: str, n_params: int) -> list[str]:
    """DuckDB's column types for ``sql`` without running it (parameters bound to NULL)."""
    try:
        relation = cursor.sql(sql, params=[None] * n_params or None)
    except duckdb.Error as exc:
        raise translate(exc) from exc
    return [] if relation is None else [str(t) for t in relation.types]
