"""ColumnSchema and Schema: a table's columns by internal ID, key columns first.

Names are for users, IDs are for data (kudu-schema-changes.txt): a column
keeps its ID for life and an ID is never reused, so a rename touches only
metadata and a column dropped and added again under the same name never sees
the old data.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from storage.data_type import ColumnId, DataType


@dataclass(frozen=True, slots=True)
class ColumnSchema:
    """One column: its ID, user-facing name, type, nullability and default.

    ``default_sql`` is the column's write default as constant SQL text
    (PostgreSQL spelling), kept for DDL display and evaluated by the SQL layer.
    ``encoding`` and ``compression`` name the column's cfile encoding and block
    codec in Impala's words (``storage.cfile.encoding.EncodingType`` and
    ``storage.cfile.compression.CompressionType`` values).  ``read_default`` is
    what rows written before the column was added read (Kudu's read default),
    as a MemRowSet value (``storage.tablet.memrowset.to_storage_values``).
    """

    id: ColumnId
    name: str
    type: DataType
    nullable: bool = True
    default_sql: str | None = None
    encoding: str = "AUTO_ENCODING"
    compression: str = "DEFAULT_COMPRESSION"
    read_default: object = None

    def to_json(self) -> dict[str, object]:
        doc: dict[str, object] = {
            "id": self.id,
            "name": self.name,
            "type": self.type.to_json(),
            "nullable": self.nullable,
        }
        if self.default_sql is not None:
            doc["default_sql"] = self.default_sql
        if self.encoding != "AUTO_ENCODING":
            doc["encoding"] = self.encoding
        if self.compression != "DEFAULT_COMPRESSION":
            doc["compression"] = self.compression
        if self.read_default is not None:
            doc["read_default"] = _json_value(self.read_default)
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ColumnSchema:
        return cls(
            id=ColumnId(int(doc["id"])),
            name=str(doc["name"]),
            type=DataType.from_json(doc["type"]),
            nullable=bool(doc["nullable"]),
            default_sql=doc.get("default_sql"),
            encoding=str(doc.get("encoding", "AUTO_ENCODING")),
            compression=str(doc.get("compression", "DEFAULT_COMPRESSION")),
            read_default=_from_json_value(doc.get("read_default")),
        )


def _json_value(value: object) -> object:
    """A MemRowSet value as JSON: bytes and decimals tagged, the rest as they are."""
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    return value


def _from_json_value(value: object) -> object:
    if isinstance(value, dict):
        if "bytes" in value:
            return bytes.fromhex(str(value["bytes"]))
        return decimal.Decimal(str(value["decimal"]))
    return value


@dataclass(frozen=True, slots=True)
class Schema:
    """An ordered list of columns whose first ``num_key_columns`` form the primary key.

    Invariants: key columns come first and are NOT NULL; column IDs are unique.
    """

    columns: tuple[ColumnSchema, ...]
    num_key_columns: int
    _by_id: dict[int, int] = field(init=False, repr=False, compare=False)
    _by_name: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        assert 0 < self.num_key_columns <= len(self.columns), "a schema needs a primary key"
        assert all(not c.nullable for c in self.key_columns), "key columns are NOT NULL"
        object.__setattr__(self, "_by_id", {c.id: i for i, c in enumerate(self.columns)})
        object.__setattr__(self, "_by_name", {c.name: i for i, c in enumerate(self.columns)})
        assert len(self._by_id) == len(self.columns), "column ids are unique"

    @property
    def key_columns(self) -> tuple[ColumnSchema, ...]:
        return self.columns[: self.num_key_columns]

    @property
    def column_ids(self) -> tuple[ColumnId, ...]:
        return tuple(c.id for c in self.columns)

    @property
    def key_column_ids(self) -> tuple[ColumnId, ...]:
        return tuple(c.id for c in self.key_columns)

    def column(self, column_id: int) -> ColumnSchema:
        return self.columns[self._by_id[column_id]]

    def find_id(self, column_id: int) -> ColumnSchema | None:
        idx = self._by_id.get(column_id)
        return None if idx is None else self.columns[idx]

    def index_of(self, column_id: int) -> int:
        return self._by_id[column_id]

    def find(self, name: str) -> ColumnSchema | None:
        idx = self._by_name.get(name)
        return None if idx is None else self.columns[idx]

    def arrow_schema(self, column_ids: tuple[ColumnId, ...] | None = None) -> pa.Schema:
        """Arrow schema of a projection; fields are named by column ID as strings."""
        cols = self.columns if column_ids is None else [self.column(i) for i in column_ids]
        return pa.schema([pa.field(str(c.id), c.type.arrow_type, c.nullable) for c in cols])

    def to_json(self) -> dict[str, object]:
        return {
            "columns": [c.to_json() for c in self.columns],
            "num_key_columns": self.num_key_columns,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Schema:
        cols = tuple(ColumnSchema.from_json(c) for c in doc["columns"])
        return cls(cols, int(doc["num_key_columns"]))
