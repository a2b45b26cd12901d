from __future__ import annotations

import pytest
from sqlglot import exp

from sql.frontend import parser
from sql.frontend.statements import (
    CopyStatement,
    CursorStatement,
    ExplainStatement,
    RoleStatement,
    Utility,
)
from storage.errors import FeatureNotSupported, SqlSyntaxError


def test_statements_keep_offsets_into_the_whole_query():
    statements = parser.parse("select 1;  select a from t where b = $1 ;; ")
    assert [s.text for s in statements] == ["select 1", "select a from t where b = $1"]
    assert statements[1].offset == 11
    assert isinstance(statements[1].ast, exp.Select)


def test_empty_query_has_no_statements():
    assert parser.parse(" ; -- nothing\n") == []


def test_syntax_error_points_at_the_offending_token_in_a_later_statement():
    with pytest.raises(SqlSyntaxError) as info:
        parser.parse("select 1; select from where")
    assert info.value.position == 23
    assert "where" in info.value.message


def test_unterminated_string_is_a_syntax_error():
    with pytest.raises(SqlSyntaxError):
        parser.parse("select 'abc")


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("begin isolation level serializable", Utility),
        ("SET TIME ZONE 'UTC'", Utility),
        ("show all", Utility),
        ("declare c cursor for select 1", CursorStatement),
        ("fetch 2 from c", CursorStatement),
        ("close all", CursorStatement),
        ("comment on table t is null", exp.Comment),
        ("copy t (a) from stdin (format csv)", CopyStatement),
        ("create user bob", RoleStatement),
        ("explain (analyze) select 1", ExplainStatement),
        ("create table t (a int primary key)", exp.Create),
    ],
)
def test_every_statement_kind_parses_to_a_typed_statement(sql, kind):
    (statement,) = parser.parse(f"select 0; {sql}")[1:]
    assert isinstance(statement.ast, kind)
    assert statement.text == sql


def test_explain_carries_the_explained_statement_with_its_offset():
    (statement,) = parser.parse("explain analyze  update t set a = 1")
    assert statement.ast.analyze is True
    inner = statement.ast.statement
    assert isinstance(inner.ast, exp.Update)
    assert (inner.text, inner.offset) == ("update t set a = 1", 17)


@pytest.mark.parametrize(
    ("sql", "admitted"),
    [
        ("rollback", False),
        ("fetch c", False),
        ("comment on table t is 'x'", False),
        ("select 1", True),
        ("copy t to stdout", True),
        ("explain select 1", True),
    ],
)
def test_admit_runs_before_parsing_what_a_failed_block_refuses(sql, admitted):
    calls = []
    parser.parse_tokens(sql, parser.split(sql)[0], admit=lambda: calls.append(sql))
    assert calls == ([sql] if admitted else [])


def test_parse_utility_reads_only_utility_statements():
    assert parser.parse_utility("commit", parser.split("commit")[0]).ast.kind == "COMMIT"
    assert parser.parse_utility("select 1", parser.split("select 1")[0]) is None


def test_a_merge_sqlglot_cannot_read_is_unsupported_not_a_syntax_error():
    with pytest.raises(FeatureNotSupported):
        parser.parse(
            "MERGE INTO t USING a RIGHT JOIN b ON true ON t.x = a.x WHEN MATCHED THEN DELETE"
        )


def test_pg_catalog_qualified_calls_parse_as_the_unqualified_functions():
    (statement,) = parser.parse(
        "select pg_catalog.max(x), pg_catalog.round(y, 2) from pg_catalog.t"
    )
    assert isinstance(statement.ast.expressions[0], exp.Max)
    assert isinstance(statement.ast.expressions[1], exp.Round)
    assert statement.ast.find(exp.Table).db == "pg_catalog"
