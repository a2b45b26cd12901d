"""COPY FROM's INSERT plan is made once for every session (``sql.copy.insert_plans``), and made
again whenever what it folded in changes: the table (ALTER TABLE, DROP and CREATE), another
table it checks (a foreign key's parent), DateStyle, a transaction's own DDL, or a sequence
its defaults call, whose currval belongs to one session."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from sql.copy.insert_plans import INSERT_PLANS
from sql.session.database import Database
from storage import errors


@pytest.fixture
def db(tmp_path) -> Iterator[Database]:
    database = Database.open(tmp_path, fsync=False)
    yield database
    database.close()


@pytest.fixture
def sessions(db) -> Iterator[Any]:
    opened = []

    def make() -> Any:
        session = db.session("nyala", "nyala", {})
        opened.append(session)
        return session

    yield make
    for session in opened:
        session.close()


def run(session: Any, sql: str) -> list[tuple[Any, ...]]:
    out = []
    for result in session.execute(sql):
        for batch in result.batches or ():
            out += [tuple(r.values()) for r in batch.to_pylist()]
    return out


def arrow(**columns: pa.Array) -> bytes:
    table = pa.table(columns)
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def copy(session: Any, sql: str, data: bytes) -> tuple[str, int]:
    """COPY's tag, and how many plans were made for it."""
    made = INSERT_PLANS.made
    (result,) = list(session.execute(sql))
    sink = result.copy_in
    assert sink is not None
    sink.feed(data)
    return sink.finish(), INSERT_PLANS.made - made


def test_sessions_share_one_plan_until_alter_or_drop_and_create(sessions):
    first, second, third = sessions(), sessions(), sessions()
    run(first, "create table cp (id bigint primary key, v text)")
    data = arrow(id=pa.array([1, 2], pa.int64()), v=pa.array(["a", "b"]))
    assert copy(first, "copy cp (id, v) from stdin (format arrow)", data) == ("COPY 2", 1)
    data = arrow(id=pa.array([3], pa.int64()), v=pa.array(["c"]))
    assert copy(second, "copy cp (id, v) from stdin (format arrow)", data) == ("COPY 1", 0)
    # Another column list is another plan; text format shares the Arrow one's.
    assert copy(third, "copy cp (v, id) from stdin", b"d\t4\n") == ("COPY 1", 1)
    assert copy(first, "copy cp (v, id) from stdin (format arrow)",
                arrow(v=pa.array(["e"]), id=pa.array([5], pa.int64()))) == ("COPY 1", 0)  # fmt: skip

    run(first, "alter table cp add column n int default 7")
    data = arrow(id=pa.array([6], pa.int64()), v=pa.array(["f"]))
    assert copy(second, "copy cp (id, v) from stdin (format arrow)", data) == ("COPY 1", 1)
    run(first, "alter table cp add constraint positive check (n > 0)")
    assert run(third, "select id, v, n from cp where id = 6") == [(6, "f", 7)]
    bad = arrow(id=pa.array([7], pa.int64()), v=pa.array(["g"]), n=pa.array([0], pa.int32()))
    with pytest.raises(errors.CheckViolation):
        copy(third, "copy cp (id, v, n) from stdin (format arrow)", bad)

    run(first, "drop table cp")
    run(first, "create table cp (id bigint primary key, v int, w text default 'made again')")
    data = arrow(id=pa.array([1], pa.int64()), v=pa.array(["12"]))
    assert copy(second, "copy cp (id, v) from stdin (format arrow)", data) == ("COPY 1", 1)
    assert run(third, "select id, v, w from cp") == [(1, 12, "made again")]
    with pytest.raises(errors.InvalidTextRepresentation):
        copy(third, "copy cp (id, v) from stdin (format arrow)",
             arrow(id=pa.array([2], pa.int64()), v=pa.array(["x"])))  # fmt: skip


