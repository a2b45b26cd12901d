"""Row-at-a-time work through psycopg: loads, inserts, point selects, updates, deletes.

nyala and PostgreSQL take turns within each repeat, so both see the same
machine.  Every statement's answer is checked (one row found, one row
changed), so a fast wrong answer cannot pass as a figure.  Apart from the
bulk load, each workload stops at its row count or after ``op_seconds``,
whichever comes first, so a slow system makes the run no longer; rates are
work done over time taken.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from bench import datasets
from bench.context import Context
from bench.measure import NYALA, POSTGRES, latencies_ms, stopwatch

log = logging.getLogger(__name__)

SERVERS = (NYALA, POSTGRES)
INSERT = "insert into {name} values (%s, %s, %s, %s)"
KEY = "host = %s and metric = %s and time = %s"


def bulk_load(ctx: Context) -> None:
    """Load ``metrics`` into an empty table, once per repeat; the last load stays."""
    rows = ctx.rows(500_000)
    table = datasets.metrics(rows)
    payload = datasets.prepare_load(table, ctx.load_method)
    fig = ctx.figures.figure(
        "bulk load metrics", f"rows/s ({rows:,} rows)", "rows/s", higher_is_better=True,
        note=ctx.load_method.value,
    )  # fmt: skip
    for _ in range(ctx.repeats):
        for system in SERVERS:
            with ctx.systems.connect(system) as conn:
                _recreate(conn, "metrics")
                with stopwatch() as elapsed:
                    datasets.load(conn, "metrics", table, ctx.load_method, payload)
                _check_count(conn, "metrics", rows)
            fig.add(system, rows / elapsed())
    ctx.facts["metrics_keys"] = datasets.metrics_keys(table)


def executemany(ctx: Context) -> None:
    """executemany INSERT, 1,000 rows per transaction."""
    rows = ctx.rows(20_000, minimum=1_000) // 1_000 * 1_000
    table = datasets.metrics(rows, seed=2)
    params = list(zip(*(column.to_pylist() for column in table.columns)))
    fig = ctx.figures.figure(
        "executemany INSERT", "rows/s (1,000 per transaction)", "rows/s", higher_is_better=True
    )
    for _ in range(ctx.repeats):
        for system in SERVERS:
            with ctx.systems.connect(system) as conn:
                _recreate(conn, "metrics_many")
                done = 0
                with stopwatch() as elapsed, conn.cursor() as cur:
                    while done < rows and elapsed() < ctx.op_seconds:
                        with conn.transaction():
                            cur.executemany(
                                INSERT.format(name="metrics_many"), params[done : done + 1_000]
                            )
                        done += 1_000
                _check_count(conn, "metrics_many", done)
            fig.add(system, done / elapsed())


def single_insert(ctx: Context) -> None:
    """Single-row INSERTs, each its own (autocommit) transaction: rate and latency."""
    rows = ctx.rows(3_000)
    table = datasets.metrics(rows, seed=3)
    params = list(zip(*(column.to_pylist() for column in table.columns)))
    figs = _rate_and_latency(ctx, "single-row autocommit INSERT", "rows/s")
    for _ in range(ctx.repeats):
        for system in SERVERS:
            with ctx.systems.connect(system) as conn:
                _recreate(conn, "metrics_single")
                sql = INSERT.format(name="metrics_single")
                with conn.cursor() as cur:
                    samples = _timed(
                        lambda row, cur=cur, sql=sql: cur.execute(sql, row, prepare=True),
                        params,
                        ctx.op_seconds,
                    )
                _check_count(conn, "metrics_single", len(samples))
            _record(figs, system, samples)


def point_select(ctx: Context) -> None:
    """Prepared point SELECTs by the full primary key of ``metrics``."""
    _by_key(
        ctx, "point SELECT by primary key (prepared)", "queries/s",
        f"select value from metrics where {KEY}", _sample_keys(ctx, ctx.rows(5_000)),
        rows_touched=lambda cur: len(cur.fetchall()),
    )  # fmt: skip


def update(ctx: Context) -> None:
    """UPDATE of one column by primary key, autocommit, prepared."""
    _by_key(
        ctx, "UPDATE one column by primary key", "rows/s",
        f"update metrics set value = value + 1 where {KEY}", _sample_keys(ctx, ctx.rows(3_000)),
        rows_touched=lambda cur: cur.rowcount,
    )  # fmt: skip


def _by_key(
    ctx: Context,
    workload: str,
    unit: str,
    sql: str,
    keys: list[Any],
    rows_touched: Callable[[Any], int],
) -> None:
    """Run one prepared statement per key, autocommit; each must touch exactly one row."""
    figs = _rate_and_latency(ctx, workload, unit)
    for _ in range(ctx.repeats):
        for system in SERVERS:
            with ctx.systems.connect(system) as conn, conn.cursor() as cur:

                def one(key: Any, cur: Any = cur, system: str = system) -> None:
                    cur.execute(sql, key, prepare=True)
                    touched = rows_touched(cur)
                    if touched != 1:
                        raise AssertionError(f"{system}: {sql!r} with {key} touched {touched}")

                samples = _timed(one, keys, ctx.op_seconds)
            _record(figs, system, samples)


def delete(ctx: Context) -> None:
    """DELETE 1% of ``metrics`` by key, in one transaction (executemany), per repeat."""
    keys: list[tuple[str, str, int]] = ctx.facts["metrics_keys"]  # type: ignore[assignment]
    per_repeat = max(1, len(keys) // 100)
    order = ctx.rng.permutation(len(keys))
    fig = ctx.figures.figure(
        "DELETE 1% of rows by key", f"rows/s (up to {per_repeat:,} rows)", "rows/s",
        higher_is_better=True, note="executemany in one transaction, 100 keys per call",
    )  # fmt: skip
    sql = f"delete from metrics where {KEY}"
    deleted: set[int] = set()
    for repeat in range(ctx.repeats):
        chosen = order[repeat * per_repeat : (repeat + 1) * per_repeat]
        for system in SERVERS:
            with ctx.systems.connect(system) as conn:
                before = _count(conn, "metrics")
                done = 0
                with stopwatch() as elapsed, conn.transaction(), conn.cursor() as cur:
                    while done < len(chosen) and elapsed() < ctx.op_seconds:
                        cur.executemany(sql, [keys[i] for i in chosen[done : done + 100]])
                        done += len(chosen[done : done + 100])
                _check_count(conn, "metrics", before - done)
            fig.add(system, done / elapsed())
            deleted.update(chosen[:done].tolist())
    ctx.facts["live_keys"] = [key for i, key in enumerate(keys) if i not in deleted]


def _rate_and_latency(ctx: Context, workload: str, unit: str) -> tuple[Any, Any, Any]:
    return (
        ctx.figures.figure(workload, unit, unit, higher_is_better=True),
        ctx.figures.figure(workload, "p50 latency", "ms", higher_is_better=False),
        ctx.figures.figure(workload, "p99 latency", "ms", higher_is_better=False),
    )


def _record(figs: tuple[Any, Any, Any], system: str, samples: list[float]) -> None:
    rate, p50, p99 = figs
    rate.add(system, len(samples) / sum(samples))
    low, high = latencies_ms(samples)
    p50.add(system, low)
    p99.add(system, high)


def _timed(operation: Any, arguments: list[Any], budget_s: float) -> list[float]:
    """Run ``operation`` on each argument until ``budget_s`` is spent; return each call's time."""
    samples = []
    clock = time.perf_counter
    deadline = clock() + budget_s
    for argument in arguments:
        start = clock()
        operation(argument)
        end = clock()
        samples.append(end - start)
        if end > deadline:
            break
    return samples


def _sample_keys(ctx: Context, n: int) -> list[tuple[str, str, int]]:
    keys: list[tuple[str, str, int]] = ctx.facts["metrics_keys"]  # type: ignore[assignment]
    picks = ctx.rng.integers(0, len(keys), size=n)
    return [keys[i] for i in picks]


def _recreate(conn: Any, name: str) -> None:
    conn.execute(f"drop table if exists {name}")
    conn.execute(datasets.METRICS_DDL.format(name=name))


def _count(conn: Any, name: str) -> int:
    return int(conn.execute(f"select count(*) from {name}").fetchone()[0])


def _check_count(conn: Any, name: str, expected: int) -> None:
    got = _count(conn, name)
    if got != expected:
        raise AssertionError(f"{name} has {got} rows, expected {expected}")
