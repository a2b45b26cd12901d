"""ast_nodes.nodes_of finds, in one walk, what a find_all per kind finds, in the same order."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from sql.pg_catalog import ast_nodes

KINDS = (exp.CTE, exp.Table, exp.Column, exp.Dot, exp.Anonymous, exp.Cast, exp.Literal)


@pytest.mark.parametrize(
    "sql",
    [
        "select c.relname, n.nspname from pg_catalog.pg_class c join pg_namespace n"
        " on n.oid = c.relnamespace where c.oid = 't'::regclass order by 1",
        "with x as (select 1.5 as a) select a::numeric, pg_typeof(a) from x, t"
        " where exists (select 1 from pg_attribute where attname = 'a')",
        "select 1",
    ],
)
def test_nodes_of_matches_find_all(sql):
    ast = sqlglot.parse_one(sql, read="postgres")
    found = ast_nodes.nodes_of(ast, *KINDS)
    for kind in KINDS:
        assert [id(n) for n in found[kind]] == [id(n) for n in ast.find_all(kind)], kind
