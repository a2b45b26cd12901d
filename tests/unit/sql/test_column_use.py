"""Unit tests for sql.dml.column_use: the columns a write inserts, updates and reads."""

from __future__ import annotations

import pytest

from sql.dml.column_use import ColumnUse, column_use
from sql.frontend import parser


def _use(sql: str, catalog) -> ColumnUse:
    (statement,) = parser.parse(sql)
    return column_use(statement.ast, catalog.get_table("t"), catalog)


# t is (a, b, c, v): attnums 1 to 4; u is (a, n).
@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("insert into t (b, a) values ('x', 1)", ColumnUse((2, 1), None, None)),
        ("insert into t values (1, 'x')", ColumnUse((1, 2), None, None)),
        ("insert into t select a, b, c from u", ColumnUse((1, 2, 3), None, None)),
        ("insert into t default values", ColumnUse((), None, None)),
        ("insert into t (a) values (1) returning b", ColumnUse((1,), None, (2,))),
        ("insert into t (a) values (1) on conflict (a) do nothing", ColumnUse((1,), None, (1,))),
        (
            "insert into t (a) values (1) on conflict (a) do update set c = excluded.c"
            " where t.v = 'x'",
            ColumnUse((1,), (3,), (1, 3, 4)),
        ),
        ("upsert into t (a, c) values (1, 2.5)", ColumnUse((1, 3), (3,), None)),
        ("update t set b = 'x'", ColumnUse(None, (2,), None)),
        ("update t set b = 'x' where 1 = 1", ColumnUse(None, (2,), None)),
        ("update t set c = c + 1 where a = 1 returning v", ColumnUse(None, (3,), (1, 3, 4))),
        ("update t set b = (select max(n)::text from u)", ColumnUse(None, (2,), None)),
        ("update t set b = u.n::text from u where u.a = t.a", ColumnUse(None, (2,), (1,))),
        ("delete from t", ColumnUse(None, None, None)),
        ("delete from t where b = 'x' returning *", ColumnUse(None, None, (1, 2, 3, 4))),
        ("delete from t using u where u.a = t.a", ColumnUse(None, None, (1,))),
        (
            "with x as (select a from u) update t set b = 'y' from x where x.a = t.c",
            ColumnUse(None, (2,), (3,)),
        ),
        (
            "with x as (select 1 as n) insert into t (a) select n from x returning t.v",
            ColumnUse((1,), None, (4,)),
        ),
    ],
)
def test_the_columns_postgresql_would_check(sql, expected, catalog):
    assert _use(sql, catalog) == expected
