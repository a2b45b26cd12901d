"""pg_stat_statements, pg_stat_statements_info and pg_stat_statements_reset(), as version 1.10
of the extension has them in PostgreSQL 15.

The rows come from the database's ``StatementStats`` at each query that reads
them.  As in PostgreSQL, a role sees the text and query id of its own
statements, and of everyone's when it has the privileges of
pg_read_all_stats (superusers do); others' show ``<insufficient privilege>``
and a NULL query id.  Planning is not timed (``pg_stat_statements.track_planning``
is off by default in PostgreSQL too) and the buffer, WAL and JIT counters,
which have no meaning over tablets, are 0.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import duckdb

from catalog.roles import READ_ALL_STATS
from sql.execution.statement_stats import StatementStats
from sql.pg_catalog.activity import Activity
from storage.errors import InsufficientPrivilege

_UDF = "nya_"
PREFIX = "pgf_"
RELATIONS = frozenset({"pg_stat_statements", "pg_stat_statements_info"})
_INSUFFICIENT = "<insufficient privilege>"
_UNUSED_COUNTERS = (0,) * 10 + (0.0,) * 4 + (0, 0, Decimal(0)) + (0, 0.0) * 4
"""shared_blks_hit .. temp_blks_written, the four I/O times, wal_*, jit_*."""


class StatementStatistics:
    """The statement entries as one session (``activity``'s role) may see and reset them."""

    def __init__(self, stats: StatementStats, activity: Activity, database_oid: int) -> None:
        self._stats = stats
        self._activity = activity
        self._database_oid = database_oid

    def statement_rows(self) -> list[tuple[Any, ...]]:
        sees_all = self._activity.has_privileges_of(READ_ALL_STATS)
        role_oids = self._activity.role_oids
        rows: list[tuple[Any, ...]] = []
        for entry in self._stats.entries():
            visible = sees_all or self._activity.has_privileges_of(entry.user)
            rows.append(
                (
                    role_oids.get(entry.user),
                    self._database_oid,
                    entry.toplevel,
                    entry.queryid if visible else None,
                    entry.text if visible else _INSUFFICIENT,
                    0,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    entry.calls,
                    entry.total_ms,
                    entry.min_ms,
                    entry.max_ms,
                    entry.mean_ms,
                    entry.stddev_ms,
                    entry.rows,
                    *_UNUSED_COUNTERS,
                )  # fmt: skip
            )
        return rows

    def rows(self, relation: str) -> list[tuple[Any, ...]]:
        if relation == "pg_stat_statements":
            return self.statement_rows()
        return [(self._stats.dealloc, self._stats.stats_reset)]

    def reset(self, userid: int | None, dbid: int | None, queryid: int | None) -> str:
        """pg_stat_statements_reset(userid, dbid, queryid): 0 (the default) matches any;
        only superusers may call it, as its EXECUTE is revoked from PUBLIC."""
        if not self._activity.is_superuser():
            raise InsufficientPrivilege("permission denied for function pg_stat_statements_reset")
        user: str | None = None
        if userid:
            names = [n for n, oid in self._activity.role_oids.items() if oid == userid]
            if not names:
                return ""
            user = names[0]
        if dbid and dbid != self._database_oid:
            return ""
        self._stats.reset(user, queryid or None)
        return ""


MACROS: dict[str, str] = {
    "pg_stat_statements_reset(u := 0, d := 0, q := 0)": "nya_statements_reset(u, d, q)",
}


def names() -> frozenset[str]:
    """Function names (without the prefix) the rewriter sends to these macros."""
    return frozenset(spec.split("(")[0] for spec in MACROS)


def register(duck: duckdb.DuckDBPyConnection, current: Callable[[], StatementStatistics]) -> None:
    """Create ``nya_statements_reset`` and its ``pgf_`` macro; each call goes to ``current()``,
    the StatementStatistics of the session whose query runs."""
    duck.create_function(  # type: ignore[call-overload]  # DuckDB's stubs name only types
        _UDF + "statements_reset",
        lambda u, d, q: current().reset(u, d, q),
        ["BIGINT", "BIGINT", "BIGINT"],
        "VARCHAR",
        null_handling="special",
        side_effects=True,
    )
    for spec, body in MACROS.items():
        duck.execute(f"CREATE MACRO {PREFIX}{spec} AS {body}")
