"""``python -m bench.batch_cost``: server CPU per row of pipelined batches, and where it goes.

``bench.statement_cost`` for the batch workloads: psycopg ``executemany`` INSERTs of
1,000 rows a transaction (``insert``), ``executemany`` DELETEs by key of 100 rows a call
from a table of ``--table-rows`` flushed rows (``delete``, as the bench's DELETE
workload), and pgjdbc's ``executeBatch`` of 1,000 rows, plain (``jdbc``) and with
``reWriteBatchedInserts=true`` (``jdbc_rewritten``).  Each kind's server CPU
(``/proc/PID/stat``, which a loaded machine barely moves) is divided by its rows.  With
``--profile DIR`` the server runs under cProfile (``bench.profiled_server``) and each
kind's statistics of the measured rows alone land in DIR/KIND.pstats.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from bench import datasets
from bench.process_cpu import measured_server, server_cpu, settle
from bench.workloads.jdbc_batch import JAR, SOURCE, _url
from tests.support.servers import NyalaServer

_INSERT = "insert into metrics values (%s, %s, %s, %s)"
_DELETE = "delete from metrics where host = %s and metric = %s and time = %s"


def _psycopg_kind(
    conn: psycopg.Connection[Any], kind: str, rows: int, table_rows: int
) -> Callable[[int, int], None]:
    """Set up ``kind``; the function that runs its rows ``lo`` to ``hi``."""
    if kind == "delete":
        table = datasets.metrics(table_rows)
        datasets.load(conn, "metrics", table, datasets.LoadMethod.COPY)
        conn.execute("checkpoint")
        keys = datasets.metrics_keys(table)
        random.Random(3).shuffle(keys)
        if len(keys) < rows:
            raise SystemExit(f"--table-rows must be at least {rows} for delete")
    else:
        columns = datasets.metrics(rows, seed=2).columns
        params = list(zip(*(column.to_pylist() for column in columns), strict=True))

    def run(lo: int, hi: int) -> None:
        with conn.cursor() as cur:
            for start in range(lo, hi, 1000):
                with conn.transaction():
                    if kind == "delete":
                        for at in range(start, min(start + 1000, hi), 100):
                            cur.executemany(_DELETE, keys[at : min(at + 100, hi)])
                    else:
                        cur.executemany(_INSERT, params[start : min(start + 1000, hi)])

    return run


def _measure(
    server: NyalaServer, kind: str, rows: int, table_rows: int, pstats: Path | None, classes: str
) -> float:
    """Server CPU seconds of ``rows`` rows of ``kind``."""
    assert server.pid is not None
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(datasets.METRICS_DDL.format(name="metrics"))
        run = None
        if not kind.startswith("jdbc"):
            run = _psycopg_kind(conn, kind, rows, table_rows)
            run(0, min(2000, rows // 5))  # warm: plans made, first-run costs paid
        settle(server.pid)
        with server_cpu(server, pstats) as measured:
            if run is not None:
                run(min(2000, rows // 5), rows)
            else:
                url = _url(server.dsn, rewrite=kind == "jdbc_rewritten")
                subprocess.run(
                    ["java", "-cp", f"{JAR}:{classes}", "JdbcBatch", url, str(rows), "1000"],
                    capture_output=True, text=True, timeout=1800, check=True,
                )  # fmt: skip
    return measured.cpu_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.batch_cost", description=__doc__)
    parser.add_argument("--rows", type=int, default=20_000, help="rows per kind")
    parser.add_argument("--table-rows", type=int, default=200_000, help="rows DELETE finds")
    parser.add_argument("--profile", type=Path, help="write cProfile statistics here")
    parser.add_argument("--only", default="insert,delete,jdbc,jdbc_rewritten")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="nyala-batch-cost-") as tmp:
        classes = str(Path(tmp) / "classes")
        for kind in args.only.split(","):
            if kind.startswith("jdbc") and not Path(classes).exists():
                subprocess.run(["javac", "-cp", str(JAR), "-d", classes, str(SOURCE)], check=True)
            pstats = None if args.profile is None else args.profile.resolve() / f"{kind}.pstats"
            with measured_server(Path(tmp) / kind, pstats) as server:
                started = time.perf_counter()
                cpu = _measure(server, kind, args.rows, args.table_rows, pstats, classes)
                print(f"{kind:15s} server CPU {cpu / args.rows * 1e6:7.1f} us/row   "
                      f"(whole run {time.perf_counter() - started:.1f} s)", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
