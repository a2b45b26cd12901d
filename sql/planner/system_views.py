"""nyala's own system views (``nyala_tablets``, ``nyala_rowsets``, ``nyala_maintenance``,
``nyala_progress_maintenance``) as the binder sees them.

A system view looks like a table to the binder: a ``TableInfo`` with no
tablets and a negative table ID.  Its rows are computed when a query runs
(sql/execution/system_view_rows.py).
"""

from __future__ import annotations

from catalog.table import TableId, TableInfo
from storage import data_type as t
from storage.data_type import ColumnId
from storage.schema import ColumnSchema, Schema

TABLETS = "nyala_tablets"
ROWSETS = "nyala_rowsets"
MAINTENANCE = "nyala_maintenance"
PROGRESS_MAINTENANCE = "nyala_progress_maintenance"

TABLETS_COLUMNS = (
    ("table_name", t.STRING),
    ("tablet_id", t.INT64),
    ("hash_buckets", t.STRING),
    ("range_bounds", t.STRING),
    ("partition_name", t.STRING),
    ("rows", t.INT64),
    ("bytes_on_disk", t.INT64),
)

ROWSETS_COLUMNS = (
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
    ("redo_delta_bytes", t.INT64),
    ("undo_delta_bytes", t.INT64),
    ("redo_delta_records", t.INT64),
    ("undo_delta_records", t.INT64),
    ("base_bytes", t.INT64),
)

MAINTENANCE_COLUMNS = (
    ("op", t.STRING),
    ("state", t.STRING),
    ("kind", t.STRING),
    ("tablet_id", t.INT64),
    ("score", t.DOUBLE),
    ("reason", t.STRING),
    ("started_at", t.DOUBLE),
    ("duration_ms", t.DOUBLE),
    ("bytes_read", t.INT64),
    ("bytes_written", t.INT64),
    ("error", t.STRING),
)
"""Each registered maintenance op with its score and why, each running op, and the recent
ones with what they cost (``started_at`` in Unix seconds)."""


PROGRESS_MAINTENANCE_COLUMNS = (
    ("table_name", t.STRING),
    ("tablet_id", t.INT64),
    ("op", t.STRING),
    ("kind", t.STRING),
    ("reason", t.STRING),
    ("started_at", t.TIMESTAMPTZ),
    ("elapsed_ms", t.DOUBLE),
)
"""Each flush, compaction and history GC running now, on which table, why, and for how long
(the pg_stat_progress_* of nyala's background work)."""


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
    TABLETS: _view(-1, TABLETS, TABLETS_COLUMNS, 2),
    ROWSETS: _view(-2, ROWSETS, ROWSETS_COLUMNS, 3),
    MAINTENANCE: _view(-3, MAINTENANCE, MAINTENANCE_COLUMNS, 2),
    PROGRESS_MAINTENANCE: _view(-4, PROGRESS_MAINTENANCE, PROGRESS_MAINTENANCE_COLUMNS, 2),
}


def find(name: str) -> TableInfo | None:
    return _VIEWS.get(name)


def is_system_view(table: TableInfo) -> bool:
    return table.table_id < 0
