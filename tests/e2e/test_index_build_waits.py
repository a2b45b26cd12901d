"""An index built while another transaction holds uncommitted writes on the table waits for
it, on nyala as on PostgreSQL 15 (whose CREATE INDEX waits for the writers' ROW EXCLUSIVE
locks): what the writer commits is indexed exactly once, what it rolls back not at all."""

from __future__ import annotations

import itertools
import threading
import time

import pytest
from psycopg import errors

from tests.support.sessions import blocked, connect, pool, server, table  # noqa: F401

pytestmark = pytest.mark.e2e

TABLE_PREFIX = "ibw_"


def _found(conn, table: str, value: int) -> list[int]:  # noqa: ANN001
    """The ids with ``v = value``, by the index and by a full scan: they must agree."""
    by_index = conn.execute(f"select id from {table} where v = {value} order by id").fetchall()
    by_scan = conn.execute(f"select id from {table} where v + 0 = {value} order by id").fetchall()
    assert by_index == by_scan
    return [r[0] for r in by_index]


@pytest.mark.parametrize("create", ["create index", "create index concurrently"])
def test_build_waits_for_the_writer_and_indexes_its_rows(connect, pool, table, create):
    writer, builder, reader = connect(), connect(), connect()
    writer.execute("begin")
    writer.execute(f"insert into {table} values (10, 2), (11, 7)")
    pending = pool.submit(lambda: builder.execute(f"{create} {table}_v on {table} (v)"))
    assert blocked(pending)
    writer.execute("commit")
    pending.result(timeout=30)
    assert _found(reader, table, 2) == [2, 10]
    assert _found(reader, table, 7) == [11]
    reader.execute(f"insert into {table} values (12, 2)")
    assert _found(reader, table, 2) == [2, 10, 12]


def test_build_after_the_writer_rolls_back_indexes_none_of_its_rows(connect, pool, table):
    writer, builder, reader = connect(), connect(), connect()
    writer.execute("begin")
    writer.execute(f"insert into {table} values (10, 2)")
    writer.execute(f"update {table} set v = 5 where id = 1")
    pending = pool.submit(lambda: builder.execute(f"create index {table}_v on {table} (v)"))
    assert blocked(pending)
    writer.execute("rollback")
    pending.result(timeout=30)
    assert _found(reader, table, 2) == [2]
    assert _found(reader, table, 1) == [1]
    assert _found(reader, table, 5) == []


def test_the_waited_for_writer_goes_on_writing_the_table(connect, pool, table):
    """It already holds its lock on the table: its next statements do not wait for the build."""
    writer, builder, reader = connect(), connect(), connect()
    writer.execute("begin")
    writer.execute(f"insert into {table} values (10, 2)")
    pending = pool.submit(lambda: builder.execute(f"create index {table}_v on {table} (v)"))
    assert blocked(pending)
    writer.execute(f"insert into {table} values (11, 2)")
    writer.execute(f"delete from {table} where id = 1")
    assert not pending.done()
    writer.execute("commit")
    pending.result(timeout=30)
    assert _found(reader, table, 2) == [2, 10, 11]
    assert _found(reader, table, 1) == []


def test_a_writer_arriving_during_the_build_waits_for_it(connect, pool, table):
    """Only the writers there when the build began are waited for; a later one queues behind
    the build, as behind PostgreSQL's pending SHARE lock, and its row is indexed after."""
    writer, builder, late, reader = connect(), connect(), connect(), connect()
    writer.execute("begin")
    writer.execute(f"insert into {table} values (10, 2)")
    building = pool.submit(lambda: builder.execute(f"create index {table}_v on {table} (v)"))
    assert blocked(building)
    arriving = pool.submit(lambda: late.execute(f"insert into {table} values (11, 2)"))
    assert blocked(arriving)
    writer.execute("commit")
    building.result(timeout=30)
    arriving.result(timeout=30)
    assert _found(reader, table, 2) == [2, 10, 11]


def test_build_waits_for_a_copy_under_way(connect, pool, table):
    """COPY FROM holds the table from its start, before its rows arrive, as PostgreSQL's
    ROW EXCLUSIVE lock does: the build waits for it and indexes what it copied."""
    writer, builder, reader = connect(), connect(), connect()
    with writer.cursor().copy(f"copy {table} from stdin") as copy:
        building = pool.submit(lambda: builder.execute(f"create index {table}_v on {table} (v)"))
        assert blocked(building)
        copy.write_row((10, 2))
        copy.write_row((11, 2))
    building.result(timeout=30)
    assert _found(reader, table, 2) == [2, 10, 11]


