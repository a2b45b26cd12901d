"""Spark in local[2]: the nyala data source against Spark's JDBC source on nyala and on PostgreSQL.

``python -m bench.spark --rows 5000000 --write-rows 1000000`` (``make bench-spark``)
loads one table of ``rows`` rows (``id bigint primary key, host text, ts
timestamp, value double``, four hash tablets in nyala) into a nyala server and
a PostgreSQL 15, then, in one SparkSession (``local[2]``), times:

- reads: ``df.count()`` and a per-host aggregate (count, sum, max) of the whole
  table, through the data source (one task per tablet, Arrow) and through Spark
  JDBC (pgjdbc, ``partitionColumn=id`` in 4 ranges, ``fetchsize`` 10,000) on
  nyala and on PostgreSQL;
- writes: ``write_rows`` rows made by Spark (``spark.range``, 4 partitions)
  appended to an empty table through the data source (COPY FORMAT arrow,
  prepared transactions) and through Spark JDBC (``batchsize`` 10,000,
  ``reWriteBatchedInserts=true``, the fastest pgjdbc insert path) on both.

Every path runs both reads and writes 1,000 rows once before anything is
timed, so no figure pays for starting Spark's Python daemons or for the JIT
compiling the aggregate.  The session sets
``spark.sql.execution.arrow.maxBytesPerBatch`` to Int.MaxValue, as the README
advises for the data source (it changes nothing for JDBC, which uses no Arrow).  Every path's
answer is checked (read: the same count and aggregate as the server's own;
write: the table's count after the job).  One run, each figure once
(``--repeats`` for more; medians); the ratios are PostgreSQL-over-JDBC's
seconds over the data source's (>1: the data source is faster).  Each figure
also records the CPU seconds the nyala server, PostgreSQL, Spark's JVM and
Spark's Python workers spent on it (``bench.process_cpu``), which say where
the time goes even when other work on the machine makes wall-clock figures
noisy.  Results go to ``bench/results/spark.json``; both markdown tables are
printed.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from bench import log_progress
from bench.process_cpu import KINDS, ProcessCpu, postmaster_pid
from spark import register
from tests.support.servers import NyalaServer, PostgresServer

log = logging.getLogger("bench.spark")

REPO_ROOT = Path(__file__).resolve().parents[1]
JDBC_JAR = Path("/usr/share/java/postgresql.jar")
PATHS = ("nyala data source", "JDBC on nyala", "JDBC on PostgreSQL")
SOURCE, JDBC_NYALA, JDBC_POSTGRES = PATHS
HOSTS = 16
ARROW_UNCAPPED_BYTES = 2**31 - 1
"""Spark's "no byte cap" value of spark.sql.execution.arrow.maxBytesPerBatch (Int.MaxValue)."""
TABLETS = 4


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    log_progress()
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="nyala-bench-spark-", dir=args.workdir))
    nyala = NyalaServer(workdir / "nyala")
    postgres = PostgresServer({"shared_buffers": "1GB"})
    nyala.start()
    postgres.start()
    spark = _session(args.master)
    results = _Runs(ProcessCpu(nyala.pid, postmaster_pid(postgres.data_dir)))
    try:
        dsns = {"nyala": nyala.dsn, "postgres": postgres.dsn}
        for dsn in dsns.values():
            _load(dsn, args.rows)
        expected = _expected(dsns["postgres"])
        with psycopg.connect(dsns["nyala"]) as conn:
            assert _expected_from(conn) == expected, "nyala and PostgreSQL loaded different rows"
        reads = {
            SOURCE: lambda: _source(spark, nyala.dsn).load(),
            JDBC_NYALA: lambda: _jdbc_read(spark, _jdbc_url(nyala.dsn), args.rows),
            JDBC_POSTGRES: lambda: _jdbc_read(spark, _jdbc_url(postgres.dsn), args.rows),
        }
        # Every path runs both reads once first: JVM code (the aggregate's generated code
        # and its JIT too, which otherwise the first path timed pays), Python worker and
        # planner daemons and connections are warm, so no timed path pays for start-up.
        for frame in reads.values():
            _check_count(frame().count(), args.rows)
            _check_aggregate(_aggregate(frame()), expected)
        for _ in range(args.repeats):
            for path, frame in reads.items():
                _time(results, f"read {args.rows:,} rows: count()", path,
                      lambda f=frame: _check_count(f().count(), args.rows))  # fmt: skip
                _time(results, f"read {args.rows:,} rows: count, sum, max per host", path,
                      lambda f=frame: _check_aggregate(_aggregate(f()), expected))  # fmt: skip
        writes: dict[str, tuple[str, Callable[[Any], None]]] = {
            SOURCE: (nyala.dsn, lambda df: _source_write(df, nyala.dsn)),
            JDBC_NYALA: (nyala.dsn, lambda df: _jdbc_write(df, _jdbc_url(nyala.dsn))),
            JDBC_POSTGRES: (postgres.dsn, lambda df: _jdbc_write(df, _jdbc_url(postgres.dsn))),
        }
        frame = _generated(spark, args.write_rows)
        # A small write on every path first: the data source's write and commit planner
        # daemons start (seconds of CPU each) before anything is timed, as reads' do above.
        warm = _generated(spark, min(args.write_rows, 1000))
        for dsn, write in writes.values():
            _recreate(dsn, "sink")
            write(warm)
        for _ in range(args.repeats):
            for path, (dsn, write) in writes.items():
                _recreate(dsn, "sink")
                _time(results, f"write {args.write_rows:,} rows (append)", path,
                      lambda w=write: w(frame))  # fmt: skip
                _check_count(_server_count(dsn, "sink"), args.write_rows)
    finally:
        spark.stop()
        nyala.close()
        postgres.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    payload = _report(results, args, time.monotonic() - started)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2) + "\n")
    print(payload["table"])
    print()
    print("CPU seconds per process (median run):")
    print(payload["cpu_table"])
    log.info("wrote %s", out)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.spark", description=__doc__)
    parser.add_argument("--rows", type=int, default=5_000_000, help="rows of the read table")
    parser.add_argument("--write-rows", type=int, default=1_000_000, help="rows each write job")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--workdir", default=None, help="where nyala's data goes (then removed)")
    parser.add_argument("--out", default=str(REPO_ROOT / "bench" / "results" / "spark.json"))
    return parser


