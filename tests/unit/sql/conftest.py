from __future__ import annotations

import pytest

from catalog.table import TableId, TableInfo
from storage import data_type as t
from storage.data_type import ColumnId, TabletId
from storage.errors import UndefinedTable
from storage.schema import ColumnSchema, Schema


class CatalogDouble:
    """Just enough of catalog.Catalog for binding and COMMENT ON: lookups over fixed tables."""

    def __init__(self, tables: list[TableInfo]) -> None:
        self._tables = {table.name: table for table in tables}

    def get_table(self, name: str, *, position: int | None = None) -> TableInfo:
        if name not in self._tables:
            raise UndefinedTable(f'relation "{name}" does not exist', position=position)
        return self._tables[name]

    def find_table(self, name: str) -> TableInfo | None:
        return self._tables.get(name)

    def partition_view(self, name: str) -> None:
        return None  # no table here has PostgreSQL partitions

    def views(self) -> list[object]:
        return []

    def find_view(self, name: str) -> None:
        return None

    def set_comment(self, comments, table_oid: int, attnum: int, text: str | None) -> None:
        """Outside a transaction, as here, the real catalog sets the comment at once."""
        comments.set(table_oid, attnum, text)


def make_table(table_id: int, name: str, columns: list[tuple[str, t.DataType]], key: int = 1):
    cols = tuple(
        ColumnSchema(ColumnId(i), n, typ, nullable=i >= key) for i, (n, typ) in enumerate(columns)
    )
    return TableInfo(
        TableId(table_id),
        name,
        Schema(cols, key),
        (TabletId(table_id),),
        len(cols),
        tuple(c.id for c in cols),
    )


@pytest.fixture
def catalog() -> CatalogDouble:
    return CatalogDouble(
        [
            make_table(
                1, "t", [("a", t.INT32), ("b", t.STRING), ("c", t.DOUBLE), ("v", t.varchar(5))]
            ),
            make_table(2, "u", [("a", t.INT32), ("n", t.decimal(10, 2))]),
        ]
    )


@pytest.fixture
def session(tmp_path):
    """A session on a fresh database (a test file may define its own ``session`` instead)."""
    from sql.session.database import Database

    db = Database.open(tmp_path, fsync=False)
    opened = db.session("nyala", "nyala", {})
    yield opened
    opened.close()
    db.close()
