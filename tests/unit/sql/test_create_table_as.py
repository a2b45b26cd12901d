"""CREATE TABLE AS's pure parts: column types from a query's description, and SELECT INTO
read as the CREATE TABLE AS it is."""

from __future__ import annotations

import pytest
from sqlglot import exp

from sql.ddl.create_table_as import derived_type, is_create_table_as, select_into
from sql.frontend import parser
from storage.errors import FeatureNotSupported


def _ast(sql: str) -> exp.Expr:
    return parser.parse_tokens(sql, parser.split(sql)[0], admit=lambda *_: None).ast


@pytest.mark.parametrize(
    ("oid", "typmod", "name"),
    [
        (23, -1, "integer"),
        (1700, -1, "numeric"),
        (1700, (10 << 16 | 2) + 4, "numeric(10,2)"),
        (1043, 9, "character varying(5)"),
        (1043, -1, "character varying"),
        (1042, 7, "character(3)"),
        (1184, -1, "timestamp with time zone"),
        (114, -1, "json"),
        (3802, -1, "jsonb"),
        (2950, -1, "uuid"),
    ],
)
def test_derived_type_keeps_postgresql_typmods(oid, typmod, name):
    dtype = derived_type("c", oid, typmod)
    assert (dtype.pg_name(), dtype.pg_oid, dtype.pg_typmod) == (name, oid, typmod)


@pytest.mark.parametrize("oid", [1007, 1186, 1083, 99999])
def test_derived_type_refuses_what_a_table_cannot_hold(oid):
    with pytest.raises(FeatureNotSupported, match='column "c"'):
        derived_type("c", oid, -1)


def test_select_into_becomes_create_table_as():
    made = select_into(_ast("select id into temp table t2 from t1 where id > 1"))
    assert made is not None and is_create_table_as(made)
    assert made.this.name == "t2"
    assert any(isinstance(p, exp.TemporaryProperty) for p in made.args["properties"].expressions)
    assert made.expression.args.get("into") is None
    assert made.expression.args["where"] is not None


def test_select_into_on_a_set_operations_first_select():
    made = select_into(_ast("select id into t3 from a union select id from b"))
    assert made is not None and isinstance(made.expression, exp.Union)
    assert not list(made.expression.find_all(exp.Into))


def test_plain_statements_are_left_alone():
    assert select_into(_ast("select id from a")) is None
    assert not is_create_table_as(_ast("create table t (id int)"))
    assert is_create_table_as(_ast("create table t as execute p"))
