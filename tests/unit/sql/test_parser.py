from __future__ import annotations

import pytest
from sqlglot import exp

from sql.frontend import parser
from storage.errors import SqlSyntaxError


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
