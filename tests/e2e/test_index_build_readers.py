"""Reads go on while CREATE INDEX builds, on nyala as on PostgreSQL 15: the build holds its
table in SHARE mode, which only writers wait for (catalog/ddl_locks.py)."""

from __future__ import annotations

import pytest
from psycopg import errors

from tests.support.sessions import blocked, connect, pool, server, table  # noqa: F401

pytestmark = pytest.mark.e2e

_DONE_S = 10.0
TABLE_PREFIX = "ibr_"

_READS = [
    "select count(*) from {t}",
    "select id from {t} where v = 2",
    "select id from {t} where id = 3",
    "select v from {t} where id = 1 for share",
    "lock table {t} in access share mode",
]


def _reads_go_on(pool, conn, table: str) -> None:  # noqa: ANN001
    """Each read of ``table`` finishes at once, inside a transaction block and outside it."""
    for sql in _READS:
        conn.execute("begin")
        pool.submit(lambda q=sql: conn.execute(q.format(t=table))).result(timeout=_DONE_S)
        conn.execute("commit")
    for sql in _READS[:3]:
        for _ in range(2):  # the second run reuses the session's plan
            rows = pool.submit(lambda q=sql: conn.execute(q.format(t=table)).fetchall())
            rows.result(timeout=_DONE_S)
    assert conn.execute(f"select id from {table} where v = 2").fetchall() == [(2,)]


@pytest.mark.parametrize("create", ["create index", "create index concurrently"])
def test_reads_go_on_while_the_build_waits_for_a_writer(connect, pool, table, create):
    writer, builder, reader = connect(), connect(), connect()
    writer.execute("begin")
    writer.execute(f"insert into {table} values (10, 2)")
    building = pool.submit(lambda: builder.execute(f"{create} {table}_v on {table} (v)"))
    assert blocked(building)
    _reads_go_on(pool, reader, table)
    writer.execute("commit")
    building.result(timeout=30)
    assert reader.execute(f"select id from {table} where v = 2 order by id").fetchall() == [
        (2,),
        (10,),
    ]


def test_reads_go_on_and_writes_wait_while_a_block_holds_its_new_index(connect, pool, table):
    builder, reader, writer = connect(), connect(), connect()
    builder.execute("begin")
    builder.execute(f"create index {table}_v on {table} (v)")
    _reads_go_on(pool, reader, table)
    for sql in (f"insert into {table} values (11, 2)", f"update {table} set v = 5 where id = 3"):
        writing = pool.submit(lambda q=sql: writer.execute(q))
        assert blocked(writing)
        builder.execute("commit")
        writing.result(timeout=30)
        builder.execute("begin")
        builder.execute(f"drop index {table}_v")
        builder.execute(f"create index {table}_v on {table} (v)")
    builder.execute("commit")
    assert reader.execute(f"select id from {table} where v = 2 order by id").fetchall() == [
        (2,),
        (11,),
    ]
    assert reader.execute(f"select id from {table} where v = 5").fetchall() == [(3,)]


def test_other_ddl_still_makes_readers_wait(connect, pool, table):
    altering, reader = connect(), connect()
    altering.execute("begin")
    altering.execute(f"alter table {table} add column w int")
    reading = pool.submit(lambda: reader.execute(f"select count(*) from {table}").fetchone())
    assert blocked(reading)
    altering.execute("rollback")
    assert reading.result(timeout=30) == (3,)


def _by_index_and_scan(conn, table: str, value: int) -> list[int]:  # noqa: ANN001
    by_index = conn.execute(f"select id from {table} where v = {value} order by id").fetchall()
    by_scan = conn.execute(f"select id from {table} where v + 0 = {value} order by id").fetchall()
    assert by_index == by_scan
    return [r[0] for r in by_index]


def test_writers_go_on_during_a_concurrent_build(connect, pool, table):
    """CREATE INDEX CONCURRENTLY waits for the writers that were there; later ones go on, and
    what they write is indexed exactly once."""
    old, builder, late, reader = connect(), connect(), connect(), connect()
    old.execute("begin")
    old.execute(f"insert into {table} values (10, 2)")
    building = pool.submit(
        lambda: builder.execute(f"create index concurrently {table}_v on {table} (v)")
    )
    assert blocked(building)
    for sql in (
        f"insert into {table} values (11, 2), (12, 7)",
        f"update {table} set v = 2 where id = 3",
        f"delete from {table} where id = 2",
    ):
        pool.submit(lambda q=sql: late.execute(q)).result(timeout=_DONE_S)
    old.execute("commit")
    building.result(timeout=30)
    assert _by_index_and_scan(reader, table, 2) == [3, 10, 11]
    assert _by_index_and_scan(reader, table, 7) == [12]
    reader.execute(f"update {table} set v = 7 where id = 10")
    assert _by_index_and_scan(reader, table, 7) == [10, 12]
    valid = reader.execute(
        "select indisvalid from pg_index i join pg_class c on c.oid = i.indexrelid "
        "where c.relname = %s",
        (f"{table}_v",),
    ).fetchall()
    assert valid == [(True,)]


def test_a_concurrent_unique_build_that_meets_a_duplicate_leaves_an_invalid_index(
    connect, pool, table
):
    old, builder, late, reader = connect(), connect(), connect(), connect()
    old.execute("begin")
    old.execute(f"insert into {table} values (10, 20)")
    building = pool.submit(
        lambda: builder.execute(f"create unique index concurrently {table}_v on {table} (v)")
    )
    assert blocked(building)
    pool.submit(lambda: late.execute(f"insert into {table} values (11, 1)")).result(timeout=_DONE_S)
    old.execute("commit")
    with pytest.raises(errors.UniqueViolation):
        building.result(timeout=30)
    valid = reader.execute(
        "select indisvalid from pg_index i join pg_class c on c.oid = i.indexrelid "
        "where c.relname = %s",
        (f"{table}_v",),
    ).fetchall()
    assert valid == [(False,)]
    assert _by_index_and_scan(reader, table, 1) == [1, 11]  # the invalid index is not read
    reader.execute(f"drop index {table}_v")
