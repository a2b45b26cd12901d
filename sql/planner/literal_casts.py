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
from storage.errors import FeatureNotSupported, InvalidTextRepresentation

DT = exp.DataType.Type
_INTEGER_NAMES = {DT.SMALLINT: "smallint", DT.INT: "integer", DT.BIGINT: "bigint"}
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
        if target is DT.INTERVAL:
            _spell_interval(literal, sql_standard)
            continue
        if target in _DATETIMES:
            iso = date_input.iso_spelling(text, date_order)
            if iso is not None:
                literal.replace(exp.Literal.string(iso))
            continue
        if target in _INTEGER_NAMES and not _INTEGER.match(text):
            raise InvalidTextRepresentation(
                f'invalid input syntax for type {_INTEGER_NAMES[target]}: "{text}"'
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
    """String constants compared with a date or timestamp (``d = '31/12/2024'``), which
    PostgreSQL reads as that type, spelt as ISO; after type annotation, in place."""
    for node in ast.find_all(*_COMPARISONS):
        operands = [node.this, *(node.args.get(k) for k in ("expression", "low", "high"))]
        operands += node.expressions if isinstance(node, exp.In) else []
        typed = [o for o in operands if o is not None and not isinstance(o, exp.Literal)]
        if not any(o.type is not None and o.type.this in _DATETIMES for o in typed):
            continue
        for operand in operands:
            if isinstance(operand, exp.Literal) and operand.is_string:
                iso = date_input.iso_spelling(operand.name, date_order)
                if iso is not None:
                    operand.replace(exp.Literal.string(iso))


def _spell_interval(literal: exp.Literal, sql_standard: bool) -> None:
    spelled = interval_input.duckdb_spelling(literal.name, sql_standard)
    if spelled is not None:
        literal.replace(exp.Literal.string(spelled))
