"""``SET nyala.read_timestamp``: every read of the session at one instant, as JDBC readers need."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

pytestmark = pytest.mark.e2e


@pytest.fixture
def conns(nyala_server):
    with (
        psycopg.connect(nyala_server.dsn, autocommit=True) as reader,
        psycopg.connect(nyala_server.dsn, autocommit=True) as writer,
    ):
        writer.execute("drop table if exists pinned")
        writer.execute("create table pinned (id int primary key, v text)"
                       " partition by hash (id) partitions 3")  # fmt: skip
        writer.execute("insert into pinned select g, 'old' from generate_series(1, 30) g")
        yield reader, writer


def test_reads_stay_at_the_instant_while_others_write(conns):
    reader, writer = conns
    (instant,) = reader.execute("select now()").fetchone()
    writer.execute("update pinned set v = 'new' where id <= 10")
    writer.execute("insert into pinned values (31, 'new')")
    reader.execute(f"set nyala.read_timestamp = '{instant.isoformat()}'")
    (shown,) = reader.execute("show nyala.read_timestamp").fetchone()
    assert shown.endswith("+00") and shown.startswith(instant.strftime("%Y-%m-%d %H:%M:%S"))
    assert reader.execute("select count(*), min(v), max(v) from pinned").fetchone() == (
        30,
        "old",
        "old",
    )
    # Extended protocol, a point lookup answered by the scan alone, a join, COPY TO: all pinned.
    assert reader.execute("select v from pinned where id = %s", (5,)).fetchone() == ("old",)
    assert reader.execute("select v from pinned where id = 31").fetchone() is None
    assert reader.execute(
        "select count(*) from pinned a join pinned b using (id) where b.v = 'new'"
    ).fetchone() == (0,)
    with reader.cursor().copy("copy (select v from pinned where id = 1) to stdout") as copy:
        assert b"".join(bytes(c) for c in copy) == b"old\n"
    reader.execute("reset nyala.read_timestamp")
    assert reader.execute("select count(*) from pinned where v = 'new'").fetchone() == (11,)


def test_the_session_is_read_only_meanwhile(conns):
    reader, _ = conns
    (instant,) = reader.execute("select now()").fetchone()
    reader.execute(f"set nyala.read_timestamp = '{instant.isoformat()}'")
    with pytest.raises(errors.ReadOnlySqlTransaction):
        reader.execute("insert into pinned values (100, 'x')")
    reader.execute("begin")
    with pytest.raises(errors.ReadOnlySqlTransaction):
        reader.execute("delete from pinned")
    reader.execute("rollback")
    reader.execute("set nyala.read_timestamp = default")
    reader.execute("begin")
    reader.execute(f"set nyala.read_timestamp = '{instant.isoformat()}'")
    with pytest.raises(errors.ReadOnlySqlTransaction):
        reader.execute("update pinned set v = 'x'")
    reader.execute("rollback")
    reader.execute("reset nyala.read_timestamp")
    reader.execute("insert into pinned values (100, 'x')")


@pytest.mark.parametrize(
    ("value", "sqlstate"),
    [("'not a time'", "22007"), ("'2001-01-01 00:00:00+00'", "72000"), ("'2999-01-01'", "22023")],
)
def test_bad_instants(conns, value, sqlstate):
    reader, _ = conns
    with pytest.raises(errors.Error) as caught:
        reader.execute(f"set nyala.read_timestamp = {value}")
        reader.execute("select * from pinned")
    assert caught.value.sqlstate == sqlstate
    reader.execute("reset nyala.read_timestamp")
    assert reader.execute("select count(*) from pinned").fetchone() == (30,)