def test_a_parent_table_made_again_plans_again(sessions):
    first, second = sessions(), sessions()
    run(first, "create table parent (id int primary key)")
    run(first, "insert into parent values (1)")
    run(first, "create table child (id int primary key, p int references parent (id))")
    row = arrow(id=pa.array([1], pa.int32()), p=pa.array([1], pa.int32()))
    assert copy(first, "copy child from stdin (format arrow)", row) == ("COPY 1", 1)
    run(first, "alter table parent add column note text")
    row = arrow(id=pa.array([2], pa.int32()), p=pa.array([1], pa.int32()))
    assert copy(second, "copy child from stdin (format arrow)", row) == ("COPY 1", 1)
    with pytest.raises(errors.ForeignKeyViolation):
        copy(second, "copy child from stdin (format arrow)",
             arrow(id=pa.array([3], pa.int32()), p=pa.array([9], pa.int32())))  # fmt: skip


def test_date_style_is_part_of_the_plan(sessions):
    owner = sessions()
    run(owner, "create table stamped (id int primary key, who text default current_user)")
    assert copy(owner, "copy stamped (id) from stdin (format arrow)",
                arrow(id=pa.array([1], pa.int32())))[1] == 1  # fmt: skip
    assert copy(sessions(), "copy stamped (id) from stdin (format arrow)",
                arrow(id=pa.array([2], pa.int32())))[1] == 0  # fmt: skip
    dmy = sessions()
    run(dmy, "set datestyle = 'ISO, DMY'")  # date constants are read in it: its own plan
    assert copy(dmy, "copy stamped (id) from stdin (format arrow)",
                arrow(id=pa.array([3], pa.int32())))[1] == 1  # fmt: skip
    assert copy(sessions(), "copy stamped (id) from stdin (format arrow)",
                arrow(id=pa.array([4], pa.int32())))[1] == 0  # fmt: skip
    assert run(owner, "select id, who from stamped order by id") == [
        (1, "nyala"), (2, "nyala"), (3, "nyala"), (4, "nyala"),
    ]  # fmt: skip


def test_a_plan_calling_a_sequence_stays_with_its_session(sessions):
    first, second = sessions(), sessions()
    run(first, "create table serial_t (id serial primary key, v text)")
    assert copy(first, "copy serial_t (v) from stdin (format arrow)",
                arrow(v=pa.array(["a", "b"])))[1] == 1  # fmt: skip
    assert copy(second, "copy serial_t (v) from stdin (format arrow)",
                arrow(v=pa.array(["c"])))[1] == 1  # fmt: skip
    assert copy(first, "copy serial_t (v) from stdin (format arrow)",
                arrow(v=pa.array(["d"])))[1] == 0  # fmt: skip
    # currval is each session's own, as in PostgreSQL.
    assert run(first, "select currval('serial_t_id_seq')") == [(4,)]
    assert run(second, "select currval('serial_t_id_seq')") == [(3,)]


def test_a_transactions_own_ddl_is_never_shared(sessions):
    first, second = sessions(), sessions()
    run(first, "create table txn_t (id int primary key)")
    run(first, "begin")
    run(first, "alter table txn_t add column extra text default 'uncommitted'")
    assert copy(first, "copy txn_t (id) from stdin (format arrow)",
                arrow(id=pa.array([1], pa.int32())))[1] == 1  # fmt: skip
    assert copy(first, "copy txn_t (id) from stdin (format arrow)",
                arrow(id=pa.array([2], pa.int32())))[1] == 1  # fmt: skip
    assert run(first, "select id, extra from txn_t order by id") == [
        (1, "uncommitted"), (2, "uncommitted"),
    ]  # fmt: skip
    run(first, "rollback")
    assert copy(second, "copy txn_t (id) from stdin (format arrow)",
                arrow(id=pa.array([3], pa.int32())))[1] == 1  # fmt: skip
    assert run(second, "select * from txn_t") == [(3,)]
