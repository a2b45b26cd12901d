"""EXPLAIN of a time-travel read names what runs: never a secondary index, which a read
``FOR SYSTEM_TIME AS OF`` does not use (an index built later holds none of the rows then),
while the same query now still names it.  nyala's own clause, so no PostgreSQL to compare."""

from __future__ import annotations

import time

import psycopg
import pytest

pytestmark = pytest.mark.e2e


def test_explain_as_of_names_no_secondary_index(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("create table ttx (id int primary key, v int)")
        conn.execute("create index ttx_v on ttx (v)")
        conn.execute("insert into ttx select i, i % 10 from generate_series(1, 200) i")
        instant = conn.execute("select now()::text").fetchone()[0]
        time.sleep(0.05)

        def plan(sql: str) -> str:
            return "\n".join(row[0] for row in conn.execute("explain " + sql))

        now_plan = plan("select * from ttx where v = 3")
        past_plan = plan(f"select * from ttx for system_time as of '{instant}' where v = 3")
        assert "Index Scan using ttx_v" in now_plan
        assert "Index Scan" not in past_plan
        assert "Pushed predicates: v = 3" in past_plan
        past = f"select count(*) from ttx for system_time as of '{instant}' where v = 3"
        assert conn.execute(past).fetchone() == (20,)
