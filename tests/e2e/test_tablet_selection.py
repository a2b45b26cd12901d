"""``FROM t PARTITION (tablet_id)`` and ``EXPLAIN (FORMAT JSON)``: what a parallel reader plans with.

EXPLAIN (FORMAT JSON) must name exactly the tablets pruning leaves; reading
each of them with ``PARTITION (id)`` under the same WHERE clause must give,
all together, the rows of the whole query, each once.
"""

from __future__ import annotations

import datetime as dt

import psycopg
import pytest
from psycopg import errors

pytestmark = pytest.mark.e2e


@pytest.fixture
def conn(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists sel")
        conn.execute(
            "create table sel (host text, ts timestamp, v bigint, primary key (host, ts))"
            " partition by hash (host) partitions 3, range (ts) ("
            " partition values < '2024-01-01', partition '2024-01-01' <= values < '2025-01-01')"
        )
        rows = [
            (f"h{i % 7}", dt.datetime(2023, 6, 1) + dt.timedelta(days=i), i) for i in range(400)
        ]
        with conn.cursor() as cur:
            cur.executemany("insert into sel values (%s, %s, %s)", rows)
        yield conn


def _plan(conn, query: str) -> dict:
    (document,) = conn.execute("explain (format json) " + query).fetchone()
    return document[0]["Plan"]


@pytest.mark.parametrize(
    ("where", "tablets"),
    [
        ("true", 6),
        ("host = 'h1'", 2),
        ("host in ('h1', 'h2') and ts >= '2024-02-01'", None),
        ("ts < '2023-12-31'", 3),
        ("v > 100 and host like 'h%'", 6),
    ],
)
def test_tablets_in_the_plan_read_one_by_one_give_the_query(conn, where, tablets):
    query = f"select host, v from sel where {where}"
    scan = _plan(conn, query)["Plans"][0]
    assert scan["Node Type"] == "Tablet Scan" and scan["Tablets Total"] == 6
    if tablets is not None:
        assert len(scan["Tablets"]) == tablets
    else:
        assert 1 <= len(scan["Tablets"]) <= 2
    every = sorted(conn.execute(query).fetchall())
    pieces = []
    for tablet in scan["Tablets"]:
        one = f"select host, v from sel partition ({tablet}) where {where}"
        assert _plan(conn, one)["Plans"][0]["Tablets"] == [tablet]
        pieces.extend(conn.execute(one).fetchall())
    assert sorted(pieces) == every


def test_pushed_predicates_and_columns_are_in_the_plan(conn):
    scan = _plan(conn, "select v from sel where host = 'h3' and v * 2 > 10")["Plans"][0]
    assert scan["Pushed Predicates"] == ["host = 'h3'"]
    assert scan["Columns"] == ["host", "v"]


def test_selection_with_time_travel_and_joins(conn):
    tablets = [r[0] for r in conn.execute(
        "select tablet_id from nyala_tablets where table_name = 'sel' order by tablet_id")]  # fmt: skip
    when = conn.execute("select now()").fetchone()[0]
    conn.execute("delete from sel")
    total = 0
    for tablet in tablets:
        (count,) = conn.execute(
            f"select count(*) from sel partition ({tablet})"
            f" for system_time as of '{when.isoformat()}'"
        ).fetchone()
        total += count
    assert total == 400
    (joined,) = conn.execute(
        f"select count(*) from sel partition ({tablets[0]}) a join sel b using (host)"
    ).fetchone()
    assert joined == 0


@pytest.mark.parametrize(
    ("statement", "sqlstate"),
    [
        ("select * from sel partition (9999)", "42704"),
        ("select * from sel partition ('a')", "22023"),
        ("explain (format yaml) select * from sel", "0A000"),
        ("explain (format bogus) select * from sel", "22023"),
        ("explain (analyze, format json) select * from sel", "0A000"),
    ],
)
def test_bad_selection_and_formats(conn, statement, sqlstate):
    with pytest.raises(errors.Error) as caught:
        conn.execute(statement)
    assert caught.value.sqlstate == sqlstate
