from __future__ import annotations

import pytest

from sql.session.database import Database
from storage import errors


@pytest.fixture
def db(tmp_path):
    database = Database.open(tmp_path, fsync=False)
    yield database
    database.close()


@pytest.fixture
def session(db):
    s = db.session("nyala", "nyala", {})
    yield s
    s.close()


def rows(session, sql):
    out = []
    for result in session.execute(sql):
        out = [tuple(r.values()) for b in result.batches for r in b.to_pylist()]
    return out


def tags(session, sql):
    return [r.command_tag for r in session.execute(sql) if list(r.batches) is not None]


def test_autocommit_statements_are_visible_to_other_sessions(db, session):
    session.execute("create table t (id int primary key, v text)").__next__()
    assert tags(session, "insert into t values (1, 'a'), (2, 'b')") == ["INSERT 0 2"]
    other = db.session("nyala", "nyala", {})
    assert rows(other, "select id, v from t order by id") == [(1, "a"), (2, "b")]


def test_transaction_block_sees_own_writes_and_rolls_back(db, session):
    tags(session, "create table t (id int primary key)")
    other = db.session("nyala", "nyala", {})
    tags(session, "begin")
    assert session.transaction_status == "T"
    tags(session, "insert into t values (1)")
    assert rows(session, "select count(*) from t") == [(1,)]
    assert rows(other, "select count(*) from t") == [(0,)]
    tags(session, "rollback")
    assert session.transaction_status == "I"
    assert rows(session, "select count(*) from t") == [(0,)]


def test_error_in_block_fails_it_until_rollback(session):
    tags(session, "begin")
    with pytest.raises(errors.UndefinedTable):
        tags(session, "select * from missing")
    assert session.transaction_status == "E"
    with pytest.raises(errors.InFailedSqlTransaction):
        tags(session, "select 1")
    assert tags(session, "commit") == ["ROLLBACK"]
    assert session.transaction_status == "I"


def test_multi_statement_query_is_one_implicit_transaction(session):
    tags(session, "create table t (id int primary key)")
    with pytest.raises(errors.UniqueViolation):
        tags(session, "insert into t values (1); insert into t values (1)")
    assert rows(session, "select count(*) from t") == [(0,)]
    assert session.transaction_status == "I"


def test_begin_twice_warns_and_commit_outside_block_warns(session):
    results = list(session.execute("begin; begin"))
    assert results[1].notices[0].sqlstate == "25001"
    list(session.execute("commit"))
    (result,) = list(session.execute("commit"))
    assert result.notices[0].sqlstate == "25P01"


def test_prepared_statement_infers_and_describes_without_running(session):
    tags(session, "create table t (id int primary key, v varchar(5))")
    stmt = session.prepare("select v, id + 1 from t where id = $1", [0])
    assert stmt.param_oids == (23,)
    assert [(c.name, c.type_oid, c.typmod) for c in stmt.columns] == [
        ("v", 1043, 9),
        ("?column?", 23, -1),
    ]
    insert = session.prepare("insert into t values ($1, $2)", [0, 0])
    assert insert.param_oids == (23, 1043)
    assert insert.columns is None
    assert session.execute_prepared(insert, [7, "seven"]).command_tag == "INSERT 0 1"
    result = session.execute_prepared(stmt, [7])
    assert [r for b in result.batches for r in b.to_pylist()] == [{"v": "seven", "?column?": 8}]


def test_prepared_statement_is_replanned_after_ddl(session):
    tags(session, "create table t (id int primary key)")
    stmt = session.prepare("select count(*) from t", [])
    tags(session, "drop table t; create table t (id int primary key, x int)")
    tags(session, "insert into t values (1, 1)")
    result = session.execute_prepared(stmt, [])
    assert [r for b in result.batches for r in b.to_pylist()] == [{"count": 1}]


def test_multiple_commands_cannot_be_prepared(session):
    with pytest.raises(errors.SqlSyntaxError):
        session.prepare("select 1; select 2", [])


def test_unknown_database_is_refused(db):
    with pytest.raises(errors.InvalidCatalogName):
        db.session("nyala", "other", {})


def test_committed_rows_survive_reopen(tmp_path):
    db = Database.open(tmp_path, fsync=False)
    s = db.session("nyala", "nyala", {})
    tags(s, "create table t (a text, b int, primary key (a, b))")
    tags(s, "insert into t values ('x', 1), ('y', 2)")
    tags(s, "begin; insert into t values ('z', 3)")
    db.close()
    reopened = Database.open(tmp_path, fsync=False)
    s2 = reopened.session("nyala", "nyala", {})
    assert rows(s2, "select a, b from t order by a") == [("x", 1), ("y", 2)]
    reopened.close()


