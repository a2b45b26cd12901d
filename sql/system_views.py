"""nyala's own system views (``nyala_tablets``): catalog and storage facts queryable with SQL.

A system view looks like a table to the binder (a ``TableInfo`` with no
tablets) and, when a query runs, is registered on DuckDB as an Arrow table
computed at the statement's snapshot instead of a tablet scan.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from catalog.catalog import Catalog
from catalog.table import TableId, TableInfo
from storage import types as t
from storage.predicate import ScanSpec
from storage.schema import ColumnSchema, Schema
from storage.transaction import Transaction
from storage.types import ColumnId

TABLETS = "nyala_tablets"

_TABLETS_COLUMNS = (
    ("table_name", t.STRING),
    ("tablet_id", t.INT64),
    ("hash_buckets", t.STRING),
    ("range_bounds", t.STRING),
    ("partition_name", t.STRING),
    ("rows", t.INT64),
    ("bytes_on_disk", t.INT64),
)


def _view(
    view_id: int, name: str, columns: tuple[tuple[str, t.DataType], ...], key: int
) -> TableInfo:
    schema = Schema(
        tuple(
            ColumnSchema(ColumnId(i), col, typ, nullable=i >= key)
            for i, (col, typ) in enumerate(columns)
        ),
        key,
    )
    return TableInfo(TableId(view_id), name, schema, (), len(columns), schema.column_ids)


_VIEWS = {TABLETS: _view(-1, TABLETS, _TABLETS_COLUMNS, 2)}


def find(name: str) -> TableInfo | None:
    return _VIEWS.get(name)


def is_system_view(table: TableInfo) -> bool:
    return table.table_id < 0


def _tablets(catalog: Catalog, txn: Transaction) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {name: [] for name, _ in _TABLETS_COLUMNS}
    for table in catalog.tables():
        partitions = {p.tablet_id: p for p in table.partitions}
        spec = ScanSpec(projection=())
        for tablet_id in table.tablet_ids:
            partition = partitions.get(tablet_id)
            rows = sum(batch.num_rows for batch in txn.scan(tablet_id, spec))
            out["table_name"].append(table.name)
            out["tablet_id"].append(tablet_id)
            out["hash_buckets"].append(
                ", ".join(str(b) for b in partition.hash_buckets) if partition else ""
            )
            out["range_bounds"].append(
                partition.range.describe() if partition and partition.range else ""
            )
            out["partition_name"].append(partition.name if partition else None)
            out["rows"].append(rows)
            # Every tablet lives in memory (MemRowSet + WAL) until DiskRowSets land.
            out["bytes_on_disk"].append(0)
    return out


_PRODUCERS: dict[str, Callable[[Catalog, Transaction], dict[str, list[object]]]] = {
    TABLETS: _tablets,
}


def contents(table: TableInfo, catalog: Catalog, txn: Transaction | None) -> pa.Table:
    """The view's rows at ``txn``'s snapshot (none without a transaction: describing only)."""
    schema = pa.schema([pa.field(c.name, c.type.arrow_type) for c in table.schema.columns])
    if txn is None:
        return schema.empty_table()
    data = _PRODUCERS[table.name](catalog, txn)
    return pa.table({name: pa.array(data[name], schema.field(name).type) for name in schema.names})
