"""pg_stat_database, pg_stat_all_tables, pg_stat_user_tables and pg_stat_sys_tables with
PostgreSQL 15's columns, from the database's ``TableActivity`` counters and its storage.

What maps onto nyala's storage is read from it when the view is read:
``n_dead_tup`` is the row versions compactions would fold away (deleted rows
still in DiskRowSet files, REDO delta records and DeltaMemStore rows) as of the
tablet's last flush or compaction, plus what committed updates and deletes
left since;
``last_autovacuum`` / ``autovacuum_count`` are the background compactions and
history GC of the table's tablets (the maintenance manager does VACUUM's
work), and ``last_vacuum`` / ``last_analyze`` the VACUUM and ANALYZE
statements.  A scan that reads a primary-key range or goes through a
secondary index counts as an index scan, any other as a sequential scan.
There is no buffer cache, so ``blks_hit`` is 0 and ``blks_read`` counts the
column blocks scans decoded; there are no HOT updates, temporary files,
recovery conflicts or automatic ANALYZE (0 / NULL).  nyala's own catalogs
are not tables, so pg_stat_sys_tables is empty and pg_stat_all_tables lists
the user tables.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable
from typing import Any

import duckdb

from catalog.catalog import Catalog
from catalog.table import TableInfo
from sql.execution.context import DatabaseContext
from storage.data_type import TabletId
from storage.errors import InsufficientPrivilege, UndefinedTable
from storage.maintenance_manager import CLEANUP_KINDS

RELATIONS = frozenset(
    {"pg_stat_database", "pg_stat_all_tables", "pg_stat_user_tables", "pg_stat_sys_tables"}
)


def _timestamp(epoch_s: float | None) -> dt.datetime | None:
    return None if epoch_s is None else dt.datetime.fromtimestamp(epoch_s, dt.UTC)


def _latest(values: list[dt.datetime | None]) -> dt.datetime | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


class TableStatistics:
    """The statistics views as one session reads them (its transaction's catalog)."""

    def __init__(
        self,
        db: DatabaseContext,
        catalog: Callable[[], Catalog],
        database_oid: int,
        is_superuser: Callable[[], bool] = lambda: True,
    ) -> None:
        self._db = db
        self._catalog = catalog
        self._database_oid = database_oid
        self._is_superuser = is_superuser

    def reset(self, relid: int | None) -> str:
        """pg_stat_reset() (``relid`` None) or pg_stat_reset_single_table_counters(relid);
        only superusers may, as their EXECUTE is revoked from PUBLIC."""
        name = "pg_stat_reset" if relid is None else "pg_stat_reset_single_table_counters"
        if not self._is_superuser():
            raise InsufficientPrivilege(f"permission denied for function {name}")
        if relid is None:
            self._db.table_activity.reset()
            return ""
        for table in self._catalog().tables():
            if table.oid == relid:
                self._db.table_activity.reset(table.tablet_ids)
        return ""

    def rows(self, relation: str) -> list[tuple[Any, ...]]:
        if relation == "pg_stat_database":
            return [self._database_row()]
        if relation == "pg_stat_sys_tables":
            return []
        tables = sorted(self._catalog().tables(), key=lambda t: t.name)
        return [self._table_row(table) for table in tables]

    def _stored_dead_rows(self, tablet_id: TabletId) -> int:
        try:
            stats = self._db.engine.tablet_stats(tablet_id)
        except UndefinedTable:  # dropped since the catalog was read
            return 0
        rowsets: Any = stats["rowsets"]
        return sum(
            r["deleted_rows"] + r["redo_records"] + r["delta_memstore_rows"] for r in rowsets
        )

    def _table_row(self, table: TableInfo) -> tuple[Any, ...]:
        activity = self._db.table_activity
        cleanups: list[tuple[float, int]] = []
        for tablet_id in table.tablet_ids:
            finished = self._db.engine.maintenance.finished(tablet_id)
            runs = sum(count for _, count in finished.values())
            activity.storage_synced(
                tablet_id, runs, functools.partial(self._stored_dead_rows, tablet_id)
            )
            cleanups += [done for kind, done in finished.items() if kind in CLEANUP_KINDS]
        counters = activity.table(table.tablet_ids)
        hidden = {c.id for c in table.hidden_columns}
        has_index = not (hidden & set(table.schema.key_column_ids)) or bool(table.indexes)
        return (
            table.oid,
            "public",
            table.name,
            counters.seq_scan,
            counters.seq_tup_read,
            counters.idx_scan if has_index else None,
            counters.idx_tup_fetch if has_index else None,
            counters.n_tup_ins,
            counters.n_tup_upd,
            counters.n_tup_del,
            0,
            max(counters.live_rows, 0),
            max(counters.dead_rows, 0),
            counters.n_mod_since_analyze,
            counters.n_ins_since_vacuum,
            counters.last_vacuum,
            _latest([_timestamp(finished) for finished, _ in cleanups]),
            counters.last_analyze,
            None,
            counters.vacuum_count,
            sum(runs for _, runs in cleanups),
            counters.analyze_count,
            0,
        )

    def _database_row(self) -> tuple[Any, ...]:
        tablets, database = self._db.table_activity.totals()
        backends = self._db.backends.all()
        now = dt.datetime.now(dt.UTC)
        live_ms = sum((now - b.backend_start).total_seconds() * 1000 for b in backends)
        return (
            self._database_oid,
            self._db.name,
            len(backends),
            database.xact_commit,
            database.xact_rollback,
            database.blocks_read,
            0,
            tablets.seq_tup_read + tablets.idx_tup_fetch,
            tablets.idx_tup_fetch,
            tablets.n_tup_ins,
            tablets.n_tup_upd,
            tablets.n_tup_del,
            0,
            0,
            0,
            self._db.engine.waits_for.deadlocks,
            0,
            None,
            0.0,
            0.0,
            database.session_time_ms + live_ms,
            database.active_time_ms,
            0.0,
            database.sessions,
            0,
            0,
            database.sessions_killed,
            database.stats_reset,
        )


MACROS: dict[str, str] = {
    "pg_stat_clear_snapshot()": "nya_stat_clear_snapshot()",
    "pg_stat_reset()": "nya_stat_reset(NULL)",
    "pg_stat_reset_single_table_counters(r)": "nya_stat_reset(r)",
}


def names() -> frozenset[str]:
    """Function names (without the prefix) the rewriter sends to these macros."""
    return frozenset(spec.split("(")[0] for spec in MACROS)


def register(duck: duckdb.DuckDBPyConnection, current: Callable[[], TableStatistics]) -> None:
    """Create the ``nya_stat_*`` functions and their ``pgf_`` macros; each call goes to
    ``current()``, the TableStatistics of the session whose query runs."""
    duck.create_function(  # type: ignore[call-overload]  # DuckDB's stubs name only types
        "nya_stat_reset",
        lambda relid: current().reset(relid),
        ["BIGINT"],
        "VARCHAR",
        null_handling="special",
        side_effects=True,
    )
    duck.create_function(  # type: ignore[call-overload]
        "nya_stat_clear_snapshot", lambda: "", [], "VARCHAR", side_effects=True
    )
    for spec, body in MACROS.items():
        duck.execute(f"CREATE MACRO pgf_{spec} AS {body}")
