"""``python -m bench.spark`` keeps working: a tiny run measures every read and write path.

No timing is looked at; the run itself checks every path's answer (the count and
the per-host aggregate against the server's own, the written table's count),
so a zero exit status with every figure in the JSON is the test.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.servers import REPO_ROOT, missing_postgres_reason

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.mark.timeout(900)  # a JVM, two servers and six Spark jobs, on a shared machine
def test_spark_bench_measures_every_path_at_tiny_scale(tmp_path):
    reason = missing_postgres_reason()
    if reason:
        pytest.skip(reason)
    out = tmp_path / "spark.json"
    result = subprocess.run(
        [sys.executable, "-m", "bench.spark", "--rows", "3000", "--write-rows", "1000",
         "--out", str(out)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-5000:]
    payload = json.loads(out.read_text())
    assert payload["rows"] == 3000 and payload["master"] == "local[2]"
    figures = {f["figure"]: f for f in payload["figures"]}
    assert set(figures) == {
        "read 3,000 rows: count()", "read 3,000 rows: count, sum, max per host",
        "write 1,000 rows (append)",
    }  # fmt: skip
    for figure in figures.values():
        assert set(figure["median"]) == {"nyala data source", "JDBC on nyala", "JDBC on PostgreSQL"}
        assert figure["jdbc_postgres_over_source"] > 0
    assert "| read 3,000 rows: count() |" in result.stdout