def _session(master: str) -> SparkSession:
    # Spark's Python workers run this interpreter and import the data source by module name.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    session = (
        SparkSession.builder.master(master)
        .appName("nyala-bench-spark")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.jars", str(JDBC_JAR))
        .config("spark.driver.memory", "2g")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.python.daemon.module", "spark.daemon")
        # The README's advice for the data source (JDBC never uses Arrow): batches bounded
        # by maxRecordsPerBatch alone, not also by 4.x's 64 MB cap, which makes the JVM
        # size the Arrow batch it is filling after every row it writes to a Python worker.
        .config("spark.sql.execution.arrow.maxBytesPerBatch", str(ARROW_UNCAPPED_BYTES))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    return session


def _load(dsn: str, rows: int) -> None:
    """The read table, made by the same SQL on both servers (nyala: 4 hash tablets)."""
    postgres = "nyala" not in _version(dsn)
    partitioning = "" if postgres else f" partition by hash (id) partitions {TABLETS}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("drop table if exists events")
        conn.execute(
            "create table events (id bigint primary key, host text, ts timestamp,"
            f" value double precision){partitioning}"
        )
        step = 1_000_000
        for low in range(0, rows, step):
            conn.execute(
                "insert into events select i, 'host-' || (i %% %s)::text,"
                " timestamp '2024-01-01' + i * interval '1 second', (i %% 1000) / 8.0"
                " from generate_series(%s::bigint, %s::bigint) as g(i)",
                (HOSTS, low, min(rows, low + step) - 1),
            )
        if postgres:
            conn.execute("vacuum analyze events")
        conn.execute("checkpoint")
        _recreate(dsn, "sink")


def _recreate(dsn: str, name: str) -> None:
    postgres = "nyala" not in _version(dsn)
    partitioning = "" if postgres else f" partition by hash (id) partitions {TABLETS}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"drop table if exists {name}")
        conn.execute(
            f"create table {name} (id bigint primary key, host text, ts timestamp,"
            f" value double precision){partitioning}"
        )


def _version(dsn: str) -> str:
    with psycopg.connect(dsn) as conn:
        return str(conn.execute("select version()").fetchone()[0])  # type: ignore[index]


