from __future__ import annotations

import pyarrow as pa

from storage import data_type as t
from storage.data_type import ColumnId
from storage.schema import ColumnSchema, Schema


def _schema() -> Schema:
    return Schema(
        (
            ColumnSchema(ColumnId(3), "k", t.INT64, nullable=False),
            ColumnSchema(ColumnId(1), "v", t.varchar(4), default_sql="'x'"),
        ),
        1,
    )


def test_lookup_by_id_and_name():
    schema = _schema()
    assert schema.column(1).name == "v"
    assert schema.index_of(1) == 1
    assert schema.find("k").id == 3 and schema.find("nope") is None
    assert schema.key_column_ids == (3,)


def test_arrow_schema_names_fields_by_column_id():
    assert _schema().arrow_schema() == pa.schema(
        [pa.field("3", pa.int64(), False), pa.field("1", pa.string(), True)]
    )


def test_json_round_trip():
    schema = _schema()
    assert Schema.from_json(schema.to_json()) == schema
