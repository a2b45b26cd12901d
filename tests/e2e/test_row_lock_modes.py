"""PostgreSQL's four row-lock modes, step by step in two sessions on nyala and PostgreSQL 15:
who waits, who goes ahead, who fails with which SQLSTATE (storage/row_lock_mode.py).

A foreign-key check holds the parent row FOR KEY SHARE, which only a delete or a
change of a unique column (FOR UPDATE) waits for; an UPDATE of other columns
takes FOR NO KEY UPDATE.
"""

from __future__ import annotations

import threading

import psycopg
import pytest
from psycopg import errors

from tests.support.sessions import blocked, connect, pool, server  # noqa: F401

pytestmark = pytest.mark.e2e

_DONE_S = 10.0
TABLE_PREFIX = "rlm_"


@pytest.fixture
def tables(connect) -> tuple[str, str]:  # noqa: ANN001
    """A parent ``(id primary key, v, code unique)`` holding ids 1 and 2, and an empty child
    referencing it by id."""
    parent, child = "rlm_parent", "rlm_child"
    conn = connect()
    conn.execute(f"drop table if exists {child}, {parent}")
    conn.execute(f"create table {parent} (id int primary key, v int, code int unique)")
    conn.execute(f"create table {child} (id int primary key, p int references {parent})")
    conn.execute(f"insert into {parent} values (1, 10, 100), (2, 20, 200)")
    return parent, child


def _finishes(future) -> bool:  # noqa: ANN001
    """Whether ``future`` completes without waiting on a lock."""
    future.result(timeout=_DONE_S)
    return True


def _outcome(future) -> str:  # noqa: ANN001
    try:
        future.result(timeout=60)
    except psycopg.Error as exc:
        return str(exc.sqlstate)
    return "ok"


def test_two_child_inserts_of_one_parent_both_go_ahead(connect, pool, tables):
    parent, child = tables
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"insert into {child} values (10, 1)")
    b.execute("begin")
    assert _finishes(pool.submit(lambda: b.execute(f"insert into {child} values (11, 1)")))
    a.execute("commit")
    b.execute("commit")
    rows = a.execute(f"select id, p from {child} order by id").fetchall()
    assert rows == [(10, 1), (11, 1)]


def test_a_parent_delete_waits_for_the_child_insert_then_fails_23503(connect, pool, tables):
    parent, child = tables
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"insert into {child} values (10, 1)")
    pending = pool.submit(lambda: b.execute(f"delete from {parent} where id = 1"))
    assert blocked(pending)
    a.execute("commit")
    assert _outcome(pending) == "23503"


def test_a_child_insert_waits_for_the_parent_delete_then_fails_23503(connect, pool, tables):
    parent, child = tables
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"delete from {parent} where id = 1")
    pending = pool.submit(lambda: b.execute(f"insert into {child} values (10, 1)"))
    assert blocked(pending)
    a.execute("commit")
    assert _outcome(pending) == "23503"
    assert b.execute(f"select count(*) from {child}").fetchone() == (0,)


def test_a_child_insert_and_a_non_key_update_of_its_parent_do_not_wait(connect, pool, tables):
    parent, child = tables
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"insert into {child} values (10, 1)")
    b.execute("begin")
    assert _finishes(pool.submit(lambda: b.execute(f"update {parent} set v = 11 where id = 1")))
    b.execute("commit")
    a.execute("commit")
    # The other order: the parent's update first, then the child insert.
    a.execute("begin")
    a.execute(f"update {parent} set v = 12 where id = 1")
    assert _finishes(pool.submit(lambda: b.execute(f"insert into {child} values (11, 1)")))
    a.execute("commit")
    assert b.execute(f"select v from {parent} where id = 1").fetchone() == (12,)
    assert b.execute(f"select count(*) from {child}").fetchone() == (2,)


def test_a_unique_column_update_of_the_parent_waits_for_the_child_insert(connect, pool, tables):
    parent, child = tables
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"insert into {child} values (10, 1)")
    pending = pool.submit(lambda: b.execute(f"update {parent} set code = 101 where id = 1"))
    assert blocked(pending)
    a.execute("commit")
    assert _outcome(pending) == "ok"
    # And a child insert waits for an uncommitted change of its parent's unique column.
    a.execute("begin")
    a.execute(f"update {parent} set code = 102 where id = 1")
    pending = pool.submit(lambda: b.execute(f"insert into {child} values (11, 1)"))
    assert blocked(pending)
    a.execute("commit")
    assert _outcome(pending) == "ok"


