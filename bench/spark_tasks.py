"""``python -m bench.spark_tasks``: the server CPU of what one Spark task asks, without Spark.

A read task (``spark.reader``) reads one tablet with ``COPY (SELECT ... FROM t
PARTITION (id) FOR SYSTEM_TIME AS OF '<instant>') TO STDOUT (FORMAT arrow)``;
a write task (``spark.writer``) opens a new session and sends its rows with
``COPY t (cols) FROM STDIN (FORMAT arrow)`` in a transaction it then prepares.
This runs both against one server, reading every tablet of a table at the
current snapshot, at a pinned one (the clause, and ``nyala.read_timestamp``),
and writing small batches from new sessions, and prints the server process's
CPU seconds (``/proc/PID/stat``) per task kind: the share of a Spark job's
work that is nyala's, measured in a way a busy machine barely moves.
"""

from __future__ import annotations

import argparse
import io
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pyarrow as pa

from bench.statement_cost import _cpu_seconds, _settle
from tests.support.servers import NyalaServer


def _load(dsn: str, tablets: int, rows_per_tablet: int) -> list[int]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "create table events (id bigint primary key, host text, bytes bigint, at timestamptz)"
            f" partition by hash (id) partitions {tablets}"
        )
        total = tablets * rows_per_tablet
        step = 200_000
        for low in range(0, total, step):
            conn.execute(
                "insert into events select i, 'h' || (i % 50), i * 7 % 1000,"
                " timestamptz '2024-01-01' + i * interval '1 second'"
                f" from generate_series({low}::bigint, {min(low + step, total) - 1}::bigint) g(i)"
            )
        conn.execute("checkpoint")
        ids = conn.execute(
            "select tablet_id from nyala_tablets where table_name = 'events' order by 1"
        ).fetchall()
    return [int(r[0]) for r in ids]


def _read_task(dsn: str, query: str, pin: str | None = None) -> int:
    rows = 0
    with psycopg.connect(dsn, autocommit=False) as conn:
        if pin is not None:
            conn.execute(f"SET LOCAL nyala.read_timestamp = '{pin}'")
        with conn.cursor().copy(f"COPY ({query}) TO STDOUT (FORMAT arrow)") as copy:
            data = b"".join(bytes(c) for c in copy)
        for batch in pa.ipc.open_stream(data):
            rows += batch.num_rows
        conn.rollback()
    return rows


def _write_task(dsn: str, payload: bytes, gid: str) -> None:
    with psycopg.connect(dsn, autocommit=False) as conn:
        with conn.cursor().copy(
            "COPY sink (id, host, bytes, at) FROM STDIN (FORMAT arrow)"
        ) as copy:
            copy.write(payload)
        conn.execute(f"PREPARE TRANSACTION '{gid}'")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"COMMIT PREPARED '{gid}'")


def _payload(first: int, rows: int) -> bytes:
    ids = pa.array(range(first, first + rows), pa.int64())
    batch = pa.record_batch(
        {
            "id": ids,
            "host": pa.array([f"h{i % 50}" for i in range(rows)]),
            "bytes": pa.array([i * 7 % 1000 for i in range(rows)], pa.int64()),
            "at": pa.array([i * 1_000_000 for i in range(rows)], pa.timestamp("us", "UTC")),
        }
    )
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue()


def _measure(pid: int, repeats: int, run: Callable[[], Any]) -> list[float]:
    spent = []
    for _ in range(repeats):
        _settle(pid)
        before = _cpu_seconds(pid)
        run()
        spent.append(_cpu_seconds(pid) - before)
    return spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tablets", type=int, default=4)
    parser.add_argument("--rows-per-tablet", type=int, default=250_000)
    parser.add_argument("--write-tasks", type=int, default=20)
    parser.add_argument("--write-rows", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as data, NyalaServer(Path(data)) as server:
        assert server.pid is not None
        dsn = server.dsn
        tablet_ids = _load(dsn, args.tablets, args.rows_per_tablet)
        with psycopg.connect(dsn, autocommit=True) as conn:
            (instant,) = conn.execute("select now()::text").fetchone()  # type: ignore[misc]
            conn.execute("create table sink (id bigint primary key, host text, bytes bigint,"
                         " at timestamptz)")  # fmt: skip
        columns = "id, host, bytes, at"

        def reads(as_of: bool, pin: bool) -> Callable[[], None]:
            def run() -> None:
                for tablet in tablet_ids:
                    clause = f" FOR SYSTEM_TIME AS OF '{instant}'" if as_of else ""
                    query = f"SELECT {columns} FROM events PARTITION ({tablet}){clause}"
                    _read_task(dsn, query, instant if pin else None)

            return run

        written = iter(range(10**9))

        def writes() -> None:
            for _ in range(args.write_tasks):
                n = next(written)
                _write_task(dsn, _payload(n * args.write_rows, args.write_rows), f"bench-{n}")

        figures = {
            "read every tablet, current snapshot": reads(False, False),
            "read every tablet, FOR SYSTEM_TIME AS OF": reads(True, False),
            "read every tablet, nyala.read_timestamp": reads(False, True),
            f"{args.write_tasks} write tasks (new session, Arrow COPY, 2PC)": writes,
        }
        for name, run in figures.items():
            run()  # warm-up: caches, DuckDB's first query
            spent = _measure(server.pid, args.repeats, run)
            shown = ", ".join(f"{s:.3f}" for s in spent)
            print(f"{name}: median {statistics.median(spent):.3f} s server CPU ({shown})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
