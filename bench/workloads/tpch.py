"""TPC-H-like lineitem: Q1 and Q6 in their standard text, and a wide fetch to the client.

The table is generated with numpy (``bench.datasets.lineitem``), loaded into
nyala and PostgreSQL through psycopg and into DuckDB from Arrow.  Q6's
answer is checked against numpy's on the same data, Q1's across systems.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

import psycopg

from bench import datasets
from bench.context import Context
from bench.measure import DUCKDB, NYALA, POSTGRES, stopwatch

log = logging.getLogger(__name__)

Q1 = """select
    l_returnflag,
    l_linestatus,
    sum(l_quantity) as sum_qty,
    sum(l_extendedprice) as sum_base_price,
    sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
    sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
    avg(l_quantity) as avg_qty,
    avg(l_extendedprice) as avg_price,
    avg(l_discount) as avg_disc,
    count(*) as count_order
from
    lineitem
where
    l_shipdate <= date '1998-12-01' - interval '90' day
group by
    l_returnflag,
    l_linestatus
order by
    l_returnflag,
    l_linestatus"""

Q6 = """select
    sum(l_extendedprice * l_discount) as revenue
from
    lineitem
where
    l_shipdate >= date '1994-01-01'
    and l_shipdate < date '1994-01-01' + interval '1' year
    and l_discount between 0.06 - 0.01 and 0.06 + 0.01
    and l_quantity < 24"""

WIDE = "select l_orderkey, l_extendedprice, l_shipdate, l_comment from lineitem"


def tpch(ctx: Context) -> None:
    rows = ctx.rows(1_000_000, minimum=100)
    table = datasets.lineitem(rows)
    expected_q6 = datasets.q6_answer(table)
    _load(ctx, table)
    q1 = ctx.figures.figure("TPC-H Q1", f"seconds ({rows:,} rows)", "s", higher_is_better=False)
    q6 = ctx.figures.figure(
        "TPC-H Q6", f"seconds ({rows:,} rows)", "s", higher_is_better=False,
        note=f"answer checked against numpy: {expected_q6}",
    )  # fmt: skip
    q1_answers: dict[str, Any] = {}
    for _ in range(ctx.repeats):
        for system in (NYALA, POSTGRES, DUCKDB):
            seconds, answer = _query(ctx, system, Q1)
            q1.add(system, seconds)
            q1_answers[system] = _q1_digest(answer)
            seconds, answer = _query(ctx, system, Q6)
            q6.add(system, seconds)
            if Decimal(answer[0][0]) != expected_q6:
                raise AssertionError(f"{system}: Q6 gave {answer[0][0]}, numpy {expected_q6}")
    reference = q1_answers[POSTGRES]
    if any(answer != reference for answer in q1_answers.values()):
        raise AssertionError(f"systems disagree on Q1: {q1_answers}")
    for binary in (False, True):
        fig = ctx.figures.figure(
            "wide fetch 4 columns", f"seconds ({rows:,} rows, {'binary' if binary else 'text'})",
            "s", higher_is_better=False, note="bigint, numeric, date, varchar",
        )  # fmt: skip
        for _ in range(ctx.repeats):
            for system in (NYALA, POSTGRES, DUCKDB):
                seconds, answer = _query(ctx, system, WIDE, binary=binary)
                if len(answer) != rows:
                    raise AssertionError(f"{system}: wide fetch gave {len(answer)} rows")
                fig.add(system, seconds)


def _load(ctx: Context, table: Any) -> None:
    payload = datasets.prepare_load(table, ctx.load_method)
    for system in (NYALA, POSTGRES):
        with ctx.systems.connect(system) as conn:
            conn.execute("drop table if exists lineitem")
            conn.execute(datasets.LINEITEM_DDL)
            datasets.load(conn, "lineitem", table, ctx.load_method, payload)
            if system == POSTGRES:
                conn.execute("vacuum analyze lineitem")
            conn.execute("checkpoint")
    duck = ctx.systems.duck()
    duck.execute("drop table if exists lineitem")
    duck.execute(datasets.LINEITEM_DDL)
    datasets.load_duckdb(duck, "lineitem", table)
    duck.execute("checkpoint")


def _query(ctx: Context, system: str, sql: str, *, binary: bool = False) -> tuple[float, list[Any]]:
    if system == DUCKDB:
        duck = ctx.systems.duck()
        with stopwatch() as elapsed:
            rows = duck.execute(sql).fetchall()
        return elapsed(), rows
    conn: psycopg.Connection[Any]
    with ctx.systems.connect(system) as conn, conn.cursor(binary=binary) as cur:
        with stopwatch() as elapsed:
            rows = cur.execute(sql).fetchall()
        return elapsed(), rows


def _q1_digest(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Return Q1's exact columns (groups, sums, counts); averages differ in type by system."""
    return [(r[0], r[1], *(Decimal(v) for v in r[2:6]), r[9]) for r in rows]
