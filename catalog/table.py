"""TableInfo: one table's identity, schema and tablets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NewType

from catalog.constraints import CheckConstraint
from catalog.foreign_keys import ForeignKey
from catalog.indexes import IndexInfo
from catalog.partition import Partition, PartitionSchema
from catalog.sequences import SequenceInfo
from catalog.store import JsonObject
from storage.data_type import ColumnId, TabletId
from storage.schema import ColumnSchema, Schema

TableId = NewType("TableId", int)

# PostgreSQL hands out user OIDs from 16384; tables report their OID as this plus the table ID.
FIRST_USER_OID = 16384


@dataclass(frozen=True, slots=True)
class TableInfo:
    """A table: its permanent ID, current name, schema and tablets.

    ``next_column_id`` is the ID the next added column will get; it only grows,
    so a column ID is never reused within the table.  ``column_order`` is the
    order users declared and see (``SELECT *``, ``INSERT`` without a column
    list, attnum); the storage schema keeps Kudu's order, key columns first.
    A partitioned table has a ``partition_schema`` and one ``Partition`` per
    tablet, in ``tablet_ids`` order; an unpartitioned one has one tablet.
    ``column_storage`` holds (column ID, encoding, compression) for columns
    declared with Impala's ENCODING / COMPRESSION attributes.  ``sequences``
    are the sequences of its SERIAL and IDENTITY columns and of its hidden key.

    A table created without a primary key gets Kudu 1.17's hidden key: a
    bigint ``auto_incrementing_id`` column that is the whole key, filled from
    the table's sequence, absent from ``column_order`` and so from ``SELECT *``,
    the catalogs and COPY, but readable by name and used by UPDATE and DELETE.
    """

    table_id: TableId
    name: str
    schema: Schema
    tablet_ids: tuple[TabletId, ...]
    next_column_id: int
    column_order: tuple[ColumnId, ...]
    partition_schema: PartitionSchema | None = None
    partitions: tuple[Partition, ...] = ()
    column_storage: tuple[tuple[ColumnId, str, str], ...] = ()
    sequences: tuple[SequenceInfo, ...] = ()
    primary_key_name: str | None = None
    """The primary key's constraint name when ADD CONSTRAINT gave it; ``<table>_pkey`` else."""
    checks: tuple[CheckConstraint, ...] = ()
    indexes: tuple[IndexInfo, ...] = ()
    """Secondary indexes (UNIQUE constraints among them), each with its own tablet."""
    foreign_keys: tuple[ForeignKey, ...] = ()
    """The foreign keys of this table (it is their referencing side)."""
    pending_partitioning: str = ""
    """Hash/range partitioning (``PARTITION BY ...``) a ``SECURITY LABEL FOR nyala`` gave
    this table while it has the hidden key; ADD PRIMARY KEY applies it, as a pg_dump
    restore does: the label comes before the data, the key after."""

    def index_named(self, name: str) -> IndexInfo | None:
        for index in self.indexes:
            if index.name == name:
                return index
        return None

    @property
    def columns(self) -> tuple[ColumnSchema, ...]:
        """Columns in the order users declared them."""
        return tuple(self.schema.column(i) for i in self.column_order)

    @property
    def hidden_columns(self) -> tuple[ColumnSchema, ...]:
        """Columns in the storage schema that users do not see (the hidden key)."""
        shown = set(self.column_order)
        return tuple(c for c in self.schema.columns if c.id not in shown)

    @property
    def readable_columns(self) -> tuple[ColumnSchema, ...]:
        """Every column a query may name: the declared ones, then the hidden ones."""
        return self.columns + self.hidden_columns

    def attnum(self, column_id: ColumnId) -> int:
        """A column's number as PostgreSQL gives it (pg_attribute.attnum); 0 for a hidden column.

        It is the column's place in creation order, dropped columns included, so,
        as in PostgreSQL, it never changes while the column exists: column IDs
        are handed out in that order and never reused; only the hidden key's ID
        is skipped.
        """
        if column_id not in self.column_order:
            return 0
        return self._creation_number(column_id)

    @property
    def dropped_attnums(self) -> tuple[int, ...]:
        """The attnums of dropped columns, which PostgreSQL keeps as ``attisdropped`` rows."""
        present = {c.id for c in self.schema.columns}
        return tuple(
            self._creation_number(ColumnId(i))
            for i in range(self.next_column_id)
            if i not in present
        )

    def _creation_number(self, column_id: ColumnId) -> int:
        return column_id + 1 - sum(1 for c in self.hidden_columns if c.id < column_id)

    def sequence_of(self, column_id: ColumnId) -> SequenceInfo | None:
        for info in self.sequences:
            if info.column_id == column_id:
                return info
        return None

    def counter_key(self, info: SequenceInfo) -> str:
        """The sequence's key in the counters file: table ID and column ID never recur."""
        return f"{self.table_id}.{info.column_id}"

    @property
    def oid(self) -> int:
        """The table's OID as PostgreSQL clients see it (pg_class.oid, RowDescription)."""
        return FIRST_USER_OID + self.table_id

    def to_json(self) -> dict[str, object]:
        return {
            "table_id": self.table_id,
            "name": self.name,
            "schema": self.schema.to_json(),
            "tablet_ids": list(self.tablet_ids),
            "next_column_id": self.next_column_id,
            "column_order": list(self.column_order),
            "partition_schema": None
            if self.partition_schema is None
            else self.partition_schema.to_json(),
            "partitions": [p.to_json() for p in self.partitions],
            "column_storage": [list(entry) for entry in self.column_storage],
            "sequences": [info.to_json() for info in self.sequences],
            **({"primary_key_name": self.primary_key_name} if self.primary_key_name else {}),
            **({"checks": [c.to_json() for c in self.checks]} if self.checks else {}),
            **({"indexes": [i.to_json() for i in self.indexes]} if self.indexes else {}),
            **(
                {"foreign_keys": [f.to_json() for f in self.foreign_keys]}
                if self.foreign_keys
                else {}
            ),
            **(
                {"pending_partitioning": self.pending_partitioning}
                if self.pending_partitioning
                else {}
            ),
        }

    @classmethod
    def from_json(cls, doc: JsonObject) -> TableInfo:
        return cls(
            table_id=TableId(int(doc["table_id"])),
            name=str(doc["name"]),
            schema=Schema.from_json(doc["schema"]),
            tablet_ids=tuple(TabletId(int(t)) for t in doc["tablet_ids"]),
            next_column_id=int(doc["next_column_id"]),
            column_order=tuple(ColumnId(int(c)) for c in doc["column_order"]),
            partition_schema=None
            if doc.get("partition_schema") is None
            else PartitionSchema.from_json(doc["partition_schema"]),
            partitions=tuple(Partition.from_json(p) for p in doc.get("partitions") or ()),
            column_storage=tuple(
                (ColumnId(int(c)), str(e), str(z)) for c, e, z in doc.get("column_storage") or ()
            ),
            sequences=tuple(SequenceInfo.from_json(d) for d in doc.get("sequences") or ()),
            primary_key_name=str(doc["primary_key_name"]) if doc.get("primary_key_name") else None,
            checks=tuple(CheckConstraint.from_json(c) for c in doc.get("checks") or ()),
            indexes=tuple(IndexInfo.from_json(i) for i in doc.get("indexes") or ()),
            foreign_keys=tuple(ForeignKey.from_json(f) for f in doc.get("foreign_keys") or ()),
            pending_partitioning=str(doc.get("pending_partitioning") or ""),
        )
