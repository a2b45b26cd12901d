"""Temporary tables through psycopg, side by side with PostgreSQL 15: private to their
session, shadowing a permanent table of the same name, gone at disconnect, and emptied or
dropped at COMMIT as their ON COMMIT clause says."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from psycopg import errors

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["nyala", "postgres"])
def dsn(request, nyala_server, postgres_server) -> str:
    return nyala_server.dsn if request.param == "nyala" else postgres_server.dsn


def _name() -> str:
    return f"tmp_{uuid.uuid4().hex[:8]}"


def test_a_temp_table_is_private_and_gone_at_disconnect(dsn):
    name = _name()
    with (
        psycopg.connect(dsn, autocommit=True) as owner,
        psycopg.connect(dsn, autocommit=True) as other,
    ):
        owner.execute(f"create temp table {name} (id int primary key, note text)")
        owner.execute(f"insert into {name} values (1, 'a'), (2, 'b')")
        owner.execute(f"update {name} set note = 'B' where id = 2")
        owner.execute(f"delete from {name} where id = 1")
        assert owner.execute(f"select id, note from pg_temp.{name}").fetchall() == [(2, "B")]
        with owner.cursor().copy(f"copy {name} from stdin") as copy:
            copy.write_row((3, "c"))
        assert owner.execute(f"select count(*) from {name}").fetchone() == (2,)
        with pytest.raises(errors.UndefinedTable):
            other.execute(f"select * from {name}")
        other.execute(f"create temp table {name} (x int)")  # each session has its own
        assert other.execute(f"select count(*) from {name}").fetchone() == (0,)
    with psycopg.connect(dsn, autocommit=True) as later:
        with pytest.raises(errors.UndefinedTable):
            later.execute(f"select * from {name}")
        later.execute(f"create table {name} (y int)")  # the name is free again
        later.execute(f"drop table {name}")


def test_a_temp_table_shadows_a_permanent_one(dsn):
    name = _name()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"create table {name} (a int)")
        conn.execute(f"insert into {name} values (1)")
        conn.execute(f"create temp table {name} (a int)")
        conn.execute(f"insert into {name} values (2)")
        assert conn.execute(f"select a from {name}").fetchall() == [(2,)]
        assert conn.execute(f"select a from public.{name}").fetchall() == [(1,)]
        with pytest.raises(errors.DuplicateTable):
            conn.execute(f"create temp table {name} (b int)")
        conn.execute(f"drop table {name}")  # the temporary one
        assert conn.execute(f"select a from {name}").fetchall() == [(1,)]
        conn.execute(f"drop table {name}")


def test_on_commit_delete_rows_and_drop(dsn):
    rows, dropped = _name(), _name()
    with psycopg.connect(dsn) as conn:
        conn.execute(f"create temp table {rows} (a int) on commit delete rows")
        conn.execute(f"insert into {rows} values (1), (2)")
        assert conn.execute(f"select count(*) from {rows}").fetchone() == (2,)
        conn.commit()
        assert conn.execute(f"select count(*) from {rows}").fetchone() == (0,)
        conn.execute(f"create temp table {dropped} (a int) on commit drop")
        conn.execute(f"insert into {dropped} values (1)")
        assert conn.execute(f"select count(*) from {dropped}").fetchone() == (1,)
        conn.commit()
        with pytest.raises(errors.UndefinedTable):
            conn.execute(f"select * from {dropped}")
        conn.rollback()
        with pytest.raises(errors.InvalidTableDefinition):
            conn.execute(f"create table {dropped} (a int) on commit drop")


def test_discard_temp_drops_them(dsn):
    name = _name()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"create temporary table {name} (a int) on commit preserve rows")
        conn.execute(f"insert into {name} values (1)")
        assert conn.execute(f"select count(*) from {name}").fetchone() == (1,)
        conn.execute("discard temp")
        with pytest.raises(errors.UndefinedTable):
            conn.execute(f"select * from {name}")
