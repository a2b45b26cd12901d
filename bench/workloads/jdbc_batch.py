"""pgjdbc's executeBatch, plain and with ``reWriteBatchedInserts=true``, 1,000 rows a batch.

ORMs over JDBC and Spark's JDBC writer insert this way: one prepared INSERT,
a Bind and an Execute per row (or, rewritten by the driver, multi-row INSERTs
of up to 128 rows) before one Sync.  ``java/JdbcBatch.java`` runs in its own
JVM against each system in turn; each run checks the rows it wrote.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from bench.context import Context
from bench.measure import NYALA, POSTGRES

JAR = Path("/usr/share/java/postgresql.jar")
SOURCE = Path(__file__).resolve().parents[1] / "java" / "JdbcBatch.java"
BATCH = 1_000


def jdbc_batch(ctx: Context) -> None:
    javac = shutil.which("javac")
    if javac is None or not JAR.exists():
        raise RuntimeError("the JDBC batch workload needs javac and pgjdbc (make installs both)")
    rows = ctx.rows(100_000, minimum=BATCH) // BATCH * BATCH
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run([javac, "-cp", str(JAR), "-d", classes, str(SOURCE)], check=True)
        for rewrite in (False, True):
            fig = ctx.figures.figure(
                "pgjdbc executeBatch INSERT",
                f"rows/s ({rows:,} rows, {BATCH:,} per batch{', rewritten' if rewrite else ''})",
                "rows/s", higher_is_better=True,
                note="reWriteBatchedInserts=true" if rewrite else "one Bind/Execute per row",
            )  # fmt: skip
            for _ in range(ctx.repeats):
                for system in (NYALA, POSTGRES):
                    url = _url(ctx.systems.dsn(system), rewrite)
                    done = subprocess.run(
                        ["java", "-cp", f"{JAR}:{classes}", "JdbcBatch", url, str(rows), str(BATCH)],
                        capture_output=True, text=True, timeout=1800, check=True,
                    )  # fmt: skip
                    fig.add(system, float(done.stdout.split()[-1]))


def _url(dsn: str, rewrite: bool) -> str:
    fields = dict(part.split("=", 1) for part in dsn.split())
    url = f"jdbc:postgresql://{fields['host']}:{fields['port']}/{fields['dbname']}"
    url += f"?user={fields['user']}"
    if fields.get("password"):
        url += f"&password={fields['password']}"
    return url + ("&reWriteBatchedInserts=true" if rewrite else "")
