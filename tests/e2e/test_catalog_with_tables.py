"""Queries that read user tables and call catalog functions or read catalogs, through psycopg,
side by side with PostgreSQL 15: ``pg_sleep`` per row is cancellable and honours
``statement_timeout`` (pgjdbc's ``setQueryTimeout`` and psycopg's cancel are tested this way),
parameters and the transaction's snapshot apply to the user tables in such a query."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["nyala", "postgres"])
def dsn(request, nyala_server, postgres_server) -> str:
    return nyala_server.dsn if request.param == "nyala" else postgres_server.dsn


@pytest.fixture
def table(dsn) -> Iterator[str]:
    name = f"mix_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"create table {name} (id int primary key, v text)")
        conn.execute(f"insert into {name} values (1, 'a'), (2, 'b'), (3, 'c')")
    yield name
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"drop table {name}")


def test_cancel_stops_pg_sleep_over_a_table(dsn, table):
    with psycopg.connect(dsn, autocommit=True) as conn:
        timer = threading.Timer(0.5, conn.cancel)
        timer.start()
        try:
            with pytest.raises(errors.QueryCanceled) as info:
                conn.execute(f"select id, pg_sleep(10) from {table}")
        finally:
            timer.cancel()
        assert info.value.sqlstate == "57014"
        assert conn.execute(f"select count(*) from {table}").fetchone() == (3,)


def test_statement_timeout_stops_pg_sleep_over_a_table(dsn, table):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("set statement_timeout = 300")
        with pytest.raises(errors.QueryCanceled) as info:
            conn.execute(f"select pg_sleep(10), v from {table} where id = %s", (1,))
        assert info.value.sqlstate == "57014"
        assert "statement timeout" in str(info.value)
        conn.execute("set statement_timeout = 0")
        rows = conn.execute(f"select id, pg_sleep(0.01) from {table} order by id").fetchall()
        assert [r[0] for r in rows] == [1, 2, 3]


def test_parameters_and_types_in_a_mixed_query(dsn, table):
    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.execute(
            f"select t.v, c.relname, pg_typeof(t.id)::text from {table} t "
            "join pg_class c on c.relname = %s where t.id > %s order by t.id",
            (table, 1),
        )
        assert cur.fetchall() == [("b", table, "integer"), ("c", table, "integer")]
        assert [d.name for d in cur.description] == ["v", "relname", "pg_typeof"]


def test_mixed_query_reads_the_transactions_snapshot(dsn, table):
    with psycopg.connect(dsn) as writer, psycopg.connect(dsn) as reader:
        writer.execute(f"insert into {table} values (4, 'd')")
        query = f"select count(*) from {table}, pg_namespace where nspname = 'public'"
        assert writer.execute(query).fetchone() == (4,)  # its own uncommitted row
        assert reader.execute(query).fetchone() == (3,)  # not another's
        writer.commit()
        reader.commit()
        assert reader.execute(query).fetchone() == (4,)
        reader.commit()
