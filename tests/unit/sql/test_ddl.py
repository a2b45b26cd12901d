from __future__ import annotations

import pytest

from sql.session.database import Database
from storage import errors
from storage.data_type import TypeKind


@pytest.fixture
def session(tmp_path):
    db = Database.open(tmp_path, fsync=False)
    s = db.session("nyala", "nyala", {})
    yield s
    s.close()
    db.close()


def run(session, sql):
    return [(r.command_tag, [n.sqlstate for n in r.notices]) for r in session.execute(sql)]


def test_table_constraint_key_and_inline_key(session):
    run(session, 'create table a (x int, "Y" text not null default \'d\', primary key ("Y", x))')
    table = session._db.catalog.get_table("a")
    assert [c.name for c in table.schema.key_columns] == ["Y", "x"]
    assert [c.name for c in table.columns] == ["x", "Y"]
    assert table.schema.find("Y").default_sql == "'d'"
    run(session, "create table b (id bigint primary key, n numeric(38,10), v varchar(3))")
    kinds = [c.type.kind for c in session._db.catalog.get_table("b").columns]
    assert kinds == [TypeKind.INT64, TypeKind.DECIMAL, TypeKind.VARCHAR]


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("create table t (a int primary key, b int primary key)", errors.InvalidTableDefinition),
        ("create table t (a boolean primary key)", errors.InvalidTableDefinition),
        ("create table t (a real primary key)", errors.InvalidTableDefinition),
        ("create table t (a int primary key, a text)", errors.DuplicateColumn),
        ("create table t (a int, primary key (b))", errors.UndefinedColumn),
        ("create table t (a int primary key, b int default 'x')", errors.InvalidTextRepresentation),
        ("create table t (a int primary key, b int default a)", errors.FeatureNotSupported),
        ("create table t (a int primary key, b int default max(1))", errors.GroupingError),
        ("create table t (a int primary key, b numeric(1001,2))", errors.InvalidParameterValue),
    ],
)
def test_bad_definitions_are_refused_and_create_nothing(session, sql, error):
    with pytest.raises(error):
        run(session, sql)
    assert session._db.catalog.find_table("t") is None


def test_if_not_exists_and_if_exists_give_notices(session):
    run(session, "create table t (a int primary key)")
    assert run(session, "create table if not exists t (a int primary key)") == [
        ("CREATE TABLE", ["42P07"])
    ]
    assert run(session, "drop table if exists t, nope") == [("DROP TABLE", ["42P01"])]
    assert session._db.catalog.find_table("t") is None


def test_encoding_and_compression_words_are_checked_per_type():
    from sql.ddl.tables import check_storage_attributes
    from storage import data_type as t
    from storage.errors import InvalidParameterValue, InvalidTableDefinition

    assert check_storage_attributes("a", t.INT32, {"encoding": "BIT_SHUFFLE"}) == (
        "BIT_SHUFFLE",
        "DEFAULT_COMPRESSION",
    )
    assert check_storage_attributes("s", t.STRING, {"compression": "LZ4"}) == (
        "AUTO_ENCODING",
        "LZ4",
    )
    with pytest.raises(InvalidTableDefinition):
        check_storage_attributes("b", t.BOOL, {"encoding": "BIT_SHUFFLE"})
    with pytest.raises(InvalidParameterValue):
        check_storage_attributes("b", t.BOOL, {"encoding": "FANCY"})


@pytest.mark.parametrize(
    "clause",
    ["INHERITS (base)", "TABLESPACE pg_default", "WITH (parallel_workers = 4)"],
)
def test_clauses_nyala_cannot_honour_are_refused_naming_them(clause, tmp_path):
    from sql.session.database import Database
    from storage.errors import FeatureNotSupported

    db = Database.open(tmp_path, fsync=False)
    try:
        session = db.session("nyala", "nyala", {})
        list(session.execute("CREATE TABLE base (a int)"))
        with pytest.raises(FeatureNotSupported, match=clause.split()[0]):
            list(session.execute(f"CREATE TABLE child (b int) {clause}"))
        with pytest.raises(FeatureNotSupported, match=clause.split()[0]):
            list(session.execute(f"CREATE TEMP TABLE child (b int) {clause}"))
    finally:
        db.close()
