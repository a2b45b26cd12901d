"""The HTTP status page and /metrics on ``--http-port``: served, drawn, rendered by a browser.

The server runs without maintenance threads, so the rowset layout the test
builds (two overlapping rowsets, which the merging compaction would take)
stays put while the page is read.  Chromium (Debian's package, installed by
``make install-test``) renders the page headless to a PNG, and the test finds
the rowset bars' colours in it: the SVG was drawn, not just sent.
"""

from __future__ import annotations

import re
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

CHROMIUM = "/usr/bin/chromium"
_STATUS_LINE = re.compile(r"status page on http://([\d.]+):(\d+)/")
ROWSET_RGB = (0x6C, 0x9B, 0xD2)
INPUT_RGB = (0xF4, 0xA2, 0x61)


@pytest.fixture
def status_server(nyala_server_factory):
    server = nyala_server_factory(extra_args=("--http-port", "0", "--maintenance-threads", "0"))
    match = _STATUS_LINE.search(server.log)
    assert match, server.log_tail()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("create table layout_t (k bigint primary key, v bigint)")
        conn.execute("insert into layout_t select g, g from generate_series(2, 6000, 2) g")
        conn.execute("checkpoint")
        conn.execute("insert into layout_t select g, g from generate_series(1, 3001, 2) g")
        conn.execute("checkpoint")
        conn.execute("delete from layout_t where k < 100")
        conn.execute("select count(*) from layout_t").fetchone()
    return server, f"http://{match.group(1)}:{match.group(2)}"


def _get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()


def test_status_page_draws_each_rowset_and_the_next_compaction(status_server):
    server, base = status_server
    status, content_type, page = _get(base + "/")
    assert status == 200 and content_type.startswith("text/html")
    with psycopg.connect(server.dsn) as conn:
        rowsets = conn.execute(
            "select rowset_id from nyala_rowsets where table_name = 'layout_t' "
            "and kind = 'DiskRowSet' order by rowset_id"
        ).fetchall()
    assert len(rowsets) == 2
    drawn = re.findall(r'<rect class="(input|rowset)" data-rowset="(\d+)"', page)
    assert sorted(int(r) for _, r in drawn) == [r[0] for r in rowsets]
    # The second overlaps half the first, so merging them is worth it: both are the next
    # compaction's inputs.
    assert {cls for cls, _ in drawn} == {"input"}
    assert "layout_t (tablet" in page
    assert 'id="maintenance"' in page and "CompactRowSetsOp" in page


def test_metrics_has_the_tablet_and_server_metrics(status_server):
    server, base = status_server
    status, content_type, text = _get(base + "/metrics")
    assert status == 200 and content_type.startswith("text/plain")
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    tablet = (("table", "layout_t"), ("tablet_id", _tablet_id(server)))
    assert samples[("nyala_tablet_rowsets_on_disk", tablet)] == 2
    with psycopg.connect(server.dsn) as conn:
        live = conn.execute("select count(*) from layout_t").fetchone()[0]
    # The delete sits in REDO deltas, not in the base data yet: live rows count it once
    # a delta compaction folds it in; until then live rows bound the true count.
    assert samples[("nyala_tablet_live_rows", tablet)] >= live
    assert samples[("nyala_tablet_on_disk_size_bytes", tablet)] > 0
    assert samples[("nyala_tablet_average_rowset_height", tablet)] > 1.0
    assert ("nyala_tablet_memrowset_size_bytes", tablet) in samples
    assert ("nyala_tablet_undo_delta_bytes", tablet) in samples
    assert ("nyala_tablet_deleted_bytes_retained", tablet) in samples
    assert samples[("nyala_tablet_scans_total", tablet)] >= 1
    assert ("nyala_tablet_delta_file_lookups_total", tablet) in samples
    assert samples[("nyala_statements_total", (("kind", "CREATE TABLE"),))] == 1
    assert samples[("nyala_statements_total", (("kind", "INSERT"),))] == 2
    assert samples[("nyala_statements_total", (("kind", "DELETE"),))] == 1
    assert samples[("nyala_statement_duration_seconds_count", (("kind", "INSERT"),))] == 2
    assert samples[("nyala_connections_accepted_total", ())] >= 1
    assert ("nyala_connections", ()) in samples

    # Every CommandComplete counts once: each of a multi-statement Query's (the last with
    # the Query's latency), and each Execute of a prepared read answered in one step,
    # with statement_timeout on or off.
    before = _statement_counts(base)
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("select 1; select 2; set application_name = 'counted'")
        for timeout in ("0", "5s", "0"):
            conn.execute(f"set statement_timeout = '{timeout}'")
            for i in range(2):
                conn.execute("select k from layout_t where k = %s", (i + 200,), prepare=True)
    after = _statement_counts(base)
    assert after["SELECT"] - before.get("SELECT", 0) == 2 + 3 * 2
    assert after["SET"] - before.get("SET", 0) == 1 + 3


def _statement_counts(base: str) -> dict[str, float]:
    _, _, text = _get(base + "/metrics")
    return {
        s.labels["kind"]: s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "nyala_statements_total"
    }


def test_unknown_paths_and_methods_are_refused(status_server):
    _, base = status_server
    assert _get(base + "/nope")[0] == 404
    request = urllib.request.Request(base + "/", data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 405


def test_headless_chromium_renders_the_rowset_svg(status_server, tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed: run `make install-test`")
    _, base = status_server
    shot = tmp_path / "page.png"
    result = subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1000,800",
            f"--screenshot={shot}", base + "/",
        ],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shot.exists(), result.stderr[-3000:]
    import matplotlib.image

    pixels = (matplotlib.image.imread(str(shot))[:, :, :3] * 255).round().astype(np.int16)
    # Both bars are compaction inputs (orange); no other page element uses that colour.
    assert _count(pixels, INPUT_RGB) > 1000
    assert _count(pixels, ROWSET_RGB) == 0


def _count(pixels: np.ndarray, rgb: tuple[int, int, int]) -> int:
    return int((np.abs(pixels - np.array(rgb)).max(axis=2) <= 3).sum())


def _tablet_id(server) -> str:
    with psycopg.connect(server.dsn) as conn:
        return str(
            conn.execute(
                "select tablet_id from nyala_tablets where table_name = 'layout_t'"
            ).fetchone()[0]
        )


def test_http_port_is_off_by_default(fresh_nyala_server):
    assert "status page on" not in fresh_nyala_server.log
