"""A subquery's or CTE's unnamed columns under an outer ``*`` take PostgreSQL's names
(``?column?``, ``count``, ``now``...), not the names sqlglot gives them (``1``, ``_col_3``),
through unions and nested subqueries; checked against PostgreSQL 15's row descriptions."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.e2e

QUERIES = [
    "select * from (select 1) s",
    "select * from (select 1, 2 as b, 'x', 1 + 1, count(*), now()::date, true, false as bool) s",
    "select s.* from (select 1) s",
    "with c as (select 1, 'y' as z) select * from c",
    "with c as (select 1) select c.* from c join (select 2) d on true",
    "select * from (select 1 union all select 2) s",
    "select * from (select * from (select 1) a) b",
    "select * from (select 1) s, (select 2) t",
    "select *, 1 from (select 1) s",
    "select * from (select k, k + 1, upper(v) from dcn) s",
    'select * from (select k as "1" from dcn) s',
]


def _described(dsn: str) -> list[object]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("drop table if exists dcn")
        conn.execute("create table dcn (k int primary key, v text)")
        try:
            return [
                [(d.name, d.type_code) for d in conn.execute(q).description or []] for q in QUERIES
            ]
        finally:
            conn.execute("drop table dcn")


def test_outer_star_names_as_postgresql(nyala_server, postgres_server):
    assert _described(nyala_server.dsn) == _described(postgres_server.dsn)
