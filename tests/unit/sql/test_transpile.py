from __future__ import annotations

from sql.frontend import parser
from sql.planner.binder import bind_query
from sql.planner.transpile import SessionFacts, output_name, to_duckdb

FACTS = SessionFacts("PostgreSQL 15.0 (nyala)", "nyala", "alice", now_param=9)


def _duck(sql, catalog):
    bound = bind_query(parser.parse(sql)[0].ast, catalog, [])
    return to_duckdb(bound, [f"v{i}" for i in range(len(bound.tables))], FACTS)


def test_integer_division_truncates_and_other_division_checks_zero(catalog):
    sql, _, _ = _duck("select a / 2, c / 2 from t", catalog)
    assert "//" in sql
    assert "error('division by zero')" in sql.lower() or "ERROR('division by zero')" in sql


def test_sum_of_integers_is_bigint(catalog):
    sql, _, _ = _duck("select sum(a) from t", catalog)
    assert "AS BIGINT" in sql


def test_session_functions_answer_for_nyala(catalog):
    sql, columns, uses_now = _duck(
        "select version(), current_database(), current_user, now()", catalog
    )
    assert "'PostgreSQL 15.0 (nyala)'" in sql and "'nyala'" in sql and "'alice'" in sql
    assert "$9" in sql and uses_now
    assert [c.name for c in columns] == ["version", "current_database", "current_user", "now"]


def test_tables_become_scan_views(catalog):
    sql, _, _ = _duck("select t.a from t join u on t.a = u.a", catalog)
    assert '"v0" AS "t"' in sql and '"v1" AS "u"' in sql


def test_output_columns_carry_source_table_and_attnum(catalog):
    _, columns, _ = _duck("select v, a + 1, a as x from t", catalog)
    assert [(c.name, c.table_oid, c.attnum, c.typmod) for c in columns] == [
        ("v", 16385, 4, 9),
        ("?column?", 0, 0, -1),
        ("x", 16385, 1, -1),
    ]


def test_output_name_rules():
    from sqlglot import parse_one

    select = parse_one("select 1::int, count(*), b, 1", read="postgres")
    assert [output_name(e) for e in select.expressions] == ["int4", "count", "b", "?column?"]
    select = parse_one(
        "select count(*) filter (where b > 1), (select max(b) from t), (select 1, 2)",
        read="postgres",
    )
    assert [output_name(e) for e in select.expressions] == ["count", "max", "?column?"]


def test_numeric_division_and_avg_are_exact(catalog):
    sql, _, _ = _duck("select a / 4.0, avg(a), avg(a) over (order by a) from t", catalog)
    assert sql.count("NYF_NUMERIC_DIV") == 3 and "DECIMAL(38, 16)" in sql


def test_qualify_aliases_are_not_taken_for_user_aliases(catalog):
    _, columns, _ = _duck("select 1::numeric(5,2), 'x', a::text as a from t", catalog)
    assert [c.name for c in columns] == ["numeric", "?column?", "a"]
