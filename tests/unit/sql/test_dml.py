from __future__ import annotations

import pytest

from sql.session.database import Database
from storage import errors


@pytest.fixture
def session(tmp_path):
    db = Database.open(tmp_path, fsync=False)
    s = db.session("nyala", "nyala", {})
    for _ in s.execute(
        "create table t (id int primary key, n int default 5, s varchar(4) not null default 'x')"
    ):
        pass
    yield s
    s.close()
    db.close()


def run(session, sql):
    out = []
    for result in session.execute(sql):
        rows = [tuple(r.values()) for b in result.batches for r in b.to_pylist()]
        out.append((result.command_tag, rows))
    return out


def test_insert_fills_defaults_and_default_keyword(session):
    run(session, "insert into t (id) values (1)")
    run(session, "insert into t values (2, default, 'y')")
    assert run(session, "select id, n, s from t order by id")[0][1] == [(1, 5, "x"), (2, 5, "y")]


def test_insert_column_count_mismatch_is_42601(session):
    with pytest.raises(errors.SqlSyntaxError):
        run(session, "insert into t (id) values (1, 2)")
    with pytest.raises(errors.SqlSyntaxError):
        run(session, "insert into t (id, n) select 1")


def test_insert_unknown_column_is_42703(session):
    with pytest.raises(errors.UndefinedColumn):
        run(session, "insert into t (nope) values (1)")


def test_update_from_another_table(session):
    run(session, "create table adj (id int primary key, delta int)")
    run(session, "insert into t (id) values (1), (2), (3); insert into adj values (2, 10)")
    assert run(session, "update t set n = n + adj.delta from adj where t.id = adj.id") == [
        ("UPDATE 1", [])
    ]
    assert run(session, "select id, n from t order by id")[0][1] == [(1, 5), (2, 15), (3, 5)]


def test_update_of_a_key_column_moves_the_row_and_a_collision_is_23505(session):
    run(session, "insert into t (id, n) values (1, 10), (3, 30)")
    assert run(session, "update t set id = id + 1 where id = 1 returning id, n") == [
        ("UPDATE 1", [(2, 10)])
    ]
    with pytest.raises(errors.UniqueViolation):
        run(session, "update t set id = 3 where id = 2")
    assert run(session, "select id, n from t order by id")[0][1] == [(2, 10), (3, 30)]


def test_on_conflict_and_upsert(session):
    run(session, "insert into t (id, n) values (1, 10)")
    assert (
        run(session, "insert into t (id, n) values (1, 0), (2, 20) on conflict do nothing")[0][0]
        == "INSERT 0 1"
    )
    run(
        session,
        "insert into t as o (id, n) values (1, 5) on conflict (id) do update set n = o.n + excluded.n",
    )
    run(session, "upsert into t (id, n) values (2, 200), (4, 40)")
    assert run(session, "select id, n from t order by id")[0][1] == [(1, 15), (2, 200), (4, 40)]
    run(session, "truncate t")
    assert run(session, "select count(*) from t")[0][1] == [(0,)]


def test_update_to_null_in_not_null_column_is_23502_and_changes_nothing(session):
    run(session, "insert into t (id) values (1)")
    with pytest.raises(errors.NotNullViolation):
        run(session, "update t set s = null")
    assert run(session, "select s from t")[0][1] == [("x",)]


def test_returning_sees_the_written_rows(session):
    assert run(session, "insert into t (id, n) values (1, 1), (2, 2) returning id * 10, s") == [
        ("INSERT 0 2", [(10, "x"), (20, "x")])
    ]
    assert run(session, "update t set n = n + 1 where id = 2 returning n") == [("UPDATE 1", [(3,)])]
    assert run(session, "delete from t returning id") == [("DELETE 2", [(1,), (2,)])]


def test_delete_using(session):
    run(session, "create table gone (id int primary key)")
    run(session, "insert into t (id) values (1), (2); insert into gone values (2)")
    assert run(session, "delete from t using gone where t.id = gone.id")[0][0] == "DELETE 1"
    assert run(session, "select id from t")[0][1] == [(1,)]


def test_insert_select_from_the_same_table(session):
    run(session, "insert into t (id) values (1), (2)")
    run(session, "insert into t (id, n) select id + 10, n * 2 from t")
    assert run(session, "select count(*), sum(n) from t")[0][1] == [(4, 30)]


def test_insert_select_with_fewer_columns_fills_defaults(session):
    run(session, "insert into t select 7")
    assert run(session, "select id, n, s from t")[0][1] == [(7, 5, "x")]


def test_bytea_literals_read_as_postgresql_reads_them(session):
    run(session, "create table bt (id int primary key, b bytea)")
    run(session, "insert into bt values (1, '\\x00ff'), (2, '\\\\'), (3, 'ab\\001')")
    rows = run(session, "select id, b, length(b) from bt order by id")[0][1]
    assert rows == [(1, b"\x00\xff", 2), (2, b"\\", 1), (3, b"ab\x01", 3)]
    assert run(session, "select '\\x41'::bytea")[0][1] == [(b"A",)]
    with pytest.raises(errors.InvalidParameterValue):
        run(session, "select '\\xZZ'::bytea")
