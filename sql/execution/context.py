"""DatabaseContext: what every session of one database shares, and what its queries run on.

Sessions and the catalog-query code read the database through this object
rather than through ``Database`` (sql/session/database.py), which builds it
from a data directory and hands out sessions: so nothing below the session
stage needs to know how a database is opened.
"""

from __future__ import annotations

import threading
from typing import Any

import duckdb

from catalog.catalog import Catalog
from catalog.comments import Comments
from catalog.privileges import PrivilegeStore
from catalog.roles import RoleStore
from sql.common.version import VERSION_STRING
from sql.execution import (
    catalog_calls,
    clock_functions,
    float_arithmetic,
    json_functions,
    number_formatting,
    numeric_arithmetic,
    pattern_functions,
    sequences,
)
from sql.execution.advisory_locks import AdvisoryLocks
from sql.execution.backends import BackendRegistry
from sql.execution.notifications import NotificationHub
from sql.execution.statement_stats import StatementStats
from sql.execution.table_activity import TableActivity
from sql.planner import array_dimensions
from storage.data_type import TabletId
from storage.engine import StorageEngine
from storage.errors import UndefinedTable


class DatabaseContext:
    """The storage engine, the catalog, the role, privilege and comment stores, the live
    backends and their statement statistics, the advisory locks, the LISTEN/NOTIFY channels
    and one DuckDB instance."""

    roles: RoleStore | None = None

    def __init__(
        self, name: str, engine: StorageEngine, catalog: Catalog, comments: Comments | None = None
    ) -> None:
        self.name = name
        self.comments = comments if comments is not None else Comments(None)
        self.engine = engine
        self.catalog = catalog
        self.version_string = VERSION_STRING
        # DuckDB only ever reads the scan streams nyala registers; no SQL may reach its files.
        # integer_division: int / int truncates as in PostgreSQL also where the planner cannot
        # type the operands (a table function's columns, say) to rewrite them.
        self.duckdb = duckdb.connect(
            config={"threads": 2, "enable_external_access": False, "integer_division": True}
        )
        self.duckdb.execute("SET TimeZone = 'UTC'")
        sequences.register(self.duckdb)
        clock_functions.register(self.duckdb)
        float_arithmetic.register(self.duckdb)
        numeric_arithmetic.register(self.duckdb)
        pattern_functions.register(self.duckdb)
        number_formatting.register(self.duckdb)
        catalog_calls.register(self.duckdb)
        json_functions.register(self.duckdb)
        self.duckdb.execute(";\n".join(array_dimensions.macro_statements()))
        self.advisory_locks = AdvisoryLocks()
        self.notifications = NotificationHub()
        self._version_lock = threading.Lock()
        self.catalog_version = 0
        self.backends = BackendRegistry()
        self.statements = StatementStats()
        self.table_activity = TableActivity(self._live_rows)
        self.privileges = PrivilegeStore(None)
        # Server-wide parameters the server's own flags set (max_connections ...), shown by
        # SHOW and pg_settings in every session instead of PostgreSQL's defaults.
        self.server_parameters: dict[str, str] = {}
        self.buffered_rows_limit: int | None = None
        """Rows one statement may hold in the server (each session's ``QueryRunner``)."""

    def _live_rows(self, tablet_id: TabletId) -> int:
        """What a tablet's storage holds: rows in DiskRowSets not deleted in their base data,
        plus the MemRowSet's (pg_stat_user_tables' starting estimate)."""
        try:
            stats = self.engine.tablet_stats(tablet_id)
        except UndefinedTable:
            return 0
        rowsets: Any = stats["rowsets"]
        memrowset_rows: Any = stats["memrowset_rows"]
        return sum(r["rows"] - r["deleted_rows"] for r in rowsets) + int(memrowset_rows)

    def limit_query_memory(self, megabytes: int) -> None:
        """Cap the memory DuckDB's operators (joins, sorts, aggregates) may hold at once, for
        all running queries together; a query that needs more fails with 53200."""
        self.duckdb.execute(f"SET memory_limit = '{int(megabytes)}MB'")

    def bump_catalog_version(self) -> None:
        """Note a DDL change, so prepared statements bound to the old catalog are re-planned."""
        with self._version_lock:
            self.catalog_version += 1

    def close(self) -> None:
        self.duckdb.close()
        self.engine.close()
