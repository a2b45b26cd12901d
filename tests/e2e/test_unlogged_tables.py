"""CREATE UNLOGGED TABLE is accepted as PostgreSQL 15 accepts it, as CREATE UNLOGGED TABLE
... AS already was: the table works as any other (nyala logs it: README)."""

from __future__ import annotations

import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e


@pytest.fixture
def pair(nyala_server, postgres_server):
    setup = ["drop table if exists unlogged_t", "drop table if exists unlogged_ctas"]
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, setup) as pair:
        yield pair


def test_unlogged_table_works_as_on_postgres(pair):
    def tags(conn):
        steps = []
        for statement in (
            "create unlogged table unlogged_t (a int primary key, b text)",
            "insert into unlogged_t values (1, 'x'), (2, 'y')",
            "create unlogged table if not exists unlogged_t (a int primary key)",
            "create unlogged table unlogged_t (a int)",
            "create unlogged table unlogged_ctas as select a from unlogged_t",
        ):
            try:
                steps.append(conn.execute(statement).statusmessage)
            except Exception as exc:
                steps.append(exc.sqlstate)
        return steps

    pair.same(tags, "tags")
    pair.check("select * from unlogged_t order by a")
    pair.check("select count(*) from unlogged_ctas")


def test_unlogged_table_is_logged(pair):
    pair.run("create unlogged table unlogged_t (a int primary key)")
    # differs from PostgreSQL ('u'): nyala logs the table, so it survives a crash
    (row,) = pair.nyala.execute(
        "select relpersistence from pg_class where relname = 'unlogged_t'"
    ).fetchall()
    assert row == ("p",)
