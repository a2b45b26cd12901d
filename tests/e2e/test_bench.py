"""The benchmark keeps working: ``python -m bench`` at a tiny scale, every workload.

Nothing here looks at a timing; what is checked is that every workload ran
on every system it is meant for, that the answers it checks (Q6 against
numpy, Q1 and the pushdown scans across systems, every point select and
update) held, and that the JSON and PNG outputs are written.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.servers import REPO_ROOT, missing_postgres_reason

pytestmark = pytest.mark.slow


def test_bench_runs_every_workload_at_tiny_scale(tmp_path):
    reason = missing_postgres_reason()
    if reason:
        pytest.skip(reason)
    out = tmp_path / "results"
    result = subprocess.run(
        [
            sys.executable, "-m", "bench", "--scale", "0.0005", "--repeats", "1",
            "--mixed-seconds", "1", "--op-seconds", "1", "--out", str(out),
        ],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-5000:]
    [report] = out.glob("*.json")
    [chart] = out.glob("*.png")
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert report.stem == chart.stem
    payload = json.loads(report.read_text())
    assert payload["scale"] == 0.0005
    assert payload["systems"]["postgres"]["settings"]["shared_buffers"]
    figures = {f"{f['workload']}: {f['metric']}": f for f in payload["figures"]}
    workloads = {f["workload"] for f in payload["figures"]}
    assert {
        "bulk load metrics", "executemany INSERT", "pgjdbc executeBatch INSERT",
        "single-row autocommit INSERT",
        "point SELECT by primary key (prepared)", "UPDATE one column by primary key",
        "DELETE 1% of rows by key", "8 threads, 50/50 point select + update",
        "pushdown card=10", "pushdown card=1,000", "pushdown card=N", "TPC-H Q1", "TPC-H Q6",
        "wide fetch 4 columns", "pgbench select-only (-S), 1 client",
        "pgbench TPC-B-like, 8 clients",
    } <= workloads  # fmt: skip
    for key, figure in figures.items():
        assert set(figure["values"]) >= {"nyala", "postgres"}, key
        if figure["workload"].startswith(("pushdown", "TPC-H", "wide fetch")):
            assert "duckdb" in figure["values"], key
    assert len([k for k in figures if k.startswith("pushdown")]) == 3 * 4 * 2
    [q6] = [f for f in payload["figures"] if f["workload"] == "TPC-H Q6"]
    assert "checked against numpy" in q6["note"]
    assert figures["8 threads, 50/50 point select + update: errors"]["values"]["nyala"] == [0]
    assert "| workload | figure | nyala | PostgreSQL | DuckDB |" in result.stdout
