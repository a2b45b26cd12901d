from __future__ import annotations

from catalog.table import FIRST_USER_OID, TableId, TableInfo
from storage import data_type as t
from storage.data_type import ColumnId, TabletId
from storage.schema import ColumnSchema, Schema


def test_json_round_trip_and_oid():
    schema = Schema(
        (
            ColumnSchema(ColumnId(1), "k", t.INT32, False),
            ColumnSchema(ColumnId(0), "v", t.varchar(3)),
        ),
        1,
    )
    table = TableInfo(TableId(3), "x", schema, (TabletId(9),), 2, (ColumnId(0), ColumnId(1)))
    assert TableInfo.from_json(table.to_json()) == table
    assert table.oid == FIRST_USER_OID + 3
    assert [c.name for c in table.columns] == ["v", "k"]
