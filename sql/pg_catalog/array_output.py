"""Catalog queries cast arrays to text as PostgreSQL's array_out writes them, and format.

A catalog query is not typed before DuckDB binds it, so ``x::text`` becomes
``nyf_pg_text(typeof(x), to_json(x), x::VARCHAR, false)``: DuckDB's text when ``x`` is not a
list, else ``{...}`` written from the list's JSON (``relacl::text`` is
``{nyala=arwdDxt/nyala}``, not DuckDB's ``['nyala=arwdDxt/nyala']``).
"""

from __future__ import annotations

import json

import duckdb
from sqlglot import exp

from sql.common.datatypes import array_literal
from sql.planner.formatting import FORMAT_FUNCTION

FUNCTION = "nyf_pg_text"


def _text(
    type_name: str | None, as_json: str | None, plain: str | None, output: bool | None
) -> str | None:
    if plain is None or as_json is None or type_name is None:
        return plain
    if output and type_name == "BOOLEAN":  # boolout's t/f, where a cast to text is true/false
        return "t" if plain == "true" else "f"
    if not type_name.endswith("]"):
        return plain
    return array_literal(json.loads(as_json))


def register(duck: duckdb.DuckDBPyConnection) -> None:
    duck.create_function(  # type: ignore[call-overload]
        FUNCTION,
        _text,
        ["VARCHAR", "VARCHAR", "VARCHAR", "BOOLEAN"],
        "VARCHAR",
        null_handling="special",
    )


def text_of(operand: exp.Expr, *, output: bool = False) -> exp.Expr:
    """``operand::text`` as PostgreSQL writes it, whether or not it is an array (``output``:
    as its output function writes it, a boolean ``t``/``f``)."""
    return exp.Anonymous(
        this=FUNCTION,
        expressions=[
            exp.Anonymous(this="typeof", expressions=[operand.copy()]),
            exp.cast(exp.Anonymous(this="to_json", expressions=[operand.copy()]), "VARCHAR"),
            exp.cast(operand.copy(), exp.DataType.build("VARCHAR", dialect="duckdb")),
            exp.Boolean(this=output),
        ],
    )


def format_call(node: exp.Format) -> exp.Expr:
    """PostgreSQL's ``format`` (``execution.number_formatting``), each argument as its text."""
    args = list(node.expressions)
    if len(args) == 1 and isinstance(args[0], exp.Variadic):
        values: exp.Expr = exp.cast(args[0].this, exp.DataType.build("VARCHAR[]", dialect="duckdb"))
    else:
        values = exp.cast(
            exp.Array(expressions=[text_of(a, output=True) for a in args]),
            exp.DataType.build("VARCHAR[]", dialect="duckdb"),
        )
    return exp.Anonymous(this=FORMAT_FUNCTION, expressions=[node.this, values])
