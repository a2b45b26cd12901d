"""String constants cast to a type, read as PostgreSQL's input functions read them.

DuckDB rounds ``'12.5'::int`` to 13 and refuses ``'off'::boolean``; PostgreSQL refuses
the first (22P02) and takes the second.  Constants are checked when the query is
bound, so the error comes before any row is read, as PostgreSQL's does; a cast to
``money`` is refused (0A000): nyala has no money type.  Dates in PostgreSQL's other
spellings (``01/02/2024``) are rewritten as ISO by ``date_input``.
"""

from __future__ import annotations

import re

from sqlglot import exp

from sql.common import date_input, interval_input
from sql.common.array_input import Elements, parse_array, shape
from sql.common.time_input import time_spelling
from storage.errors import (
    FeatureNotSupported,
    InvalidTextRepresentation,
    NumericValueOutOfRange,
)

DT = exp.DataType.Type
_INTEGER_NAMES = {DT.SMALLINT: "smallint", DT.INT: "integer", DT.BIGINT: "bigint"}
_INTEGER_LIMITS = {DT.SMALLINT: 2**15, DT.INT: 2**31, DT.BIGINT: 2**63}
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _boolean(text: str) -> bool | None:
    """boolin: the words, or an unambiguous prefix of them (``of`` is off, ``o`` is neither)."""
    word = text.strip().lower()
    if not word:
        return None
    for value, words in ((True, _TRUE), (False, _FALSE)):
        for full in words:
            shortest = 2 if full in ("on", "off") else 1
            if len(word) >= shortest and full.startswith(word) and (full != "1" or word == "1"):
                return value
    return None


_DATETIMES = (DT.DATE, DT.TIMESTAMP, DT.TIMESTAMPNTZ, DT.TIMESTAMPTZ, DT.TIMESTAMPLTZ)


def check_literal_casts(
    ast: exp.Expr, date_order: str = "MDY", interval_style: str = "postgres"
) -> None:
    """Refuse or resolve string constants cast to integer, boolean and money, and spell
    date and timestamp constants as ISO (read in ``date_order``, DateStyle's) and interval
    constants as DuckDB reads them (``interval_input``), in place."""
    sql_standard = interval_style == "sql_standard"
    for interval in list(ast.find_all(exp.Interval)):
        literal = interval.this
        if interval.unit is None and isinstance(literal, exp.Literal) and literal.is_string:
            _spell_interval(literal, sql_standard)
    for cast in list(ast.find_all(exp.Cast)):
        target = cast.to.this
        if target is DT.MONEY:
            raise FeatureNotSupported("type money is not supported")
        literal = cast.this
        if not (isinstance(literal, exp.Literal) and literal.is_string):
            continue
        text = literal.name
        if target is DT.ARRAY:
            array = _array_constant(text, cast.to)
            cast.replace(array)
            check_literal_casts(array, date_order, interval_style)
            continue
        if target is DT.INTERVAL:
            _spell_interval(literal, sql_standard)
            continue
        if target in _DATETIMES:
            iso = date_input.iso_spelling(text, date_order)
            if iso is not None:
                literal.replace(exp.Literal.string(iso))
            continue
        if target in (DT.TIME, DT.TIMETZ):
            spelt = time_spelling(text, with_zone=target is DT.TIMETZ)
            if spelt is not None:
                literal.replace(exp.Literal.string(spelt))
            continue
        if target in _INTEGER_NAMES:
            if not _INTEGER.match(text):
                raise InvalidTextRepresentation(
                    f'invalid input syntax for type {_INTEGER_NAMES[target]}: "{text}"'
                )
            if abs(int(text)) >= _INTEGER_LIMITS[target] and int(text) != -_INTEGER_LIMITS[target]:
                raise NumericValueOutOfRange(
                    f'value "{text}" is out of range for type {_INTEGER_NAMES[target]}'
                )
        if target is DT.BOOLEAN:
            value = _boolean(text)
            if value is None:
                raise InvalidTextRepresentation(f'invalid input syntax for type boolean: "{text}"')
            replacement = exp.Boolean(this=value)
            replacement.type = cast.type
            cast.replace(replacement)


_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between, exp.In)


def spell_compared_dates(ast: exp.Expr, date_order: str) -> None:
    """String constants compared with a date, timestamp or time (``d = '31/12/2024'``,
    ``t = '12:30 pm'``), which PostgreSQL reads as that type, spelt as DuckDB reads it;
    after type annotation, in place."""
    for node in ast.find_all(*_COMPARISONS):
        operands = [node.this, *(node.args.get(k) for k in ("expression", "low", "high"))]
        operands += node.expressions if isinstance(node, exp.In) else []
        typed = [o for o in operands if o is not None and not isinstance(o, exp.Literal)]
        kinds = {o.type.this for o in typed if o.type is not None}
        if not kinds & {*_DATETIMES, DT.TIME, DT.TIMETZ}:
            continue
        for operand in operands:
            if not (isinstance(operand, exp.Literal) and operand.is_string):
                continue
            if kinds & {DT.TIME, DT.TIMETZ}:
                iso = time_spelling(operand.name, with_zone=DT.TIMETZ in kinds)
            else:
                iso = date_input.iso_spelling(operand.name, date_order)
            if iso is not None:
                operand.replace(exp.Literal.string(iso))


def read_any_array_literals(ast: exp.Expr) -> None:
    """``x = ANY('{1,2}')``, ``x <> ALL('{1,2}')``: PostgreSQL reads the unknown-typed
    constant as an array of ``x``'s type; after type annotation, in place."""
    for parent in list(ast.find_all(exp.Binary)):
        node = parent.expression
        if isinstance(node, (exp.Any, exp.All)):
            slot, operand = "this", node.this
        elif isinstance(node, exp.Anonymous) and node.name.lower() in ("any", "all"):
            slot, operand = "expressions", node.expressions[0] if node.expressions else None
        else:
            continue
        while isinstance(operand, exp.Paren):
            operand = operand.this
        if not (isinstance(operand, exp.Literal) and operand.is_string):
            continue
        left = parent.this.type
        element = left.copy() if left is not None else None
        if element is None or element.this in (DT.UNKNOWN, DT.NULL):
            element = exp.DataType.build("text")
        array_type = exp.DataType(this=DT.ARRAY, expressions=[element], nested=True)
        array = _array_constant(operand.name, array_type)
        node.set(slot, [array] if slot == "expressions" else array)


def _array_constant(text: str, to: exp.DataType) -> exp.Cast:
    """``'{1,2}'::int[]`` as ``CAST([CAST('1' AS INT), CAST('2' AS INT)] AS INT[])``: each
    element read by its type's own input rule, the array as deep as the text's nesting
    (PostgreSQL's int[] takes any number of dimensions)."""
    element = to
    while element.this is DT.ARRAY and element.expressions:
        element = element.expressions[0]
    parsed = parse_array(text)

    def build(items: Elements) -> exp.Array:
        return exp.Array(
            expressions=[
                build(item) if isinstance(item, list)
                else exp.Cast(
                    this=exp.Null() if item is None else exp.Literal.string(item),
                    to=element.copy(),
                )
                for item in items
            ]
        )  # fmt: skip

    typed = element.copy()
    for _ in shape(parsed) if parsed else [0]:
        typed = exp.DataType(this=DT.ARRAY, expressions=[typed], nested=True)
    return exp.Cast(this=build(parsed), to=typed)


def _spell_interval(literal: exp.Literal, sql_standard: bool) -> None:
    spelled = interval_input.duckdb_spelling(literal.name, sql_standard)
    if spelled is not None:
        literal.replace(exp.Literal.string(spelled))
