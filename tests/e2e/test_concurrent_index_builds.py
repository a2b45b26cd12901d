"""Two plain CREATE INDEX on one table at once, step by step on nyala and PostgreSQL 15: both
hold SHARE, which does not conflict with itself, so neither waits for the other; a writer
waits for both; both indexes hold every row; a unique build that fails leaves the other."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.sessions import blocked, connect, pool, server  # noqa: F401

pytestmark = pytest.mark.e2e

_DONE_S = 2.0
TABLE_PREFIX = "cib_"
_T = "cib_t"


@pytest.fixture
def sessions(connect) -> list[psycopg.Connection]:  # noqa: ANN001
    """Three sessions over ``cib_t (id primary key, v, w)`` holding ids 1 to 4 (w has a
    duplicate); each waits at most 3 s for a lock."""
    conns = [connect() for _ in range(3)]
    conns[0].execute(f"drop table if exists {_T}")
    conns[0].execute(f"create table {_T} (id int primary key, v int, w int)")
    conns[0].execute(f"insert into {_T} values (1, 10, 1), (2, 20, 2), (3, 10, 3), (4, 40, 3)")
    for conn in conns:
        conn.execute("set lock_timeout = '3s'")
    return conns


def _ids(conn: psycopg.Connection, column: str, value: int) -> list[int]:
    """The ids with ``column = value``, by the index and by a scan: they must agree."""
    where = f"from {_T} where {column} = {value} order by id"
    by_index = [r[0] for r in conn.execute(f"select id {where}").fetchall()]
    scan = f"from {_T} where {column} + 0 = {value} order by id"
    assert by_index == [r[0] for r in conn.execute(f"select id {scan}").fetchall()]
    return by_index


def _indexes(conn: psycopg.Connection) -> list[str]:
    sql = (
        "select c.relname from pg_index i join pg_class c on c.oid = i.indexrelid"
        f" join pg_class t on t.oid = i.indrelid where t.relname = '{_T}' order by 1"
    )
    return [r[0] for r in conn.execute(sql).fetchall()]


def test_two_builds_run_at_once_and_a_writer_waits_for_both(sessions, pool):
    a, b, writer = sessions
    a.execute("begin")
    a.execute(f"create index cib_v on {_T} (v)")
    b.execute("begin")
    second = pool.submit(lambda: b.execute(f"create index cib_w on {_T} (w)"))
    second.result(timeout=_DONE_S)  # no wait for the first build
    pending = pool.submit(lambda: writer.execute(f"insert into {_T} values (5, 10, 5)"))
    assert blocked(pending)
    a.execute("commit")
    assert blocked(pending)  # the second build still holds the table
    b.execute("commit")
    pending.result(timeout=_DONE_S)
    assert _indexes(writer) == ["cib_t_pkey", "cib_v", "cib_w"]
    assert _ids(writer, "v", 10) == [1, 3, 5]
    assert _ids(writer, "w", 3) == [3, 4]
    assert _ids(writer, "w", 5) == [5]


def test_a_build_then_writing_the_table_keeps_the_other_builds_index(sessions, pool):
    """The second builder's own insert waits for the first build, then keeps its index too."""
    a, b, reader = sessions
    a.execute("begin")
    a.execute(f"create index cib_v on {_T} (v)")
    b.execute("begin")
    b.execute(f"create index cib_w on {_T} (w)")
    pending = pool.submit(lambda: b.execute(f"insert into {_T} values (5, 10, 3)"))
    assert blocked(pending)
    a.execute("commit")
    pending.result(timeout=_DONE_S)
    b.execute(f"update {_T} set v = 20 where id = 1")
    b.execute("commit")
    assert _indexes(reader) == ["cib_t_pkey", "cib_v", "cib_w"]
    assert _ids(reader, "v", 10) == [3, 5]
    assert _ids(reader, "v", 20) == [1, 2]
    assert _ids(reader, "w", 3) == [3, 4, 5]


def test_the_second_build_commits_first(sessions):
    a, b, reader = sessions
    a.execute("begin")
    a.execute(f"create unique index cib_id_v on {_T} (id, v)")
    b.execute(f"create index cib_w on {_T} (w)")  # its own transaction, committed at once
    assert _indexes(reader) == ["cib_t_pkey", "cib_w"]
    a.execute("commit")
    assert _indexes(reader) == ["cib_id_v", "cib_t_pkey", "cib_w"]
    reader.execute(f"insert into {_T} values (5, 50, 3)")
    assert _ids(reader, "w", 3) == [3, 4, 5]
    with pytest.raises(psycopg.errors.UniqueViolation):
        reader.execute(f"insert into {_T} values (5, 50, 6)")


def test_a_failed_unique_build_leaves_the_other(sessions):
    a, b, reader = sessions
    a.execute("begin")
    a.execute(f"create index cib_v on {_T} (v)")
    with pytest.raises(psycopg.errors.UniqueViolation):
        b.execute(f"create unique index cib_w on {_T} (w)")
    a.execute("commit")
    assert _indexes(reader) == ["cib_t_pkey", "cib_v"]
    reader.execute(f"insert into {_T} values (5, 10, 3)")
    assert _ids(reader, "v", 10) == [1, 3, 5]


def test_other_ddl_waits_for_a_build(sessions):
    a, b, _reader = sessions
    a.execute("begin")
    a.execute(f"create index cib_v on {_T} (v)")
    b.execute("set lock_timeout = '300ms'")
    with pytest.raises(psycopg.errors.LockNotAvailable):
        b.execute(f"alter table {_T} add column z int")
    with pytest.raises(psycopg.errors.LockNotAvailable):
        b.execute(f"create index concurrently cib_w on {_T} (w)")
    a.execute("commit")
