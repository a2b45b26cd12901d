"""The status page's drawing and the metrics' collector, from plain tablet data."""

from __future__ import annotations

import re

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from server import metrics, status_page
from sql.session.tablet_status import RowSetStatus, TabletStatus
from storage.maintenance_manager import OpRecord, OpTotals


def _rowset(rowset_id, lo, hi, *, input=False, rows=100, deleted=0):
    return RowSetStatus(rowset_id, lo, hi, rows, deleted, 1000, 1, 0, 10, 0, input)


def _tablet(*rowsets, name="t"):
    return TabletStatus(name, 1, rowsets, 5, 500, 1.5, "merging 2 rowsets", 3, 7)


def test_overlapping_rowsets_go_to_separate_lanes_and_inputs_are_marked():
    tablet = _tablet(
        _rowset(1, 0.0, 0.6, input=True), _rowset(2, 0.5, 1.0, input=True), _rowset(3, 0.7, 0.9)
    )
    html = status_page.page([tablet], [], "db")
    bars = re.findall(r'<rect class="(\w+)" data-rowset="(\d+)" x="[\d.]+" y="(\d+)"', html)
    lanes = {int(r): int(y) for _, r, y in bars}
    assert lanes[1] == lanes[3] != lanes[2], "3 fits after 1; 2 overlaps 1"
    assert {int(r): cls for cls, r, _ in bars} == {1: "input", 2: "input", 3: "rowset"}
    assert "next merging compaction (orange): merging 2 rowsets" in html


def test_names_and_reasons_are_escaped():
    records = [OpRecord("FlushOp(1)", "FlushOp", 1, "failed", 1.0, "<b>", error="<script>")]
    html = status_page.page([_tablet(name='a"<b>')], records, "<db>")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "a&quot;&lt;b&gt;" in html and "&lt;db&gt;" in html


def test_statement_kind_drops_row_counts():
    assert metrics.statement_kind("INSERT 0 5") == "INSERT"
    assert metrics.statement_kind("SELECT 12") == "SELECT"
    assert metrics.statement_kind("CREATE TABLE") == "CREATE TABLE"


def test_collector_reports_tablet_gauges_and_cumulative_op_durations():
    totals = OpTotals()
    for seconds in (0.001, 0.002, 3.0):
        totals.add(OpRecord("FlushOp(1)", "FlushOp", 1, "done", 1.0, "", 0.0, seconds, 10, 20))
    tablet = _tablet(_rowset(1, 0.0, 1.0, rows=100, deleted=25), _rowset(2, 0.2, 0.4))
    registry = CollectorRegistry()
    registry.register(metrics.TabletCollector(lambda: [tablet], lambda: {"FlushOp": totals}))
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(generate_latest(registry).decode())
        for s in family.samples
    }
    key = (("table", "t"), ("tablet_id", "1"))
    assert samples[("nyala_tablet_rowsets_on_disk", key)] == 2
    assert samples[("nyala_tablet_live_rows", key)] == 75 + 100 + 5
    assert samples[("nyala_tablet_deleted_bytes_retained", key)] == 250
    assert samples[("nyala_tablet_delta_file_lookups_total", key)] == 7
    flush = (("kind", "FlushOp"),)
    assert samples[("nyala_maintenance_op_duration_seconds_count", flush)] == 3
    le = dict(flush + (("le", "0.01"),))
    assert samples[("nyala_maintenance_op_duration_seconds_bucket", tuple(sorted(le.items())))] == 2
    inf = dict(flush + (("le", "+Inf"),))
    assert (
        samples[("nyala_maintenance_op_duration_seconds_bucket", tuple(sorted(inf.items())))] == 3
    )
    assert samples[("nyala_maintenance_written_bytes_total", flush)] == 60