def test_for_share_makes_an_update_wait(connect, pool, tables):
    parent, _child = tables
    a, b = connect(), connect()
    a.execute("begin")
    assert a.execute(f"select v from {parent} where id = 1 for share").fetchall() == [(10,)]
    pending = pool.submit(lambda: b.execute(f"update {parent} set v = 11 where id = 1"))
    assert blocked(pending)
    # Another FOR SHARE, a FOR KEY SHARE and a plain read go ahead beside it.
    c = connect()
    c.execute("begin")
    assert c.execute(f"select v from {parent} where id = 1 for share").fetchall() == [(10,)]
    assert c.execute(f"select v from {parent} where id = 2 for key share").fetchall() == [(20,)]
    c.execute("commit")
    a.execute("commit")
    assert _outcome(pending) == "ok"
    assert a.execute(f"select v from {parent} where id = 1").fetchone() == (11,)


def test_for_key_share_and_for_no_key_update_do_not_wait(connect, pool, tables):
    parent, _child = tables
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"select v from {parent} where id = 1 for key share").fetchall()
    b.execute("begin")
    locker = pool.submit(
        lambda: b.execute(f"select v from {parent} where id = 1 for no key update").fetchall()
    )
    assert _finishes(locker)
    # FOR UPDATE conflicts with FOR KEY SHARE: NOWAIT fails at once.
    c = connect()
    c.execute("begin")
    with pytest.raises(errors.LockNotAvailable):
        c.execute(f"select v from {parent} where id = 1 for update nowait")
    c.execute("rollback")
    b.execute("commit")
    a.execute("commit")


def test_nowait_and_lock_timeout_fail_with_55p03(connect, tables):
    parent, child = tables
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"insert into {child} values (10, 1)")
    with pytest.raises(errors.LockNotAvailable):
        b.execute(f"select id from {parent} where id = 1 for update nowait")
    b.execute("set lock_timeout = '300ms'")
    with pytest.raises(errors.LockNotAvailable):
        b.execute(f"delete from {parent} where id = 1")
    # A weaker lock than the child insert's conflicts with does not wait.
    assert b.execute(f"select id from {parent} where id = 1 for share nowait").fetchall() == [(1,)]
    a.execute("commit")


def test_a_cancel_ends_a_delete_waiting_for_a_key_share(connect, pool, tables):
    parent, child = tables
    a, b = connect(), connect()
    a.execute("begin")
    a.execute(f"insert into {child} values (10, 1)")
    pending = pool.submit(lambda: b.execute(f"delete from {parent} where id = 1"))
    assert blocked(pending)
    b.cancel()
    assert _outcome(pending) == "57014"
    a.execute("commit")


@pytest.mark.parametrize(
    ("lock", "update"),
    [
        # Two child inserts hold the parent FOR KEY SHARE; each then changes its unique column.
        (
            "insert into {child} values ({n}, 1)",
            "update {parent} set code = 100 + {n} where id = 1",
        ),
        # Two FOR SHARE holders each update the row.
        (
            "select id from {parent} where id = 1 for share",
            "update {parent} set v = {n} where id = 1",
        ),
    ],
    ids=["key_share", "share"],
)
def test_two_lock_holders_both_updating_deadlock_and_one_fails_40p01(
    connect, pool, tables, lock, update
):
    parent, child = tables
    a, b = connect(), connect()
    for n, conn in ((10, a), (11, b)):
        conn.execute("begin")
        conn.execute(lock.format(parent=parent, child=child, n=n))
    first = pool.submit(lambda: a.execute(update.format(parent=parent, child=child, n=10)))
    assert blocked(first)
    second = pool.submit(lambda: b.execute(update.format(parent=parent, child=child, n=11)))
    assert sorted([_outcome(first), _outcome(second)]) == ["40P01", "ok"]
    for conn in (a, b):
        conn.execute("rollback")


def test_many_child_inserts_of_one_parent_run_side_by_side(connect, tables):
    """Eight sessions each hold the parent FOR KEY SHARE in an open transaction at once."""
    parent, child = tables
    conns = [connect() for _ in range(8)]
    all_in = threading.Barrier(len(conns), timeout=_DONE_S)

    def insert(n: int, conn: psycopg.Connection) -> None:
        conn.execute("begin")
        conn.execute(f"insert into {child} values (%s, 2)", (100 + n,))
        all_in.wait()  # nobody commits before everybody has inserted
        conn.execute("commit")

    threads = [threading.Thread(target=insert, args=(n, c)) for n, c in enumerate(conns)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert conns[0].execute(f"select count(*) from {child} where p = 2").fetchone() == (8,)


def test_repeatable_read_parent_delete_after_a_child_committed_unseen(connect, tables):
    """The child row committed after the deleter's snapshot still keeps its parent (23503, as
    PostgreSQL's check finds it), and the delete leaves no orphan."""
    parent, child = tables
    a, b = connect(), connect()
    a.execute("begin isolation level repeatable read")
    a.execute(f"select count(*) from {child}").fetchall()  # takes the snapshot
    b.execute(f"insert into {child} values (10, 1)")
    with pytest.raises(errors.ForeignKeyViolation):
        a.execute(f"delete from {parent} where id = 1")
    a.execute("rollback")
    assert b.execute(f"select count(*) from {child}").fetchone() == (1,)
