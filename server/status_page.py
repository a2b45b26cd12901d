"""The status page's HTML: each tablet's rowsets drawn over its key space, and the maintenance table.

As Kudu's ``/tablet-rowsetlayout-svg`` page: each DiskRowSet is a bar from
its smallest to its largest key, stacked in as few lanes as keep bars from
overlapping, so the number of lanes over a key is how many rowsets a lookup
of it may consult (the average rowset height).  Bars the next merging
compaction would take are drawn in orange.  The page reloads itself every
few seconds, so compactions can be watched as they happen.
"""

from __future__ import annotations

import datetime as dt
import html

from sql.session.tablet_status import RowSetStatus, TabletStatus
from storage.maintenance_manager import OpRecord

WIDTH = 900
LANE = 18
REFRESH_S = 5


def page(tablets: list[TabletStatus], maintenance: list[OpRecord], database: str) -> str:
    sections = "\n".join(_tablet(t) for t in tablets) or "<p>No tables yet.</p>"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="{REFRESH_S}">
<title>nyala: {_e(database)}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; }}
table {{ border-collapse: collapse; font-size: 13px; }}
td, th {{ border: 1px solid #ccc; padding: 2px 6px; text-align: left; }}
svg {{ border: 1px solid #ddd; background: #fafafa; }}
.input {{ fill: #f4a261; stroke: #c1440e; }}
.rowset {{ fill: #6c9bd2; stroke: #2b5c94; }}
</style></head><body>
<h1>nyala: database {_e(database)}</h1>
<p><a href="/metrics">/metrics</a> &middot; refreshed every {REFRESH_S} s;
{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M:%S} UTC</p>
<h2>Tablets</h2>
{sections}
<h2>Maintenance</h2>
{_maintenance(maintenance)}
</body></html>
"""


def _tablet(tablet: TabletStatus) -> str:
    lanes = _lanes(tablet.rowsets)
    height = max(1, len(lanes)) * LANE + 24
    bars = []
    for number, lane in enumerate(lanes):
        for r in lane:
            x = r.lo * (WIDTH - 2) + 1
            width = max(2.0, (r.hi - r.lo) * (WIDTH - 2))
            css = "input" if r.is_compaction_input else "rowset"
            bars.append(
                f'<rect class="{css}" data-rowset="{r.rowset_id}" x="{x:.1f}" '
                f'y="{number * LANE + 2}" width="{width:.1f}" height="{LANE - 4}">'
                f"<title>rowset {r.rowset_id}: {r.rows:,} rows ({r.deleted_rows:,} deleted), "
                f"{r.bytes_on_disk:,} bytes, {r.redo_files} REDO / {r.undo_files} UNDO files"
                "</title></rect>"
            )
    axis = height - 6
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="rowset-layout" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}">'
        + "".join(bars)
        + f'<text x="2" y="{axis}" font-size="10">smallest key</text>'
        f'<text x="{WIDTH - 2}" y="{axis}" font-size="10" text-anchor="end">largest key</text>'
        "</svg>"
    )
    reason = (
        f"next merging compaction (orange): {_e(tablet.compaction_reason)}"
        if tablet.compaction_reason
        else "no merging compaction worth running"
    )
    return (
        f'<h3 id="tablet-{tablet.tablet_id}">{_e(tablet.table_name)} '
        f"(tablet {tablet.tablet_id})</h3>"
        f"<p>{len(tablet.rowsets)} rowsets, average rowset height "
        f"{tablet.average_rowset_height:.2f}, {tablet.bytes_on_disk:,} bytes on disk, "
        f"{tablet.live_rows:,} live rows; MemRowSet {tablet.memrowset_rows:,} rows "
        f"(~{tablet.memrowset_bytes:,} bytes); {reason}</p>\n{svg}"
    )


def _lanes(rowsets: tuple[RowSetStatus, ...]) -> list[list[RowSetStatus]]:
    """Rowsets in as few lanes as keep each lane's bars apart (greedy, by smallest key)."""
    lanes: list[list[RowSetStatus]] = []
    for r in sorted(rowsets, key=lambda r: (r.lo, r.hi)):
        for lane in lanes:
            if lane[-1].hi < r.lo:
                lane.append(r)
                break
        else:
            lanes.append([r])
    return lanes


def _maintenance(records: list[OpRecord]) -> str:
    head = (
        "<tr><th>op</th><th>state</th><th>score</th><th>why</th><th>started</th>"
        "<th>ms</th><th>bytes read</th><th>bytes written</th><th>error</th></tr>"
    )
    rows = []
    for r in records:
        started = (
            dt.datetime.fromtimestamp(r.started_at, dt.UTC).strftime("%H:%M:%S")
            if r.started_at
            else ""
        )
        duration = "" if r.duration_s is None else f"{r.duration_s * 1000:.1f}"
        rows.append(
            f"<tr><td>{_e(r.op)}</td><td>{_e(r.state)}</td><td>{r.score:.3g}</td>"
            f"<td>{_e(r.reason)}</td><td>{started}</td><td>{duration}</td>"
            f"<td>{_n(r.bytes_read)}</td><td>{_n(r.bytes_written)}</td>"
            f"<td>{_e(r.error or '')}</td></tr>"
        )
    return f'<table id="maintenance">{head}{"".join(rows)}</table>'


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _n(value: int | None) -> str:
    return "" if value is None else f"{value:,}"
