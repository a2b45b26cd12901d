"""Multi-row INSERT ... VALUES of parameters (pgjdbc's reWriteBatchedInserts shape), which
nyala plans from its first row (sql/dml/values_rows.py), on nyala and on PostgreSQL 15:
the same tags, rows and SQLSTATEs, and the same after DDL changes the table."""

from __future__ import annotations

import decimal

import psycopg
import pytest

pytestmark = pytest.mark.e2e


def _rows_sql(width: int, rows: int) -> str:
    row = "(" + ", ".join(["%s"] * width) + ")"
    return "insert into vr (k, n, s, d) values " + ", ".join([row] * rows)


RUNS = [
    [(1, 1, "a", decimal.Decimal("1.005")), (2, 2, "bb  ", None)],
    [(3, 3, "c", None), (3, 4, "d", None)],  # 23505 in the statement
    [(4, 4, "c", None), (1, 5, "d", None)],  # 23505 with a live row
    [(5, 5, "c", None), (6, None, "d", None)],  # 23502
    [(5, 5, "c", None), (6, 40000, "d", None)],  # 22003: smallint
    [(5, 5, "c", None), (6, 6, "long", None)],  # 22001
    [(5, 5, "c", decimal.Decimal("1000.5")), (6, 6, "d", None)],  # 22003: numeric(5,2)
    [(7, 7, "g", None), (8, 8, "h", decimal.Decimal("-2.5"))],
]


def _answers(server) -> list[object]:  # noqa: ANN001
    out: list[object] = []
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists vr")
        conn.execute(
            "create table vr (k int primary key, n smallint not null, s varchar(3), "
            "d numeric(5, 2), q serial)"
        )
        cur = conn.cursor()
        for run in RUNS:
            try:
                cur.execute(_rows_sql(4, len(run)), [v for row in run for v in row], prepare=True)
                out.append(cur.statusmessage)
            except psycopg.Error as exc:
                out.append(exc.sqlstate)
        out.append(conn.execute("select k, n, s, d from vr order by k").fetchall())
        conn.execute("alter table vr add column t text default 'new'")
        cur.execute(_rows_sql(4, 3), [v for k in (20, 21, 22) for v in (k, k, "x", None)])
        conn.execute("alter table vr drop column s")
        cur.execute(
            "insert into vr (k, n, t) values (%s, %s, %s), (%s, %s, %s)",
            [30, 30, "y", 31, 31, "z"],
            prepare=True,
        )
        conn.execute("alter table vr add constraint n_small check (n < 40)")
        try:
            cur.execute(
                "insert into vr (k, n, t) values (%s, %s, %s), (%s, %s, %s)",
                [32, 32, "y", 33, 45, "z"],
                prepare=True,
            )
            out.append(cur.statusmessage)
        except psycopg.Error as exc:
            out.append(exc.sqlstate)
        out.append(conn.execute("select k, n, d, t from vr order by k").fetchall())
        conn.execute("drop table vr")
    return out


def test_multi_row_inserts_answer_as_postgresql(nyala_server, postgres_server):
    nyala = _answers(nyala_server)
    assert nyala == _answers(postgres_server)
    assert {"23505", "23502", "22003", "22001", "23514"} <= set(nyala[: len(RUNS)] + nyala[-2:-1])
