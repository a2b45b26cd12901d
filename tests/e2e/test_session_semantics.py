"""Session semantics drivers rely on, through psycopg, side by side with PostgreSQL 15.

psycopg outside autocommit sends its own BEGIN before the user's first statement, so a user's
``BEGIN ISOLATION LEVEL REPEATABLE READ`` arrives inside a block: PostgreSQL warns and applies
the level, and so must nyala, or the user's lost-update protection is silently gone.
"""

from __future__ import annotations

import uuid

import psycopg
import pytest
from psycopg import errors

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["nyala", "postgres"])
def dsn(request, nyala_server, postgres_server) -> str:
    return nyala_server.dsn if request.param == "nyala" else postgres_server.dsn


def test_begin_isolation_level_inside_the_drivers_implicit_block(dsn):
    table = f"acct_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"create table {table} (id int primary key, balance int)")
        admin.execute(f"insert into {table} values (1, 100)")
    try:
        with psycopg.connect(dsn) as user, psycopg.connect(dsn, autocommit=True) as other:
            notices: list[str] = []
            user.add_notice_handler(lambda d: notices.append(d.sqlstate or ""))
            user.execute("begin isolation level repeatable read")  # after psycopg's BEGIN
            assert notices == ["25001"]
            assert user.execute("show transaction_isolation").fetchone() == ("repeatable read",)
            assert user.execute(f"select balance from {table}").fetchone() == (100,)
            other.execute(f"update {table} set balance = balance + 1 where id = 1")
            with pytest.raises(errors.SerializationFailure):
                user.execute(f"update {table} set balance = balance - 10 where id = 1")
            user.rollback()
            assert user.execute("show transaction_isolation").fetchone() == ("read committed",)
            user.rollback()
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            assert admin.execute(f"select balance from {table}").fetchone() == (101,)
            admin.execute(f"drop table {table}")


def test_isolation_level_after_a_query_in_the_block_fails_it(dsn):
    with psycopg.connect(dsn) as conn:
        conn.execute("select 1")
        with pytest.raises(errors.ActiveSqlTransaction):
            conn.execute("begin isolation level serializable")
        with pytest.raises(errors.InFailedSqlTransaction):
            conn.execute("select 1")
        conn.rollback()
        assert conn.execute("select 2").fetchone() == (2,)