def _expected(dsn: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return _expected_from(conn)


def _expected_from(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
    return [
        (host, int(n), float(total), float(top))
        for host, n, total, top in conn.execute(
            "select host, count(*), sum(value), max(value) from events group by host order by host"
        )
    ]


def _source(spark: SparkSession, dsn: str) -> Any:
    fields = dict(part.split("=", 1) for part in dsn.split())
    return (
        spark.read.format("nyala")
        .option("host", fields["host"]).option("port", fields["port"])
        .option("user", fields["user"]).option("dbname", fields["dbname"])
        .option("table", "events")
    )  # fmt: skip


def _jdbc_url(dsn: str) -> str:
    fields = dict(part.split("=", 1) for part in dsn.split())
    return (
        f"jdbc:postgresql://{fields['host']}:{fields['port']}/{fields['dbname']}"
        f"?user={fields['user']}"
    )


def _jdbc_read(spark: SparkSession, url: str, rows: int) -> Any:
    return (
        spark.read.format("jdbc").option("url", url).option("driver", "org.postgresql.Driver").option("dbtable", "events")
        .option("partitionColumn", "id").option("lowerBound", "0")
        .option("upperBound", str(rows)).option("numPartitions", str(TABLETS))
        .option("fetchsize", "10000").load()
    )  # fmt: skip


def _aggregate(df: Any) -> list[tuple[Any, ...]]:
    rows = (
        df.groupBy("host")
        .agg(F.count("*").alias("n"), F.sum("value").alias("total"), F.max("value").alias("top"))
        .orderBy("host")
        .collect()
    )
    return [(r.host, int(r.n), float(r.total), float(r.top)) for r in rows]


def _check_count(got: int, want: int) -> None:
    if got != want:
        raise AssertionError(f"counted {got} rows, expected {want}")


def _check_aggregate(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> None:
    same = len(got) == len(want) and all(
        g[:2] == w[:2] and abs(g[2] - w[2]) <= 1e-6 * max(1.0, abs(w[2])) and g[3] == w[3]
        for g, w in zip(got, want, strict=True)
    )
    if not same:
        raise AssertionError(f"aggregate differs: {got[:3]} vs {want[:3]}")


def _generated(spark: SparkSession, rows: int) -> Any:
    frame = spark.range(0, rows, 1, TABLETS).select(
        F.col("id"),
        F.concat(F.lit("host-"), (F.col("id") % HOSTS).cast("string")).alias("host"),
        (F.lit("2024-01-01").cast("timestamp_ntz") + F.make_dt_interval(secs=F.col("id"))).alias(
            "ts"
        ),
        ((F.col("id") % 1000) / 8.0).alias("value"),
    )
    frame = frame.cache()
    _check_count(frame.count(), rows)  # made and cached before any write is timed
    return frame


def _source_write(df: Any, dsn: str) -> None:
    fields = dict(part.split("=", 1) for part in dsn.split())
    (
        df.write.format("nyala")
        .option("host", fields["host"]).option("port", fields["port"])
        .option("user", fields["user"]).option("dbname", fields["dbname"])
        .option("table", "sink").mode("append").save()
    )  # fmt: skip


def _jdbc_write(df: Any, url: str) -> None:
    separator = "&" if "?" in url else "?"
    (
        df.write.format("jdbc").option("driver", "org.postgresql.Driver")
        .option("url", url + separator + "reWriteBatchedInserts=true")
        .option("dbtable", "sink").option("batchsize", "10000").mode("append").save()
    )  # fmt: skip


def _server_count(dsn: str, table: str) -> int:
    with psycopg.connect(dsn) as conn:
        return int(conn.execute(f"select count(*) from {table}").fetchone()[0])  # type: ignore[index]


@dataclass
class _Runs:
    """Each figure's runs per path: wall seconds, and the CPU seconds of each kind of process."""

    processes: ProcessCpu
    seconds: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    cpu: dict[str, dict[str, list[dict[str, float]]]] = field(default_factory=dict)
    load_at_start: list[float] = field(
        default_factory=lambda: [round(x, 2) for x in os.getloadavg()]
    )


def _time(results: _Runs, figure: str, path: str, run: Callable[[], None]) -> None:
    before = results.processes.snapshot()
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    cpu = results.processes.since(before)
    spent = ", ".join(f"{kind} {value:.2f}" for kind, value in cpu.items() if value)
    print(f"{figure} via {path}: {seconds:.2f} s (CPU s: {spent})", file=sys.stderr, flush=True)
    results.seconds.setdefault(figure, {}).setdefault(path, []).append(seconds)
    results.cpu.setdefault(figure, {}).setdefault(path, []).append(cpu)


def _report(results: _Runs, args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    lines = [
        "| figure | "
        + " | ".join(PATHS)
        + " | JDBC-on-PostgreSQL / source | JDBC-on-nyala / source |",
        "|---" * (len(PATHS) + 3) + "|",
    ]
    cpu_lines = [
        "| figure | path | " + " | ".join(KINDS) + " |",
        "|---|---" + "|---" * len(KINDS) + "|",
    ]
    figures = []
    for figure, by_path in results.seconds.items():
        medians = {path: statistics.median(values) for path, values in by_path.items()}
        cpu = {
            path: {kind: statistics.median(run[kind] for run in runs) for kind in KINDS}
            for path, runs in results.cpu[figure].items()
        }
        cpu_lines.extend(
            f"| {figure} | {path} | " + " | ".join(f"{cpu[path][k]:.2f}" for k in KINDS) + " |"
            for path in PATHS
        )
        versus_postgres = medians[JDBC_POSTGRES] / medians[SOURCE]
        versus_nyala = medians[JDBC_NYALA] / medians[SOURCE]
        figures.append({
            "figure": figure, "seconds": by_path, "median": medians, "cpu_seconds": cpu,
            "jdbc_postgres_over_source": versus_postgres, "jdbc_nyala_over_source": versus_nyala,
        })  # fmt: skip
        cells = " | ".join(f"{medians[p]:.2f} s" for p in PATHS)
        lines.append(f"| {figure} | {cells} | {versus_postgres:.2f}x | {versus_nyala:.2f}x |")
    return {
        "command": "python -m bench.spark " + " ".join(sys.argv[1:]),
        "rows": args.rows,
        "write_rows": args.write_rows,
        "repeats": args.repeats,
        "master": args.master,
        "cpus": os.cpu_count(),
        "seconds": round(seconds, 1),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "figures": figures,
        "load_average_at_start": results.load_at_start,
        "table": "\n".join(lines),
        "cpu_table": "\n".join(cpu_lines),
    }


if __name__ == "__main__":
    sys.exit(main())