@pytest.mark.parametrize(
    "ddl",
    ["create unique index {t}_v on {t} (v)", "alter table {t} add constraint {t}_v unique (v)"],
)
def test_unique_build_fails_on_the_writers_committed_duplicate(connect, pool, table, ddl):
    writer, builder, reader = connect(), connect(), connect()
    writer.execute("begin")
    writer.execute(f"insert into {table} values (10, 2)")
    pending = pool.submit(lambda: builder.execute(ddl.format(t=table)))
    assert blocked(pending)
    writer.execute("commit")
    with pytest.raises(errors.UniqueViolation):
        pending.result(timeout=30)
    assert _found(reader, table, 2) == [2, 10]
    reader.execute(f"insert into {table} values (11, 2)")  # no index was left behind
    assert _found(reader, table, 2) == [2, 10, 11]


def test_unique_build_succeeds_when_the_duplicate_rolls_back(connect, pool, table):
    writer, builder, reader = connect(), connect(), connect()
    writer.execute("begin")
    writer.execute(f"insert into {table} values (10, 2)")
    pending = pool.submit(lambda: builder.execute(f"create unique index {table}_v on {table} (v)"))
    assert blocked(pending)
    writer.execute("rollback")
    pending.result(timeout=30)
    with pytest.raises(errors.UniqueViolation):
        reader.execute(f"insert into {table} values (11, 2)")
    assert _found(reader, table, 2) == [2]


def test_lock_timeout_ends_the_wait(connect, table):
    writer, builder, reader = connect(), connect(), connect()
    writer.execute("begin")
    writer.execute(f"insert into {table} values (10, 2)")
    builder.execute("set lock_timeout = '300ms'")
    with pytest.raises(errors.LockNotAvailable):
        builder.execute(f"create index {table}_v on {table} (v)")
    writer.execute("commit")
    builder.execute(f"create index {table}_v on {table} (v)")  # the first left nothing behind
    assert _found(reader, table, 2) == [2, 10]


def test_statement_timeout_ends_the_wait(connect, table):
    writer, builder = connect(), connect()
    writer.execute("begin")
    writer.execute(f"insert into {table} values (10, 2)")
    builder.execute("set statement_timeout = '300ms'")
    with pytest.raises(errors.QueryCanceled):
        builder.execute(f"create index {table}_v on {table} (v)")
    writer.execute("rollback")


def test_a_cycle_through_another_tables_lock_is_a_deadlock(connect, pool, table):
    """The build holds ``other``'s lock and waits for the writer, which then writes ``other``:
    one of the two gets 40P01 (PostgreSQL picks whichever checks first) and the other goes on."""
    other = f"{table}_o"
    writer, builder, reader = connect(), connect(), connect()
    reader.execute(f"drop table if exists {other}")
    reader.execute(f"create table {other} (id int primary key, v int)")
    builder.execute("begin")
    builder.execute(f"create index {other}_v on {other} (v)")
    writer.execute("begin")
    writer.execute(f"insert into {table} values (10, 2)")
    building = pool.submit(lambda: builder.execute(f"create index {table}_v on {table} (v)"))
    assert blocked(building)
    writing = pool.submit(lambda: writer.execute(f"insert into {other} values (1, 1)"))
    failures = []
    for conn, future in ((writer, writing), (builder, building)):
        try:
            future.result(timeout=30)
        except errors.DeadlockDetected:
            failures.append(conn)
            conn.execute("rollback")
    assert len(failures) == 1
    survivor = builder if failures == [writer] else writer
    survivor.execute("commit")
    assert _found(reader, table, 2) == ([2] if failures == [writer] else [2, 10])


