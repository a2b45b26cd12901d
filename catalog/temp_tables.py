"""Temporary tables: a session's private ``pg_temp`` namespace inside the one catalog.

A temporary table is an ordinary catalog table under an internal name, ``pg_temp_<n>.<name>``,
that only its session's ``TempNamespace`` maps ``name`` (or ``pg_temp.name``) to: other
sessions cannot name it, and the session's own name shadows a permanent table of the same
name, as ``pg_temp`` comes first in PostgreSQL's search path.  The namespace drops its
tables when the session ends, and at commit applies each table's ``ON COMMIT`` action.
A server that stopped without ending its sessions drops their leftovers at the next start
(``drop_leftovers``); PostgreSQL's temporary tables do not survive a restart either.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass

from catalog.catalog import Catalog

log = logging.getLogger(__name__)

SCHEMA_PREFIX = "pg_temp_"


class OnCommit(enum.Enum):
    """What COMMIT does to a temporary table."""

    PRESERVE_ROWS = "PRESERVE ROWS"
    DELETE_ROWS = "DELETE ROWS"
    DROP = "DROP"


@dataclass(frozen=True, slots=True)
class TempTable:
    name: str
    internal: str
    on_commit: OnCommit


def is_temporary(internal_name: str) -> bool:
    return internal_name.startswith(SCHEMA_PREFIX) and "." in internal_name


def user_name(internal_name: str) -> str:
    """``t`` for ``pg_temp_3.t``; any other name unchanged."""
    return internal_name.split(".", 1)[1] if is_temporary(internal_name) else internal_name


class TempNamespace:
    """One session's temporary tables, by the names the session gave them."""

    def __init__(self, catalog: Catalog, number: int) -> None:
        self._catalog = catalog
        self.seen = catalog
        """The catalog the session's statements see: its open transaction's view, whose
        DROP or ROLLBACK of a temporary table lets the name reach a permanent one again."""
        self.schema = f"{SCHEMA_PREFIX}{number}"
        self._tables: dict[str, TempTable] = {}

    def internal_name(self, name: str) -> str:
        return f"{self.schema}.{name}"

    def resolve(self, name: str) -> str | None:
        """The catalog name of this session's temporary table ``name``, if it has one."""
        table = self._tables.get(name)
        if table is None or self.seen.find_table(table.internal) is None:
            return None
        return table.internal

    def add(self, name: str, on_commit: OnCommit) -> TempTable:
        table = TempTable(name, self.internal_name(name), on_commit)
        self._tables[name] = table
        return table

    def forget_missing(self) -> None:
        """Drop the names of tables that no longer exist (a committed DROP TABLE took them)."""
        for name, table in list(self._tables.items()):
            if self._catalog.find_table(table.internal) is None:
                del self._tables[name]

    def with_action(self, action: OnCommit) -> list[TempTable]:
        return [t for t in self._tables.values() if t.on_commit is action]

    def drop(self, table: TempTable) -> None:
        self._tables.pop(table.name, None)
        if self._catalog.find_table(table.internal) is not None:
            self._catalog.drop_table(table.internal, cascade=True)

    def drop_all(self) -> None:
        """End of the session: every temporary table goes."""
        for table in list(self._tables.values()):
            self.drop(table)

    def __bool__(self) -> bool:
        return bool(self._tables)


def drop_leftovers(catalog: Catalog) -> None:
    """Drop the temporary tables of sessions a stopped server never ended."""
    for table in catalog.tables():
        if is_temporary(table.name):
            log.info("dropping temporary table %s left by an earlier server", table.name)
            catalog.drop_table(table.name, cascade=True)
