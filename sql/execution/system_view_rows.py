"""The rows of nyala's system views, computed at a statement's snapshot from storage facts.

When a query reads a system view (sql/planner/system_views.py), the runner
registers these rows on DuckDB as an Arrow table instead of a tablet scan.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pyarrow as pa

from catalog.catalog import Catalog
from catalog.table import TableInfo
from sql.planner.system_views import (
    MAINTENANCE,
    MAINTENANCE_COLUMNS,
    PROGRESS_MAINTENANCE,
    PROGRESS_MAINTENANCE_COLUMNS,
    ROWSETS,
    ROWSETS_COLUMNS,
    TABLETS,
    TABLETS_COLUMNS,
)
from storage.data_type import TabletId
from storage.predicate import ScanSpec
from storage.transaction import Transaction


def _tablets(catalog: Catalog, txn: Transaction) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {name: [] for name, _ in TABLETS_COLUMNS}
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
    out: dict[str, list[object]] = {name: [] for name, _ in ROWSETS_COLUMNS}

    def add(table: str, tablet_id: int, kind: str, **values: object) -> None:
        out["table_name"].append(table)
        out["tablet_id"].append(tablet_id)
        out["kind"].append(kind)
        for name, _ in ROWSETS_COLUMNS[3:]:
            out[name].append(values.get(name))

    for table in catalog.tables():
        for tablet_id in table.tablet_ids:
            stats = catalog.engine.tablet_stats(tablet_id)
            add(table.name, tablet_id, "MemRowSet", rows=stats["memrowset_rows"], bytes_on_disk=0)
            for rowset in stats["rowsets"]:  # type: ignore[attr-defined]  # tablet_stats' rowsets are a list
                add(
                    table.name, tablet_id, "DiskRowSet",
                    rowset_id=rowset["rowset_id"],
                    min_key=_hex(rowset["min_key"]), max_key=_hex(rowset["max_key"]),
                    rows=rowset["rows"], bytes_on_disk=rowset["bytes_on_disk"],
                    redo_delta_files=rowset["redo_delta_files"],
                    undo_delta_files=rowset["undo_delta_files"],
                    delta_memstore_rows=rowset["delta_memstore_rows"],
                    redo_delta_bytes=rowset["redo_bytes"],
                    undo_delta_bytes=rowset["undo_bytes"],
                    redo_delta_records=rowset["redo_records"],
                    undo_delta_records=rowset["undo_records"],
                    base_bytes=rowset["base_bytes"],
                )  # fmt: skip
    return out


def _maintenance(catalog: Catalog, txn: Transaction) -> dict[str, list[object]]:
    """The maintenance manager's registered, running and recent ops."""
    out: dict[str, list[object]] = {name: [] for name, _ in MAINTENANCE_COLUMNS}
    for record in catalog.engine.maintenance_status():
        out["op"].append(record.op)
        out["state"].append(record.state)
        out["kind"].append(record.kind)
        out["tablet_id"].append(record.tablet_id)
        out["score"].append(record.score)
        out["reason"].append(record.reason)
        out["started_at"].append(record.started_at)
        duration = record.duration_s
        out["duration_ms"].append(None if duration is None else duration * 1000)
        out["bytes_read"].append(record.bytes_read)
        out["bytes_written"].append(record.bytes_written)
        out["error"].append(record.error)
    return out


def _progress_maintenance(catalog: Catalog, txn: Transaction) -> dict[str, list[object]]:
    """The ops running now, with the table each one's tablet belongs to."""
    out: dict[str, list[object]] = {name: [] for name, _ in PROGRESS_MAINTENANCE_COLUMNS}
    tables = {tablet_id: table.name for table in catalog.tables() for tablet_id in table.tablet_ids}
    now = time.time()
    for record in catalog.engine.maintenance_status():
        if record.state != "running" or record.started_at is None:
            continue
        out["table_name"].append(tables.get(TabletId(record.tablet_id)))
        out["tablet_id"].append(record.tablet_id)
        out["op"].append(record.op)
        out["kind"].append(record.kind)
        out["reason"].append(record.reason)
        out["started_at"].append(int(record.started_at * 1_000_000))
        out["elapsed_ms"].append((now - record.started_at) * 1000)
    return out


def _hex(key: object) -> str | None:
    if key is None:
        return None
    return key.hex() if isinstance(key, bytes) else str(key)


_PRODUCERS: dict[str, Callable[[Catalog, Transaction], dict[str, list[object]]]] = {
    TABLETS: _tablets,
    ROWSETS: _rowsets,
    MAINTENANCE: _maintenance,
    PROGRESS_MAINTENANCE: _progress_maintenance,
}


def contents(table: TableInfo, catalog: Catalog, txn: Transaction | None) -> pa.Table:
    """The view's rows at ``txn``'s snapshot (none without a transaction: describing only)."""
    schema = pa.schema([pa.field(c.name, c.type.arrow_type) for c in table.schema.columns])
    if txn is None:
        return schema.empty_table()
    data = _PRODUCERS[table.name](catalog, txn)
    return pa.table({name: pa.array(data[name], schema.field(name).type) for name in schema.names})