def test_unsupported_statement_is_0a000(session):
    tags(session, "create table t (x text primary key)")
    with pytest.raises(errors.FeatureNotSupported):
        tags(session, "create index i on t (lower(x))")


def test_extended_protocol_statements_commit_at_sync(db, session):
    tags(session, "create table t (id int primary key)")
    insert = session.prepare("insert into t values ($1)", [0])
    other = db.session("nyala", "nyala", {})
    session.execute_prepared(insert, [1])
    session.execute_prepared(insert, [2])
    assert rows(other, "select count(*) from t") == [(0,)]
    session.sync()
    assert rows(other, "select count(*) from t") == [(2,)]


def test_an_error_before_sync_rolls_back_the_whole_implicit_transaction(db, session):
    tags(session, "create table t (id int primary key)")
    insert = session.prepare("insert into t values ($1)", [0])
    session.execute_prepared(insert, [1])
    with pytest.raises(errors.UniqueViolation):
        session.execute_prepared(insert, [1])
    session.sync()
    assert rows(session, "select count(*) from t") == [(0,)]
    assert session.transaction_status == "I"


def test_deallocate_and_discard_ask_the_server_to_drop_statements(session):
    (result,) = list(session.execute("deallocate all"))
    assert (result.command_tag, result.deallocate) == ("DEALLOCATE ALL", "")
    (result,) = list(session.execute('deallocate prepare "_pg3_0"'))
    assert (result.command_tag, result.deallocate) == ("DEALLOCATE", "_pg3_0")
    (result,) = list(session.execute("discard all"))
    assert (result.command_tag, result.deallocate) == ("DISCARD ALL", "")


def test_the_readme_sql_example_runs(session):
    """Keeps the README's "Supported SQL" example true."""
    import pathlib

    readme = (pathlib.Path(__file__).parents[3] / "README.md").read_text()
    block = readme.split("## Supported SQL, for now", 1)[1].split("```sql", 1)[1].split("```")[0]
    tags(session, "create table promos (id bigint primary key, label text, expired boolean)")
    tags(session, "insert into promos values (1, 'promo', false), (2, 'old', true)")
    for result in session.execute(block):
        list(result.batches)
    assert session.transaction_status == "I"


def test_a_bare_values_list_is_a_query_with_postgresql_column_names(session):
    (result,) = list(session.execute("values (1, 'a'), (2, 'b')"))
    assert [c.name for c in result.columns] == ["column1", "column2"]
    assert [tuple(r.values()) for b in result.batches for r in b.to_pylist()] == [
        (1, "a"),
        (2, "b"),
    ]


def test_schema_qualified_names(session):
    tags(session, "create table public.q (id int primary key, n int)")
    tags(session, "insert into public.q values (1, 0)")
    assert rows(session, "select public.q.id from public.q join q q2 using (id)") == [(1,)]
    tags(
        session,
        "update public.q set n = 5 where public.q.id = 1; delete from public.q where id = 2",
    )
    assert rows(session, "select n from q") == [(5,)]
    with pytest.raises(errors.InvalidSchemaName):
        tags(session, "select * from elsewhere.q")
    assert rows(session, "select relname from pg_catalog.pg_class where relname = 'q'") == [("q",)]
    assert rows(
        session, "select relname, public.q.n from pg_catalog.pg_class, public.q where relname = 'q'"
    ) == [("q", 5)]
    tags(session, "drop table public.q")


def test_queries_cannot_reach_the_servers_files(session):
    with pytest.raises(errors.InsufficientPrivilege):
        tags(session, "select * from read_csv('/etc/passwd')")


def test_transaction_characteristics_and_read_only_blocks(session):
    tags(session, "create table ro (id int primary key)")
    assert tags(
        session, "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ"
    ) == ["SET"]
    assert rows(session, "show transaction isolation level") == [("repeatable read",)]
    tags(session, "begin read only, isolation level serializable")
    assert rows(session, "show transaction_isolation") == [("serializable",)]
    assert rows(session, "show transaction_read_only") == [("on",)]
    with pytest.raises(errors.ReadOnlySqlTransaction):
        tags(session, "insert into ro values (1)")
    tags(session, "rollback")
    assert rows(session, "show transaction_read_only") == [("off",)]


def test_sql_cursors_in_a_block(session):
    tags(session, "create table cu (id int primary key)")
    tags(session, "insert into cu select g from generate_series(1, 5) g")
    tags(session, "begin")
    assert tags(session, "declare c cursor for select id from cu order by id") == ["DECLARE CURSOR"]
    assert session.has_cursor("c")
    assert rows(session, "fetch 2 from c") == [(1,), (2,)]
    assert rows(session, "fetch all from c") == [(3,), (4,), (5,)]
    tags(session, "commit")
    assert not session.has_cursor("c")
