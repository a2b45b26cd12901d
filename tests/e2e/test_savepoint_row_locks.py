"""ROLLBACK TO SAVEPOINT gives up the row locks taken after the savepoint, step by step in
two sessions on nyala and PostgreSQL 15: a session blocked on such a row goes ahead at once;
locks taken before it stay (an upgrade after it goes back to the earlier mode); RELEASE keeps
them; PREPARE TRANSACTION keeps what is held then.

The blocked session runs with a short lock_timeout, so a lock that is not given up fails
the test with 55P03 rather than hanging it.
"""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

from tests.support.servers import TEST_SETTINGS, PostgresServer, missing_postgres_reason
from tests.support.sessions import blocked, connect, pool, server  # noqa: F401

pytestmark = pytest.mark.e2e

_DONE_S = 2.0
TABLE_PREFIX = "spl_"
_PARENT, _CHILD = "spl_parent", "spl_child"


def _tables(conn: psycopg.Connection) -> None:
    """A parent ``(id primary key, v, code unique)`` holding ids 1 to 3, and an empty child
    referencing it by id."""
    conn.execute(f"drop table if exists {_CHILD}, {_PARENT}")
    conn.execute(f"create table {_PARENT} (id int primary key, v int, code int unique)")
    conn.execute(f"create table {_CHILD} (id int primary key, p int references {_PARENT})")
    conn.execute(f"insert into {_PARENT} values (1, 10, 100), (2, 20, 200), (3, 30, 300)")


@pytest.fixture
def sessions(connect) -> tuple[psycopg.Connection, psycopg.Connection]:  # noqa: ANN001
    """The locker ``a`` and the waiter ``b`` (lock_timeout 3s)."""
    a, b = connect(), connect()
    _tables(a)
    b.execute("set lock_timeout = '3s'")
    return a, b


def _quick(future) -> str:  # noqa: ANN001
    """The outcome of a statement that must finish well within the waiter's lock_timeout."""
    try:
        future.result(timeout=_DONE_S)
    except psycopg.Error as exc:
        return str(exc.sqlstate)
    return "ok"


def _refused(conn: psycopg.Connection, sql: str) -> str:
    """The SQLSTATE of ``sql`` run under a short lock_timeout ("ok" if it went through)."""
    conn.execute("set lock_timeout = '300ms'")
    try:
        conn.execute(sql)
    except psycopg.Error as exc:
        return str(exc.sqlstate)
    finally:
        conn.execute("set lock_timeout = '3s'")
    return "ok"


LOCKS = {
    "for_update": f"select v from {_PARENT} where id = 1 for update",
    "for_no_key_update": f"select v from {_PARENT} where id = 1 for no key update",
    "for_share": f"select v from {_PARENT} where id = 1 for share",
    "for_key_share": f"select v from {_PARENT} where id = 1 for key share",
    "update": f"update {_PARENT} set v = 11 where id = 1",
    "key_update": f"update {_PARENT} set code = 101 where id = 1",
    "delete": f"delete from {_PARENT} where id = 1",
    "foreign_key_check": f"insert into {_CHILD} values (10, 1)",
}
"""A statement of ``a`` that locks parent row 1."""

_WAITER = {
    "for_key_share": f"delete from {_PARENT} where id = 1",
    "foreign_key_check": f"delete from {_PARENT} where id = 1",
}
"""What ``b`` runs against it (an update, unless that goes ahead beside the lock)."""


@pytest.mark.parametrize("lock", list(LOCKS))
def test_a_lock_taken_after_the_savepoint_goes_and_its_waiter_proceeds(sessions, pool, lock):
    a, b = sessions
    a.execute("begin")
    a.execute(f"select v from {_PARENT} where id = 2 for update")
    a.execute("savepoint s")
    a.execute(LOCKS[lock])
    pending = pool.submit(
        lambda: b.execute(_WAITER.get(lock, f"update {_PARENT} set v = 12 where id = 1"))
    )
    assert blocked(pending)
    a.execute("rollback to savepoint s")
    assert _quick(pending) == "ok"
    # The lock taken before the savepoint stays.
    assert _refused(b, f"update {_PARENT} set v = 22 where id = 2") == "55P03"
    a.execute("commit")
    assert _refused(b, f"update {_PARENT} set v = 22 where id = 2") == "ok"


def test_a_nested_savepoint_rolled_back_keeps_the_outer_ones_locks(sessions, pool):
    a, b = sessions
    a.execute("begin")
    a.execute("savepoint outer_sp")
    a.execute(f"select v from {_PARENT} where id = 1 for update")
    a.execute("savepoint inner_sp")
    a.execute(f"select v from {_PARENT} where id = 2 for update")
    a.execute(f"delete from {_PARENT} where id = 3")
    a.execute("rollback to inner_sp")
    assert _refused(b, f"update {_PARENT} set v = 12 where id = 1") == "55P03"
    assert _refused(b, f"update {_PARENT} set v = 22 where id = 2") == "ok"
    assert _refused(b, f"update {_PARENT} set v = 32 where id = 3") == "ok"
    pending = pool.submit(lambda: b.execute(f"update {_PARENT} set v = 13 where id = 1"))
    assert blocked(pending)
    a.execute("rollback to outer_sp")
    assert _quick(pending) == "ok"
    a.execute("commit")
    rows = b.execute(f"select id, v from {_PARENT} order by id").fetchall()
    assert rows == [(1, 13), (2, 22), (3, 32)]


