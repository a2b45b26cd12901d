"""Database: the storage engine, the catalog and a DuckDB instance, shared by every session."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import duckdb

from catalog.catalog import Catalog
from catalog.roles import RoleStore
from catalog.sequences import SequenceCounters
from catalog.store import CatalogStore
from sql.ddl.comments import Comments
from sql.execution import sequences
from sql.session.session import Session
from sql.session.settings import SERVER_VERSION
from storage.engine import StorageEngine
from storage.errors import InvalidCatalogName
from storage.options import StorageOptions

log = logging.getLogger(__name__)


class Database:
    """The one object server/ opens: hands out Sessions over one storage engine."""

    roles: RoleStore | None = None

    def __init__(
        self, name: str, engine: StorageEngine, catalog: Catalog, comments: Comments | None = None
    ) -> None:
        self.name = name
        self.comments = comments if comments is not None else Comments(None)
        self.engine = engine
        self.catalog = catalog
        self.version_string = (
            f"PostgreSQL {SERVER_VERSION.split()[0]} (nyala 0.1.0) on x86_64-pc-linux-gnu, "
            "compiled by Python, 64-bit"
        )
        # DuckDB only ever reads the scan streams nyala registers; no SQL may reach its files.
        # integer_division: int / int truncates as in PostgreSQL also where the planner cannot
        # type the operands (a table function's columns, say) to rewrite them.
        self.duckdb = duckdb.connect(
            config={"threads": 2, "enable_external_access": False, "integer_division": True}
        )
        self.duckdb.execute("SET TimeZone = 'UTC'")
        sequences.register(self.duckdb)
        self._version_lock = threading.Lock()
        self.catalog_version = 0

    @classmethod
    def open(cls, data_dir: Path, name: str = "nyala", fsync: bool = True) -> Database:
        """Open (or create) the database in ``data_dir``, replaying its write-ahead log."""
        data_dir = Path(data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        engine = StorageEngine.open(data_dir, StorageOptions(fsync=fsync))
        catalog = Catalog(
            engine, CatalogStore(data_dir, fsync=fsync), SequenceCounters(data_dir, fsync=fsync)
        )
        log.info("opened database %r in %s with %d tables", name, data_dir, len(catalog.tables()))
        database = cls(name, engine, catalog, Comments(data_dir, fsync=fsync))
        database.roles = RoleStore(data_dir, fsync=fsync)
        return database

    def session(self, user: str, database: str, startup_params: dict[str, str]) -> Session:
        if database != self.name:
            raise InvalidCatalogName(f'database "{database}" does not exist')
        return Session(self, user, startup_params)

    def bump_catalog_version(self) -> None:
        """Note a DDL change, so prepared statements bound to the old catalog are re-planned."""
        with self._version_lock:
            self.catalog_version += 1

    def close(self) -> None:
        self.duckdb.close()
        self.engine.close()
