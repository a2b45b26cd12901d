from __future__ import annotations

import pytest

from sql.frontend import parser
from sql.frontend.statements import SetConstraints, Utility
from storage.errors import SqlSyntaxError


@pytest.mark.parametrize(
    ("sql", "names", "deferred"),
    [
        ("SET CONSTRAINTS ALL DEFERRED", (), True),
        ("set constraints all immediate", (), False),
        ('SET CONSTRAINTS a, public.B, "C" DEFERRED', ("a", "b", "C"), True),
    ],
)
def test_set_constraints_is_a_typed_statement(sql, names, deferred):
    statement = parser.parse(sql)[0].ast
    assert statement == SetConstraints(names, deferred)


@pytest.mark.parametrize(
    "sql", ["SET CONSTRAINTS ALL", "SET CONSTRAINTS a b DEFERRED", "SET CONSTRAINTS x.a DEFERRED"]
)
def test_malformed_set_constraints_is_42601(sql):
    with pytest.raises(SqlSyntaxError):
        parser.parse(sql)


def test_other_set_statements_stay_utilities():
    assert isinstance(parser.parse("SET search_path = public")[0].ast, Utility)