def test_a_lock_upgraded_after_the_savepoint_goes_back_to_its_mode(sessions, pool):
    a, b = sessions
    a.execute("begin")
    a.execute(f"select v from {_PARENT} where id = 1 for share")
    a.execute("savepoint s")
    a.execute(f"select v from {_PARENT} where id = 1 for update")
    assert _refused(b, f"select v from {_PARENT} where id = 1 for share") == "55P03"
    pending = pool.submit(
        lambda: b.execute(f"select v from {_PARENT} where id = 1 for key share").fetchall()
    )
    assert blocked(pending)
    a.execute("rollback to savepoint s")
    assert _quick(pending) == "ok"
    # FOR SHARE again: another share goes ahead, a writer still waits.
    assert _refused(b, f"select v from {_PARENT} where id = 1 for share") == "ok"
    assert _refused(b, f"update {_PARENT} set v = 12 where id = 1") == "55P03"
    a.execute("commit")
    assert _refused(b, f"update {_PARENT} set v = 12 where id = 1") == "ok"


def test_an_update_after_the_savepoint_of_a_row_shared_before_keeps_the_share(sessions, pool):
    a, b = sessions
    a.execute("begin")
    a.execute(f"select v from {_PARENT} where id = 1 for share")
    a.execute("savepoint s")
    a.execute(f"update {_PARENT} set v = 11 where id = 1")
    pending = pool.submit(
        lambda: b.execute(f"select v from {_PARENT} where id = 1 for share").fetchall()
    )
    assert blocked(pending)
    a.execute("rollback to savepoint s")
    assert _quick(pending) == "ok"
    assert pending.result() == [(10,)]
    assert _refused(b, f"update {_PARENT} set v = 12 where id = 1") == "55P03"
    a.execute("commit")


def test_release_keeps_the_subtransactions_locks(sessions):
    a, b = sessions
    a.execute("begin")
    a.execute("savepoint s")
    a.execute(f"select v from {_PARENT} where id = 1 for update")
    a.execute(f"insert into {_CHILD} values (10, 2)")
    a.execute("release savepoint s")
    assert _refused(b, f"update {_PARENT} set v = 12 where id = 1") == "55P03"
    assert _refused(b, f"delete from {_PARENT} where id = 2") == "55P03"
    # Released into an outer savepoint, they go with it.
    a.execute("rollback")
    a.execute("begin")
    a.execute("savepoint outer_sp")
    a.execute("savepoint s")
    a.execute(f"select v from {_PARENT} where id = 1 for update")
    a.execute("release s")
    assert _refused(b, f"update {_PARENT} set v = 12 where id = 1") == "55P03"
    a.execute("rollback to outer_sp")
    assert _refused(b, f"update {_PARENT} set v = 12 where id = 1") == "ok"
    a.execute("commit")


@pytest.fixture(scope="module")
def postgres_2pc():
    reason = missing_postgres_reason()
    if reason is not None:
        pytest.skip(reason)
    with PostgresServer({**TEST_SETTINGS, "max_prepared_transactions": "10"}) as pg:
        yield pg


@pytest.mark.parametrize("kind", ["nyala", "postgres"])
def test_prepare_transaction_keeps_what_is_held_then(nyala_server, request, pool, kind):
    dsn = nyala_server.dsn if kind == "nyala" else request.getfixturevalue("postgres_2pc").dsn
    with psycopg.connect(dsn, autocommit=True) as a, psycopg.connect(dsn, autocommit=True) as b:
        _tables(a)
        b.execute("set lock_timeout = '3s'")
        a.execute("begin")
        a.execute(f"select v from {_PARENT} where id = 1 for update")
        a.execute(f"insert into {_CHILD} values (10, 3)")
        a.execute("savepoint s")
        a.execute(f"select v from {_PARENT} where id = 2 for update")
        pending = pool.submit(lambda: b.execute(f"update {_PARENT} set v = 22 where id = 2"))
        assert blocked(pending)
        a.execute("rollback to savepoint s")
        assert _quick(pending) == "ok"
        a.execute("prepare transaction 'spl_prepared'")
        try:
            assert _refused(b, f"update {_PARENT} set v = 12 where id = 1") == "55P03"
            assert _refused(b, f"delete from {_PARENT} where id = 3") == "55P03"
            assert _refused(b, f"update {_PARENT} set v = 23 where id = 2") == "ok"
        finally:
            a.execute("commit prepared 'spl_prepared'")
        assert _refused(b, f"update {_PARENT} set v = 12 where id = 1") == "ok"
        with pytest.raises(errors.ForeignKeyViolation):
            b.execute(f"delete from {_PARENT} where id = 3")
