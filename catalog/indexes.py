"""Secondary indexes: IndexInfo, the index tablet's schema, and the entries a row gives it.

An index is a tablet of its own (YugabyteDB's design), written in the same
transaction as the rows it indexes, so it shares their MVCC, WAL and
compactions.  Its key is two binary columns:

- ``ikey``: the indexed columns encoded by ``storage.key_encoding.encode_sortable``
  (NULLs allowed, order preserved, so a prefix of the columns is a prefix of the bytes);
- ``suffix``: the row's encoded primary key, except in a unique index, where it is
  empty, so a second live row with the same values collides on the tablet's key: the
  duplicate is the tablet's own 23505, and its provisional entry is the row lock a
  concurrent inserter of the same values waits on.  With PostgreSQL's NULL semantics a
  row with a NULL in an indexed column conflicts with nothing, so its suffix is its
  primary key again (unless ``NULLS NOT DISTINCT``).

The other columns copy the row's primary key (to find the row) and the INCLUDE columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from storage.data_type import BINARY, ColumnId, DataType, TabletId
from storage.key_encoding import encode_sortable, key_of_sortable
from storage.schema import ColumnSchema, Schema

IKEY = ColumnId(0)
SUFFIX = ColumnId(1)
_FIRST_VALUE_ID = 2


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """One index of a table: its name, OID number, tablet and definition.

    ``columns`` and ``include`` are base-table column IDs; ``predicate`` is a partial
    index's WHERE as PostgreSQL SQL over the table's column names.  ``constraint`` says it
    was made by a UNIQUE constraint (so pg_constraint lists it and ALTER TABLE DROP
    CONSTRAINT removes it).
    """

    name: str
    index_id: int
    tablet_id: TabletId
    columns: tuple[ColumnId, ...]
    unique: bool = False
    include: tuple[ColumnId, ...] = ()
    nulls_not_distinct: bool = False
    predicate: str | None = None
    constraint: bool = False
    valid: bool = True
    """False while CREATE INDEX CONCURRENTLY fills it (or after it failed, as PostgreSQL's
    INVALID index): writers keep it in step, reads do not use it."""

    def to_json(self) -> dict[str, object]:
        return {
            **({} if self.valid else {"valid": False}),
            "name": self.name,
            "index_id": self.index_id,
            "tablet_id": self.tablet_id,
            "columns": list(self.columns),
            "unique": self.unique,
            "include": list(self.include),
            "nulls_not_distinct": self.nulls_not_distinct,
            "predicate": self.predicate,
            "constraint": self.constraint,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> IndexInfo:
        return cls(
            name=str(doc["name"]),
            index_id=int(doc["index_id"]),
            tablet_id=TabletId(int(doc["tablet_id"])),
            columns=tuple(ColumnId(int(c)) for c in doc["columns"]),
            unique=bool(doc.get("unique")),
            include=tuple(ColumnId(int(c)) for c in doc.get("include") or ()),
            nulls_not_distinct=bool(doc.get("nulls_not_distinct")),
            predicate=doc.get("predicate"),
            constraint=bool(doc.get("constraint")),
            valid=bool(doc.get("valid", True)),
        )

    def renamed(self, name: str) -> IndexInfo:
        return replace(self, name=name)

    def reads(self) -> set[ColumnId]:
        """The base columns whose change can change this index's entry for a row."""
        return {*self.columns, *self.include}


def index_schema(base: Schema, index: IndexInfo) -> Schema:
    """The index tablet's schema: (ikey, suffix) key, then the row's key and INCLUDE columns."""
    values = [
        *base.key_columns,
        *(base.column(c) for c in index.include if c not in base.key_column_ids),
    ]
    columns = [
        ColumnSchema(IKEY, "ikey", BINARY, False),
        ColumnSchema(SUFFIX, "suffix", BINARY, False),
        *(
            ColumnSchema(ColumnId(_FIRST_VALUE_ID + i), f"c{c.id}", c.type, c.nullable)
            for i, c in enumerate(values)
        ),
    ]
    return Schema(tuple(columns), 2)


def value_columns(base: Schema, index: IndexInfo) -> list[tuple[ColumnId, ColumnId]]:
    """(base column ID, index tablet column ID) of each column an entry copies."""
    schema = index_schema(base, index)
    return [(ColumnId(int(c.name[1:])), c.id) for c in schema.columns[2:]]


def encode_values(base: Schema, index: IndexInfo, arrays: Sequence[pa.Array]) -> pa.Array:
    """``ikey`` for the indexed columns' values (one array per column, in index order)."""
    return encode_sortable(arrays, [base.column(c).type for c in index.columns])


def entries(
    base: Schema, index: IndexInfo, column: Callable[[ColumnId], pa.Array]
) -> pa.RecordBatch:
    """The index entries of rows whose values ``column(base column ID)`` gives, as a storage
    batch (fields named by the index tablet's column IDs)."""
    arrays = [column(c) for c in index.columns]
    ikey = encode_values(base, index, arrays)
    primary = encode_sortable(
        [column(c.id) for c in base.key_columns], [c.type for c in base.key_columns]
    )
    if index.unique:
        has_null = None
        for array in arrays:
            nulls = array.is_null()
            has_null = nulls if has_null is None else pc.or_(has_null, nulls)
        if index.nulls_not_distinct or has_null is None:
            suffix = pa.array([b""] * len(ikey), pa.binary())
        else:
            suffix = pc.if_else(has_null, primary, pa.scalar(b""))
    else:
        suffix = primary
    fields: list[pa.Array] = [ikey, suffix]
    names = [str(IKEY), str(SUFFIX)]
    schema = index_schema(base, index)
    for base_id, index_id in value_columns(base, index):
        fields.append(column(base_id).cast(schema.column(index_id).type.arrow_type))
        names.append(str(index_id))
    return pa.RecordBatch.from_arrays(fields, names=names)


def row_key(key_types: Sequence[DataType], entry_key: bytes) -> bytes | None:
    """The encoded primary key of the row an index entry names, from the entry's encoded
    tablet key (``ikey`` escaped and terminated, then ``suffix`` raw); None when its suffix
    is empty (a unique index's entry: the key is in the copied columns only)."""
    suffix = entry_key[entry_key.find(b"\x00\x00") + 2 :]
    return key_of_sortable(suffix, key_types)


def entry_keys(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Just the key columns of entries (what deleting them needs)."""
    return batch.select([str(IKEY), str(SUFFIX)])
