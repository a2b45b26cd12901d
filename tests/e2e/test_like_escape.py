"""LIKE and ILIKE take the backslash as their escape character unless ESCAPE names another,
as PostgreSQL's do (Django writes ``LIKE '%50\\%%'`` for ``contains='50%'``): in queries,
UPDATE and DELETE filters, catalog queries and parameters, beside PostgreSQL 15."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.e2e

STATEMENTS = [
    r"select 'a_b' like 'a\_b', 'axb' like 'a\_b', 'a%' like 'a\%', 'a\b' like 'a\\b'",
    r"select 'A_b' ilike 'a\_B', 'a_b' not like 'a\_b', 'axb' not ilike 'A\_B'",
    r"select 'a_b' like 'a#_b' escape '#', 'a\b' like 'a\b' escape ''",
    r"select 'ab\' like 'ab\'",
    "create table le_t (k int primary key, s text)",
    "insert into le_t values (1, 'a_b'), (2, 'axb'), (3, '50%'), (4, '50x'), (5, 'ab_cd')",
    r"select k from le_t where s like 'a\_%' order by k",
    r"select k from le_t where s like '%\%' order by k",
    r"select k from le_t where s not like '50\%' order by k",
    r"select k from le_t where s like 'ab\_c%' order by k",
    r"update le_t set s = s || '!' where s like 'a\_b'",
    r"delete from le_t where s ilike 'A\_B!'",
    "select k, s from le_t order by k",
    r"select relname from pg_class where relname like 'le\_t%' order by 1",
    "drop table le_t",
]


def _answers(dsn: str) -> list[object]:
    out: list[object] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for sql in STATEMENTS:
            try:
                cur = conn.execute(sql)
                out.append((cur.statusmessage, cur.fetchall() if cur.description else None))
            except psycopg.Error as exc:
                out.append(exc.sqlstate)
        for pattern in (r"a\_%", r"%\%", "a_%"):
            out.append(conn.execute("select %s::text like %s", ("a_b", pattern)).fetchone())
    return out


def test_like_escapes_with_a_backslash_as_postgresql(nyala_server, postgres_server):
    assert _answers(nyala_server.dsn) == _answers(postgres_server.dsn)
