from __future__ import annotations

from sqlglot import exp

from sql import parser


def test_adjacent_parameters_are_not_a_dollar_quote():
    (statement,) = parser.parse("insert into t values ($1,$2,$13,$14)")
    params = [p.this.name for p in statement.ast.find_all(exp.Parameter)]
    assert params == ["1", "2", "13", "14"]


def test_dollar_quoted_strings_still_work():
    (statement,) = parser.parse("select $$a b$$, $tag$x$tag$")
    assert [e.name for e in statement.ast.expressions] == ["a b", "x"]
