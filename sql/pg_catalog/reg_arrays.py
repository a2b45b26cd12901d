"""reg* arrays and array literals in catalog queries: ``'{pg_class,t}'::regclass[]``,
``$1::regclass[]`` (each name read as its OID, as ``oid = ANY(...)`` needs) and pg_dump's
``'{1,2}'::oid[]``."""

from __future__ import annotations

from sqlglot import exp

from sql.pg_catalog import functions
from sql.pg_catalog.cast_targets import cast_target
from sql.planner.binder import parameters

_ARRAY_ELEMENTS = {"oid": "UINTEGER", "int2": "SMALLINT", "int4": "INTEGER", "int8": "BIGINT",
                   "integer": "INTEGER", "bigint": "BIGINT", "smallint": "SMALLINT"}  # fmt: skip


_REG_ARRAY_IN = {
    "regclass": "regclass_in",
    "regtype": "regtype_in",
    "regnamespace": "regnamespace_in",
}
REG_ARRAY_OUT = {"regclass": "regclass_out", "regtype": "regtype_out",
                 "regnamespace": "regnamespace_out"}  # fmt: skip


ARRAY_TEXT = "array_text"
"""Marks a parameter whose text value is an array's (``$1::regclass[]``), read as a list."""


def reg_array_element(node: exp.Cast) -> str | None:
    """``regclass`` for a cast to ``regclass[]`` (and so on for the reg* types with an OID)."""
    to = node.to
    if not (isinstance(to, exp.DataType) and to.this == exp.DataType.Type.ARRAY and to.expressions):
        return None
    element = to.expressions[0]
    if not isinstance(element, exp.DataType) or element.this == exp.DataType.Type.ARRAY:
        return None
    name = cast_target(exp.Cast(this=exp.null(), to=element.copy()))
    return name if name in _REG_ARRAY_IN else None


def reg_array(node: exp.Cast, element: str) -> exp.Expr:
    """``'{pg_class,t}'::regclass[]`` or ``$1::regclass[]``: each name read as its OID, as
    ``= ANY(...)`` over the OID columns needs; shown by name in the select list."""
    operand = node.this
    if isinstance(operand, exp.Literal) and operand.is_string:
        names = literal_array(operand.name, exp.DataType.build("text"))
    else:
        for param in parameters(operand):
            param.meta[ARRAY_TEXT] = True
        names = exp.cast(operand, exp.DataType.build("VARCHAR[]", dialect="duckdb"))
    name = exp.to_identifier("nyala_reg")
    read = exp.Anonymous(
        this=functions.PREFIX + _REG_ARRAY_IN[element], expressions=[exp.column(name.copy())]
    )
    oids = exp.Anonymous(
        this="list_transform", expressions=[names, exp.Lambda(this=read, expressions=[name])]
    )
    oids.meta["reg_array"] = element
    return oids


def is_array_literal(node: exp.Cast) -> bool:
    """``'{1,2}'::oid[]`` (pg_dump's lists of table OIDs): an array type, a string literal."""
    to = node.to
    return (
        isinstance(to, exp.DataType)
        and to.this == exp.DataType.Type.ARRAY
        and len(to.expressions) == 1
        and isinstance(node.this, exp.Literal)
        and node.this.is_string
        and node.this.name.strip().startswith("{")
    )


def literal_array(text: str, element: exp.Expr) -> exp.Expr:
    """PostgreSQL's array input of simple elements (numbers, unquoted or quoted words)."""
    name = element.sql(dialect="postgres").lower().removeprefix("pg_catalog.")
    duck_type = _ARRAY_ELEMENTS.get(name, "VARCHAR")
    body = text.strip()[1:-1].strip()
    items = [item.strip() for item in body.split(",")] if body else []
    values: list[exp.Expr] = [
        exp.null()
        if item.upper() == "NULL"
        else exp.cast(
            exp.Literal.string(item.strip('"')), exp.DataType.build(duck_type, dialect="duckdb")
        )
        for item in items
    ]
    array_type = exp.DataType.build(f"{duck_type}[]", dialect="duckdb")
    return exp.cast(exp.Array(expressions=values), array_type)
