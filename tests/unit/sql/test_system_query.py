from __future__ import annotations

import pytest
import sqlglot

from sql.pg_catalog.catalog_rewrite import rewrite
from sql.pg_catalog.system_query import _pg_array_text, is_system_query
from sql.planner.transpile import SessionFacts
from storage import errors

FACTS = SessionFacts("PostgreSQL 15.0", "nyala", "nyala")


def _user(name: str) -> bool:
    return name == "mine"


def _parse(sql: str):
    return sqlglot.parse_one(sql, read="postgres")


@pytest.mark.parametrize(
    "sql, expected",
    [
        ("select relname from pg_catalog.pg_class", True),
        ("select relname from pg_class", True),
        ("select * from information_schema.tables", True),
        ("select format_type(23, -1)", True),
        ("select 'mine'::regclass", True),
        ("select * from mine", False),
        ("select 1", False),
        ("select version()", False),
    ],
)
def test_which_statements_read_the_system_catalogs(sql, expected):
    assert is_system_query(_parse(sql), _user) is expected


def test_a_user_table_called_like_a_catalog_is_the_users():
    assert not is_system_query(_parse("select * from pg_am"), lambda name: name == "pg_am")


def test_rewrite_targets_the_emulated_schemas_and_macros():
    sql = rewrite(
        _parse(
            "select c.oid::pg_catalog.regclass, pg_catalog.format_type(1, 2), 'x'::regclass "
            "from pg_catalog.pg_class c where c.relname OPERATOR(pg_catalog.~) '^(t)$' "
            "COLLATE pg_catalog.default and current_schemas(true)[1] = 'pg_catalog'"
        ),
        FACTS,
        _user,
    ).sql(dialect="duckdb")
    assert "pgc.pg_class" in sql
    assert "PGF_REGCLASS_OUT(PGF_REGCLASS_IN(CAST(c.oid AS TEXT)))" in sql
    assert "PGF_REGCLASS_OUT(PGF_REGCLASS_IN(CAST('x' AS TEXT)))" in sql
    assert "PGF_FORMAT_TYPE(1, 2)" in sql
    assert "REGEXP_MATCHES(c.relname, '^(t)$')" in sql
    assert "COLLATE" not in sql
    assert "['pg_catalog', 'public']" in sql


def test_arrays_are_sent_in_postgresql_text_form():
    assert _pg_array_text([1, 2]) == "{1,2}"
    assert _pg_array_text(["a b", None, ""]) == '{"a b",NULL,""}'
    assert _pg_array_text(None) is None


def test_session_queries_over_the_catalogs(tmp_path):
    from sql.session.database import Database

    db = Database.open(tmp_path, fsync=False)
    session = db.session("nyala", "nyala", {})
    try:
        list(session.execute("create table mine (id int primary key, v varchar(9))"))
        (result,) = list(
            session.execute(
                "select a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnum "
                "from pg_catalog.pg_attribute a where a.attrelid = 'mine'::regclass order by 3"
            )
        )
        assert [c.name for c in result.columns] == ["attname", "format_type", "attnum"]
        got = [tuple(r.values()) for b in result.batches for r in b.to_pylist()]
        assert got == [("id", "integer", 1), ("v", "character varying(9)", 2)]
        (result,) = list(
            session.execute(
                "select table_name from information_schema.tables where table_schema = 'public'"
            )
        )
        assert [r["table_name"] for b in result.batches for r in b.to_pylist()] == ["mine"]
        list(session.execute("insert into mine values (7, 'seven')"))
        (result,) = list(
            session.execute(
                "select m.v, c.relname from mine m join pg_class c on c.oid = 'mine'::regclass"
            )
        )
        assert [tuple(r.values()) for b in result.batches for r in b.to_pylist()] == [
            ("seven", "mine")
        ]
    finally:
        session.close()
        db.close()


def test_reg_casts_are_oids_until_shown_or_cast_to_text():
    sql = rewrite(
        _parse(
            "select x::regclass::oid, y::regtype::text, n::regnamespace::pg_catalog.text "
            "from pg_type where oid = 'int4'::regtype order by x::regclass"
        ),
        FACTS,
        _user,
    ).sql(dialect="duckdb")
    assert "CAST(PGF_REGCLASS_IN(CAST(x AS TEXT)) AS UINTEGER)" in sql
    assert "PGF_REGTYPE_OUT(PGF_REGTYPE_IN(CAST(y AS TEXT)))" in sql
    assert "PGF_REGNAMESPACE_OUT(CAST(n AS UINTEGER))" in sql
    assert "oid = PGF_REGTYPE_IN(CAST('int4' AS TEXT))" in sql
    assert sql.endswith("ORDER BY PGF_REGCLASS_IN(CAST(x AS TEXT))")


def test_partition_ancestors_read_the_partition_tree():
    sql = rewrite(
        _parse(
            "select a.relid, a.depth from pg_catalog.pg_partition_ancestors('16400') "
            "with ordinality as a(relid, depth)"
        ),
        FACTS,
        _user,
    ).sql(dialect="duckdb")
    assert (
        "(SELECT relid AS relid, depth + 1 AS depth FROM "
        "PGF_PG_PARTITION_ANCESTORS(PGF_REGCLASS_ARG('16400')) AS up) AS a"
    ) in sql
    scalar = rewrite(_parse("select pg_partition_ancestors(5)"), FACTS, _user).sql("duckdb")
    assert "PGF_PG_PARTITION_ANCESTORS(5)" in scalar


def test_catalog_errors_carry_postgresql_sqlstates(tmp_path):
    from sql.session.database import Database

    db = Database.open(tmp_path, fsync=False)
    session = db.session("nyala", "nyala", {})
    try:
        with pytest.raises(errors.UndefinedTable):
            list(session.execute("select 'nope'::regclass"))
        with pytest.raises(errors.UndefinedFunction):
            list(session.execute("select format_type()"))
        with pytest.raises(errors.UndefinedTable):
            list(session.execute("select * from pg_catalog.pg_nope"))
    finally:
        session.close()
        db.close()


def test_sessions_in_parallel_each_see_their_own_catalog_state(tmp_path):
    import threading

    from sql.session.database import Database

    db = Database.open(tmp_path, fsync=False)
    failures: list[BaseException] = []

    def work(n: int) -> None:
        session = db.session(f"user{n}", "nyala", {"application_name": f"app{n}"})
        try:
            for _ in range(20):
                (result,) = list(
                    session.execute(
                        "select pg_catalog.current_setting('application_name'), "
                        "pg_get_userbyid(10), (select count(*) from pg_catalog.pg_cursors)"
                    )
                )
                got = [tuple(r.values()) for b in result.batches for r in b.to_pylist()]
                assert got == [(f"app{n}", f"user{n}", 0)], got
        except BaseException as exc:  # reported below, from the main thread
            failures.append(exc)
        finally:
            session.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    db.close()
    assert failures == []
