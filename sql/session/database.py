"""Database: opens a data directory and hands out Sessions over its shared DatabaseContext."""

from __future__ import annotations

import logging
from pathlib import Path

from catalog import temp_tables
from catalog.catalog import Catalog
from catalog.comments import FILE_NAME as COMMENTS_FILE
from catalog.comments import Comments
from catalog.privileges import FILE_NAME as PRIVILEGES_FILE
from catalog.privileges import PrivilegeStore, check_connect
from catalog.roles import FILE_NAME as ROLES_FILE
from catalog.roles import RoleStore
from catalog.sequences import SequenceCounters
from catalog.store import CatalogStore
from sql.execution.backends import ClientLink
from sql.execution.context import DatabaseContext
from sql.session.session import Session
from storage.engine import StorageEngine
from storage.errors import InvalidCatalogName
from storage.options import StorageOptions

log = logging.getLogger(__name__)


class Database(DatabaseContext):
    """The one object server/ opens: the shared context, plus opening and sessions."""

    @classmethod
    def open(
        cls,
        data_dir: Path,
        name: str = "nyala",
        fsync: bool = True,
        options: StorageOptions | None = None,
    ) -> Database:
        """Open (or create) the database in ``data_dir``, replaying its write-ahead log;
        ``options``, when given, overrides ``fsync``."""
        data_dir = Path(data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        options = options or StorageOptions(fsync=fsync)
        fsync = options.fsync
        engine = StorageEngine.open(data_dir, options)
        catalog = Catalog(
            engine, CatalogStore(data_dir, fsync=fsync), SequenceCounters(data_dir, fsync=fsync)
        )
        temp_tables.drop_leftovers(catalog)
        log.info("opened database %r in %s with %d tables", name, data_dir, len(catalog.tables()))
        logged = engine.replayed_documents
        comments = Comments(data_dir, fsync=fsync, logged=logged.get(COMMENTS_FILE))
        database = cls(name, engine, catalog, comments)
        database.roles = RoleStore(data_dir, fsync=fsync, logged=logged.get(ROLES_FILE))
        database.privileges = PrivilegeStore(
            data_dir, fsync=fsync, logged=logged.get(PRIVILEGES_FILE)
        )
        engine.wal_keepers += [
            database.roles.keeps_wal,
            database.privileges.keeps_wal,
            comments.keeps_wal,
        ]
        return database

    def session(
        self,
        user: str,
        database: str,
        startup_params: dict[str, str],
        client: ClientLink | None = None,
    ) -> Session:
        if database != self.name:
            raise InvalidCatalogName(f'database "{database}" does not exist')
        check_connect(self.privileges, self.roles, user, database)
        return Session(self, user, startup_params, client)
