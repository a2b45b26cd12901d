"""Partitioned tables through psycopg: prepared point queries prune to one tablet, and the
partitioning, its ranges and the rows survive a kill -9 and restart."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.e2e


def _plan(conn: psycopg.Connection, sql: str, params: tuple = ()) -> list[str]:
    return [row[0] for row in conn.execute(sql, params).fetchall()]


def test_a_point_query_on_a_16_tablet_table_reads_one_tablet(fresh_nyala_server):
    with psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as conn:
        conn.execute(
            "create table kv (k bigint primary key, v text) partition by hash (k) partitions 16"
        )
        conn.execute("insert into kv select g, 'v' || g from generate_series(1, 1000) g")
        plan = _plan(conn, "explain analyze select v from kv where k = 421")
        assert any("1 of 16 tablets" in line for line in plan)
        read = [line for line in plan if line.startswith("Tablet ")]
        assert len(read) == 1 and ": 1 rows read;" in read[0]
        # The same through the extended protocol, with the key as a parameter, many times.
        for k in (1, 500, 1000, 77):
            assert conn.execute("select v from kv where k = %s", (k,), prepare=True).fetchall() == [
                (f"v{k}",)
            ]
        assert conn.execute("select count(*) from kv").fetchone() == (1000,)


@pytest.mark.slow
def test_partitions_and_rows_survive_kill_9(fresh_nyala_server):
    server = fresh_nyala_server
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(
            "create table m (host text, t bigint, v int, primary key (host, t)) "
            "partition by hash (host) partitions 3, range (t) (partition values < 10)"
        )
        conn.execute("alter table m add range partition 10 <= values < 20")
        conn.execute("insert into m select 'h' || (g % 4), g, g from generate_series(0, 19) g")
        conn.execute("alter table m drop range partition values < 10")
    server.kill9()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute("select count(*), min(t), max(t) from m").fetchone() == (10, 10, 19)
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("insert into m values ('h0', 5, 0)")
        plan = _plan(conn, "explain select * from m where host = 'h1' and t = 12")
        assert any("1 of 3 tablets" in line for line in plan)


def test_queries_the_scans_answer_alone_match_duckdbs_answers(fresh_nyala_server):
    """Plain-column queries with every predicate pushed skip DuckDB; compare with forced DuckDB
    (an ORDER BY keeps DuckDB above the scan)."""
    with psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as conn:
        conn.execute(
            "create table mix (k bigint, s varchar(8), d date, ts timestamptz, n numeric(8,2), "
            "b bytea, primary key (k, s)) partition by hash (k) partitions 4"
        )
        conn.execute(
            "insert into mix select g, 's' || g, date '2024-01-01' + g::int, "
            "timestamptz '2024-01-01 00:00:00+00' + g * interval '1 hour', g / 3.0, "
            "'\\x00ff'::bytea from generate_series(1, 50) g"
        )
        for sql, params in (
            ("select * from mix where k = %s and s = %s", (7, "s7")),
            ("select n, ts, d from mix where k = %s", (8,)),
            ("select s from mix where k in (1, 2, 3) and s like 's%%'", ()),
            ("select k, b from mix limit 5", ()),
        ):
            direct = conn.execute(sql, params, prepare=True)
            rows = sorted(direct.fetchall())
            types = [c.type_code for c in direct.description]
            ordered = conn.execute(sql.replace(" limit 5", "") + " order by 1", params)
            expected = sorted(ordered.fetchall())
            if "limit" not in sql:
                assert rows == expected
            else:
                assert len(rows) == 5 and set(rows) <= set(expected)
            assert types == [c.type_code for c in ordered.description]
