"""A cast to ``varchar[(n)]`` or ``name`` is described as that type (with varchar's
length), not as text, as PostgreSQL 15 describes it: simple and prepared, constant and
over a table."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.e2e

QUERIES = [
    "select 4::varchar",
    "select 'abc'::varchar(5), 'abc'::character varying, cast('a' as varchar(2)), 'y'::name",
    "select ('abc'::varchar(7)), 'x'::text, 'a'::varchar || 'b'",
    "select a::varchar, b::varchar(3), a || 'x', b::name from cdv",
]


def _described(dsn: str) -> list[object]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("drop table if exists cdv")
        conn.execute("create table cdv (k int primary key, a varchar(10), b text)")
        conn.execute("insert into cdv values (1, 'aa', 'bbbb')")
        try:
            out = []
            for q in QUERIES:
                for prepare in (False, True):
                    cur = conn.execute(q, prepare=prepare)
                    out.append(
                        ([(d.name, d.type_code, d.display_size) for d in cur.description],
                         cur.fetchall())
                    )  # fmt: skip
            return out
        finally:
            conn.execute("drop table cdv")


def test_text_casts_described_as_postgresql(nyala_server, postgres_server):
    assert _described(nyala_server.dsn) == _described(postgres_server.dsn)
