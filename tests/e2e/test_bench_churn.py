"""The churn bench keeps working: ``python -m bench.churn`` at a tiny scale, two rounds.

No timing is looked at.  The bench itself checks, every round, that nyala and
PostgreSQL hold the same ``count(*)`` and ``sum(v)``; here the outputs are
checked: every round has every figure for both systems, the mass delete was
measured, and the chart was written as SVG and PNG.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.servers import REPO_ROOT, missing_postgres_reason

pytestmark = pytest.mark.slow


def test_churn_bench_runs_at_tiny_scale(tmp_path):
    reason = missing_postgres_reason()
    if reason:
        pytest.skip(reason)
    out = tmp_path / "results"
    result = subprocess.run(
        [
            sys.executable, "-m", "bench.churn", "--scale", "0.005", "--rounds", "2",
            "--history-max-age", "1", "--out", str(out), "--workdir", str(tmp_path),
        ],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-5000:]
    [report] = out.glob("*-churn.json")
    assert report.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in report.with_suffix(".svg").read_bytes()[:2000]
    payload = json.loads(report.read_text())
    assert [r["round"] for r in payload["rounds"]] == [0, 1, 2]
    for r in payload["rounds"]:
        for system in ("nyala", "postgres", "nyala_settled"):
            assert r[system]["aggregate_ms"] > 0 and r[system]["point_select_ms"] > 0
        assert r["nyala"]["live_rows"] == r["postgres"]["live_rows"]
        assert r["nyala"]["rowsets"] >= 1
    # 5,000 rows; each round deletes 2% of the first 5,000 keys and inserts 100 new ones.
    assert payload["rounds"][2]["postgres"]["live_rows"] == 5_000 - 200 + 200
    after = payload["after_mass_delete"]
    assert after["nyala"]["live_rows"] == after["postgres"]["live_rows"] < 1_000
    assert "after deleting 90%" in result.stdout