def test_a_cycle_through_a_row_lock_is_a_deadlock(connect, pool, table):
    """The build's transaction holds a row the writer then inserts too: 40P01 for one."""
    other = f"{table}_r"
    writer, builder, reader = connect(), connect(), connect()
    reader.execute(f"drop table if exists {other}")
    reader.execute(f"create table {other} (id int primary key)")
    builder.execute("begin")
    builder.execute(f"insert into {other} values (1)")
    writer.execute("begin")
    writer.execute(f"insert into {table} values (10, 2)")
    building = pool.submit(lambda: builder.execute(f"create index {table}_v on {table} (v)"))
    assert blocked(building)
    writing = pool.submit(lambda: writer.execute(f"insert into {other} values (1)"))
    failures = []
    for conn, future in ((writer, writing), (builder, building)):
        try:
            future.result(timeout=30)
        except errors.DeadlockDetected:
            failures.append(conn)
            conn.execute("rollback")
    assert len(failures) == 1
    survivor = builder if failures == [writer] else writer
    survivor.execute("commit")
    assert _found(reader, table, 2) == ([2] if failures == [writer] else [2, 10])


def test_repeatable_read_build_indexes_rows_its_snapshot_predates(connect, pool, table):
    """PostgreSQL indexes every live row whatever the snapshot; the block's own reads still
    see its snapshot, through the index as through a scan."""
    writer, builder, reader = connect(), connect(), connect()
    builder.execute("begin isolation level repeatable read")
    assert builder.execute(f"select count(*) from {table}").fetchone() == (3,)
    writer.execute("begin")
    writer.execute(f"insert into {table} values (10, 2)")
    pending = pool.submit(lambda: builder.execute(f"create index {table}_v on {table} (v)"))
    assert blocked(pending)
    writer.execute("commit")
    pending.result(timeout=30)
    assert _found(builder, table, 2) == [2]
    builder.execute("commit")
    assert _found(reader, table, 2) == [2, 10]


def test_type_change_rewrite_waits_for_the_writer_and_keeps_its_rows(connect, pool, table):
    """ALTER COLUMN TYPE copies the rows into new tablets and rebuilds the indexes: a row
    the writer commits while it waits is in both."""
    writer, builder, reader = connect(), connect(), connect()
    reader.execute(f"create index {table}_v on {table} (v)")
    writer.execute("begin")
    writer.execute(f"insert into {table} values (10, 2)")
    pending = pool.submit(
        lambda: builder.execute(f"alter table {table} alter column v type bigint")
    )
    assert blocked(pending)
    writer.execute("commit")
    pending.result(timeout=30)
    assert _found(reader, table, 2) == [2, 10]
    assert reader.execute(f"select count(*) from {table}").fetchone() == (4,)


def test_add_primary_key_waits_for_the_writer_and_keeps_its_rows(connect, pool, table):
    keyless = f"{table}_k"
    writer, builder, reader = connect(), connect(), connect()
    reader.execute(f"drop table if exists {keyless}")
    reader.execute(f"create table {keyless} (id int not null, v int not null)")
    reader.execute(f"insert into {keyless} values (1, 1), (2, 2)")
    reader.execute(f"create index {keyless}_v on {keyless} (v)")
    writer.execute("begin")
    writer.execute(f"insert into {keyless} values (10, 2)")
    pending = pool.submit(lambda: builder.execute(f"alter table {keyless} add primary key (id)"))
    assert blocked(pending)
    writer.execute("commit")
    pending.result(timeout=30)
    assert _found(reader, keyless, 2) == [2, 10]
    with pytest.raises(errors.UniqueViolation):
        reader.execute(f"insert into {keyless} values (10, 3)")


@pytest.mark.parametrize("prepare", [False, True])
def test_writes_racing_the_build_are_each_indexed_once(connect, table, prepare):
    """Autocommit inserts (simple or prepared statements) run on while the index is built:
    one planned before the build locked the table but not yet run must be waited for too."""
    builder, reader = connect(), connect()
    stop = threading.Event()
    keys = itertools.count(100)

    def write() -> None:
        conn = connect()
        while not stop.is_set():
            conn.execute(f"insert into {table} values (%s, 2)", [next(keys)], prepare=prepare)

    writers = [threading.Thread(target=write) for _ in range(3)]
    for thread in writers:
        thread.start()
    try:
        for round_ in range(3):
            time.sleep(0.1)
            builder.execute(f"create index {table}_v{round_} on {table} (v)")
    finally:
        stop.set()
        for thread in writers:
            thread.join(30)
    total = reader.execute(f"select count(*) from {table} where v + 0 = 2").fetchone()[0]
    assert len(_found(reader, table, 2)) == total > 1
    for round_ in range(2):
        builder.execute(f"drop index {table}_v{round_}")
        assert len(_found(reader, table, 2)) == total
