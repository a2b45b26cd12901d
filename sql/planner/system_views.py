"""nyala's own system views (``nyala_tablets``, ``nyala_rowsets``): storage facts as SQL tables.

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
ROWSETS = "nyala_rowsets"

_TABLETS_COLUMNS = (
    ("table_name", t.STRING),
    ("tablet_id", t.INT64),
    ("hash_buckets", t.STRING),
    ("range_bounds", t.STRING),
    ("partition_name", t.STRING),
    ("rows", t.INT64),
    ("bytes_on_disk", t.INT64),
)

_ROWSETS_COLUMNS = (
    ("table_name", t.STRING),
    ("tablet_id", t.INT64),
    ("kind", t.STRING),
    ("rowset_id", t.INT64),
    ("min_key", t.STRING),
    ("max_key", t.STRING),
    ("rows", t.INT64),
    ("bytes_on_disk", t.INT64),
    ("redo_delta_files", t.INT64),
    ("undo_delta_files", t.INT64),
    ("delta_memstore_rows", t.INT64),
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


_VIEWS = {
    TABLETS: _view(-1, TABLETS, _TABLETS_COLUMNS, 2),
    ROWSETS: _view(-2, ROWSETS, _ROWSETS_COLUMNS, 3),
}


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
            out["bytes_on_disk"].append(catalog.engine.tablet_stats(tablet_id)["bytes_on_disk"])
    return out


def _rowsets(catalog: Catalog, txn: Transaction) -> dict[str, list[object]]:
    """One row per rowset: the tablet's MemRowSet, then its DiskRowSets (keys as encoded hex)."""
    out: dict[str, list[object]] = {name: [] for name, _ in _ROWSETS_COLUMNS}

    def add(table: str, tablet_id: int, kind: str, **values: object) -> None:
        out["table_name"].append(table)
        out["tablet_id"].append(tablet_id)
        out["kind"].append(kind)
        for name, _ in _ROWSETS_COLUMNS[3:]:
            out[name].append(values.get(name))

    for table in catalog.tables():
        for tablet_id in table.tablet_ids:
            stats = catalog.engine.tablet_stats(tablet_id)
            add(table.name, tablet_id, "MemRowSet", rows=stats["memrowset_rows"], bytes_on_disk=0)
            for rowset in stats["rowsets"]:  # type: ignore[attr-defined]
                add(
                    table.name, tablet_id, "DiskRowSet",
                    rowset_id=rowset["rowset_id"],
                    min_key=_hex(rowset["min_key"]), max_key=_hex(rowset["max_key"]),
                    rows=rowset["rows"], bytes_on_disk=rowset["bytes_on_disk"],
                    redo_delta_files=rowset["redo_delta_files"],
                    undo_delta_files=rowset["undo_delta_files"],
                    delta_memstore_rows=rowset["delta_memstore_rows"],
                )  # fmt: skip
    return out


def _hex(key: object) -> str | None:
    if key is None:
        return None
    return key.hex() if isinstance(key, bytes) else str(key)


_PRODUCERS: dict[str, Callable[[Catalog, Transaction], dict[str, list[object]]]] = {
    TABLETS: _tablets,
    ROWSETS: _rowsets,
}


def contents(table: TableInfo, catalog: Catalog, txn: Transaction | None) -> pa.Table:
    """The view's rows at ``txn``'s snapshot (none without a transaction: describing only)."""
    schema = pa.schema([pa.field(c.name, c.type.arrow_type) for c in table.schema.columns])
    if txn is None:
        return schema.empty_table()
    data = _PRODUCERS[table.name](catalog, txn)
    return pa.table({name: pa.array(data[name], schema.field(name).type) for name in schema.names})
