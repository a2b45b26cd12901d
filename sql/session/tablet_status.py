"""What the HTTP status page and ``/metrics`` show of each table's tablets, in plain data.

The server may not read the catalog itself, so this module joins the catalog's
table names to the storage engine's per-tablet layout: each DiskRowSet's place
in the key space, its deltas, and the rowsets the next merging compaction
would take.  Keys are placed on [0, 1] as the compaction policy places them
(their first eight bytes), stretched so each tablet spans the whole width.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from storage.errors import UndefinedTable

if TYPE_CHECKING:
    from sql.execution.context import DatabaseContext


@dataclass(frozen=True, slots=True)
class RowSetStatus:
    rowset_id: int
    lo: float
    """Where its smallest key lies in the tablet's key space, 0 to 1."""
    hi: float
    rows: int
    deleted_rows: int
    bytes_on_disk: int
    redo_files: int
    undo_files: int
    redo_bytes: int
    undo_bytes: int
    is_compaction_input: bool
    """The next merging compaction would take this rowset."""


@dataclass(frozen=True, slots=True)
class TabletStatus:
    table_name: str
    tablet_id: int
    rowsets: tuple[RowSetStatus, ...]
    memrowset_rows: int
    memrowset_bytes: int
    average_rowset_height: float
    compaction_reason: str
    scans: int
    delta_lookups: int

    @property
    def bytes_on_disk(self) -> int:
        return sum(r.bytes_on_disk for r in self.rowsets)

    @property
    def live_rows(self) -> int:
        """Rows in DiskRowSets not deleted in their base data, plus the MemRowSet's."""
        return sum(r.rows - r.deleted_rows for r in self.rowsets) + self.memrowset_rows


def tablet_status(context: DatabaseContext) -> list[TabletStatus]:
    """Every tablet of every table, in table-name order."""
    out = []
    for table in sorted(context.catalog.tables(), key=lambda t: t.name):
        for tablet_id in table.tablet_ids:
            try:
                layout = context.engine.tablet_layout(tablet_id)
            except UndefinedTable:  # dropped since the catalog was read
                continue
            out.append(_status(table.name, tablet_id, layout))
    return out


def _status(table_name: str, tablet_id: int, layout: dict[str, Any]) -> TabletStatus:
    rowsets = layout["rowsets"]
    places = [(_place(r["min_key"]), _place(r["max_key"])) for r in rowsets]
    low = min((a for a, _ in places), default=0.0)
    high = max((b for _, b in places), default=1.0)
    span = (high - low) or 1.0
    inputs = set(layout["compaction_inputs"])
    return TabletStatus(
        table_name=table_name,
        tablet_id=tablet_id,
        rowsets=tuple(
            RowSetStatus(
                rowset_id=r["rowset_id"],
                lo=(a - low) / span,
                hi=(b - low) / span,
                rows=r["rows"],
                deleted_rows=r["deleted_rows"],
                bytes_on_disk=r["bytes_on_disk"],
                redo_files=r["redo_delta_files"],
                undo_files=r["undo_delta_files"],
                redo_bytes=r["redo_bytes"],
                undo_bytes=r["undo_bytes"],
                is_compaction_input=r["rowset_id"] in inputs,
            )
            for r, (a, b) in zip(rowsets, places, strict=True)
        ),
        memrowset_rows=layout["memrowset_rows"],
        memrowset_bytes=layout["memrowset_bytes_estimate"],
        average_rowset_height=layout["average_rowset_height"],
        compaction_reason=layout["compaction_reason"],
        scans=layout["scans"],
        delta_lookups=layout["delta_lookups"],
    )


def _place(key: bytes | None) -> float:
    if not key:
        return 0.0
    return int.from_bytes(key[:8].ljust(8, b"\0"), "big") / 2.0**64
