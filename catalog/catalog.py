"""Catalog: create, drop and look up tables by name; allocate table, column and tablet IDs."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from catalog.store import FORMAT_VERSION, CatalogStore
from catalog.table import TableId, TableInfo
from storage.engine import StorageEngine
from storage.errors import DuplicateTable, UndefinedTable
from storage.schema import ColumnSchema, Schema
from storage.types import ColumnId, DataType, TabletId

log = logging.getLogger(__name__)


class Catalog:
    """The set of tables, kept in step with the storage engine's tablets.

    Every change is written to the catalog document before it is acknowledged.
    Creating a table makes its tablets durable first and names them in the
    document second; dropping does the reverse.  A crash between the two steps
    leaves only tablets no table names, which ``open`` removes.
    """

    def __init__(self, engine: StorageEngine, store: CatalogStore) -> None:
        self._engine = engine
        self._store = store
        self._lock = threading.Lock()
        doc = store.load()
        self._tables: dict[str, TableInfo] = {
            t.name: t
            for t in (TableInfo.from_json(d) for d in doc["tables"])  # type: ignore[attr-defined]
        }
        self._next_table_id = int(doc["next_table_id"])  # type: ignore[call-overload]
        self._next_tablet_id = int(doc["next_tablet_id"])  # type: ignore[call-overload]
        self._remove_orphan_tablets()

    def _remove_orphan_tablets(self) -> None:
        named = {tid for t in self._tables.values() for tid in t.tablet_ids}
        for tablet_id in self._engine.tablet_ids():
            self._next_tablet_id = max(self._next_tablet_id, tablet_id + 1)
            if tablet_id not in named:
                log.warning("removing tablet %d that no table names (interrupted DDL)", tablet_id)
                self._engine.drop_tablet(tablet_id)

    def _save(self) -> None:
        self._store.save(
            {
                "version": FORMAT_VERSION,
                "next_table_id": self._next_table_id,
                "next_tablet_id": self._next_tablet_id,
                "tables": [t.to_json() for t in self._tables.values()],
            }
        )

    def get_table(self, name: str, *, position: int | None = None) -> TableInfo:
        """Return the table called ``name`` or raise UndefinedTable (42P01)."""
        table = self._tables.get(name)
        if table is None:
            raise UndefinedTable(f'relation "{name}" does not exist', position=position)
        return table

    def find_table(self, name: str) -> TableInfo | None:
        return self._tables.get(name)

    def tables(self) -> list[TableInfo]:
        return sorted(self._tables.values(), key=lambda t: t.table_id)

    def create_table(
        self,
        name: str,
        columns: Sequence[tuple[str, DataType, bool, str | None]],
        key: Sequence[str],
    ) -> TableInfo:
        """Create a table from (name, type, nullable, default SQL) columns in declared order.

        Column IDs follow the declared order; the storage schema puts the ``key``
        columns first, in key order, and makes them NOT NULL.
        """
        with self._lock:
            if name in self._tables:
                raise DuplicateTable(f'relation "{name}" already exists')
            declared = [
                ColumnSchema(
                    ColumnId(i), col_name, col_type, nullable and col_name not in key, default
                )
                for i, (col_name, col_type, nullable, default) in enumerate(columns)
            ]
            by_name = {c.name: c for c in declared}
            key_columns = [by_name[k] for k in key]
            schema = Schema(
                tuple(key_columns + [c for c in declared if c.name not in key]), len(key)
            )
            tablet_id = TabletId(self._next_tablet_id)
            self._next_tablet_id += 1
            table = TableInfo(
                table_id=TableId(self._next_table_id),
                name=name,
                schema=schema,
                tablet_ids=(tablet_id,),
                next_column_id=len(columns),
                column_order=tuple(c.id for c in declared),
            )
            self._next_table_id += 1
            self._engine.create_tablet(tablet_id, schema)
            self._tables[name] = table
            self._save()
            return table

    def drop_table(self, name: str) -> TableInfo:
        with self._lock:
            table = self.get_table(name)
            del self._tables[name]
            self._save()
            for tablet_id in table.tablet_ids:
                self._engine.drop_tablet(tablet_id)
            return table
