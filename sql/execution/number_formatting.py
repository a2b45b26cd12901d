"""PostgreSQL's ``to_char(number, pattern)``, ``to_number(text, pattern)`` and ``format()``,
as Python functions for the DuckDB that runs user queries (DuckDB's functions of those
names answer otherwise: ``format`` is fmt's ``{}``, there is no numeric ``to_char``).

Numbers arrive as text (a numeric keeps its digits) and are formatted with ``Decimal``,
following PostgreSQL's formatting.c: digit positions ``9`` (blank when a leading zero)
and ``0`` (zero-filled from the first ``0``), ``.``/``D``, ``,``/``G``, ``FM``, the signs
``S``, ``MI``, ``PL``, ``SG`` and ``PR``, ``L``, ``V``, ``EEEE``, ``RN`` and ``TH``.
"""

from __future__ import annotations

import decimal
import functools
import re
from dataclasses import dataclass, field
from decimal import Decimal

import duckdb

from sql.common.names import quote_ident
from sql.planner.formatting import FORMAT_FUNCTION, TO_CHAR_FUNCTION, TO_NUMBER_FUNCTION
from storage.errors import (
    InvalidParameterValue,
    InvalidTextRepresentation,
    NullValueNotAllowed,
    SqlSyntaxError,
)

_TOKENS = re.compile(
    r'"(?:[^"\\]|\\.)*"|FM|fm|EEEE|eeee|PR|pr|MI|mi|PL|pl|SG|sg|RN|rn|TH|th|'
    r"[90.,DdGgSsLlVv]|.",
    re.S,
)


@dataclass
class _Pattern:
    """A numeric pattern read once: its items and what they ask for."""

    items: list[str] = field(default_factory=list)
    pre: int = 0
    post: int = 0
    point: bool = False
    zero_start: int | None = None
    """Index (among integer digit positions) of the first ``0``: zero-filled from there."""
    fill_mode: bool = False
    multiplier: int = 0
    eeee: bool = False
    roman: bool = False
    sign_items: set[str] = field(default_factory=set)


@functools.lru_cache(maxsize=256)
def _pattern(text: str) -> _Pattern:
    pattern = _Pattern()
    after_v = False
    for token in _TOKENS.findall(text):
        upper = token.upper()
        if upper == "FM":
            pattern.fill_mode = True
            continue
        if upper in ("9", "0"):
            if after_v:
                pattern.multiplier += 1
                pattern.pre += 1
            elif pattern.point:
                pattern.post += 1
            else:
                if upper == "0" and pattern.zero_start is None:
                    pattern.zero_start = pattern.pre
                pattern.pre += 1
        elif upper in (".", "D"):
            if pattern.point:
                raise SqlSyntaxError("multiple decimal points")
            pattern.point = True
        elif upper == "V":
            after_v = True
            continue
        elif upper == "EEEE":
            pattern.eeee = True
        elif upper == "RN":
            pattern.roman = True
        elif upper in ("S", "MI", "PL", "SG", "PR"):
            pattern.sign_items.add(upper)
        pattern.items.append(token)
    return pattern


def to_char(value: str | None, fmt: str | None) -> str | None:
    """``to_char(numeric, pattern)`` as PostgreSQL writes it.

    Example:
        >>> to_char("-0.1", "FM90.99"), to_char("1485", "9,999"), to_char("-485", "999PR")
        ('-0.1', ' 1,485', '<485>')
    """
    if value is None or fmt is None:
        return None
    pattern = _pattern(fmt)
    try:
        number = Decimal(value)
    except decimal.InvalidOperation:
        raise InvalidTextRepresentation(
            f'invalid input syntax for type numeric: "{value}"'
        ) from None
    if pattern.roman:
        return _roman(number, pattern.fill_mode)
    if not number.is_finite():
        return _overflow(pattern)
    if pattern.eeee:
        return _scientific(number, pattern)
    if pattern.multiplier:
        number = number.scaleb(pattern.multiplier)
    rounded = number.quantize(Decimal(1).scaleb(-pattern.post), rounding=decimal.ROUND_HALF_UP)
    negative = rounded < 0
    digits = format(abs(rounded), "f")
    whole, _, fraction = digits.partition(".")
    if whole == "0" and pattern.point:
        whole = ""  # PostgreSQL writes 0.5 as .5 unless a 0 position asks for the zero
    if len(whole) > pattern.pre:
        return _overflow(pattern)
    return _render(pattern, whole, fraction.ljust(pattern.post, "0"), negative, int(abs(rounded)))


def _render(pattern: _Pattern, whole: str, fraction: str, negative: bool, integer: int) -> str:
    fm = pattern.fill_mode
    blanks = pattern.pre - len(whole)
    out: list[str] = []
    int_position = frac_position = 0
    started = False
    explicit_sign = bool(pattern.sign_items - {"PL"})  # PL adds a plus; the sign stays
    fraction_keep = len(fraction)
    if fm:
        # FM drops trailing zeros at 9 positions of the fraction (not at 0 positions).
        nines = [t.upper() for t in pattern.items if t in ("9", "0")]
        fraction_kinds = nines[pattern.pre - pattern.multiplier :][: len(fraction)]
        while (
            fraction_keep > 0
            and fraction[fraction_keep - 1] == "0"
            and fraction_kinds[fraction_keep - 1] == "9"
        ):
            fraction_keep -= 1
    in_fraction = False

    def begin_number() -> None:
        nonlocal started
        if started:
            return
        started = True
        if not explicit_sign:
            if negative:
                out.append("-")
            elif not fm:
                out.append(" ")

    for token in pattern.items:
        upper = token.upper()
        if token.startswith('"'):
            out.append(re.sub(r"\\(.)", r"\1", token[1:-1]))
        elif upper in ("9", "0") and not in_fraction:
            if int_position < blanks:
                zero = pattern.zero_start is not None and int_position >= pattern.zero_start
                if zero:
                    begin_number()
                    out.append("0")
                elif not fm:
                    out.append(" ")
            else:
                begin_number()
                out.append(whole[int_position - blanks])
            int_position += 1
        elif upper in ("9", "0"):
            if frac_position < fraction_keep:
                out.append(fraction[frac_position])
            frac_position += 1
        elif upper in (".", "D"):
            begin_number()
            in_fraction = True
            out.append(".")
        elif upper in (",", "G"):
            if started:
                out.append(",")
            elif not fm:
                out.append(" ")
        elif upper == "S":
            out.append("-" if negative else "+")
            if not started and int_position == 0:
                started = True
        elif upper == "MI":
            out.append("-" if negative else ("" if fm else " "))
        elif upper == "PL":
            out.append("+" if not negative else ("" if fm else " "))
        elif upper == "SG":
            out.append("-" if negative else "+")
        elif upper == "PR":
            continue
        elif upper == "L":
            out.append(" ")
        elif upper == "TH":
            out.append(_ordinal(integer, token == "th"))
        else:
            out.append(token)
    if not started and not explicit_sign:
        begin_number()
    text = "".join(out)
    if fm and not any(c.isdigit() for c in text) and "." in text:
        text = text.replace(".", "0.", 1)  # zero in FM mode is "0.", never a bare "."
    if "PR" in pattern.sign_items:
        text = f"<{text}>" if negative else (text if fm else f" {text} ")
    if explicit_sign and "S" in pattern.sign_items and not fm:
        # An anchored S sits right before the first digit: blanks move in front of it.
        text = re.sub(r"^([+-])( +)", r"\2\1", text)
    return text


def _overflow(pattern: _Pattern) -> str:
    """``#`` in every digit position, as PostgreSQL answers a number too wide for the pattern."""
    out = [] if pattern.sign_items or pattern.fill_mode else [" "]
    for token in pattern.items:
        upper = token.upper()
        if upper in ("9", "0"):
            out.append("#")
        elif upper in (".", "D"):
            out.append(".")
        elif token.startswith('"'):
            out.append(token[1:-1])
        elif upper in (",", "G"):
            out.append(",")
        elif upper in ("S", "MI", "PL", "SG", "PR", "L", "TH", "EEEE"):
            out.append(" " if upper in ("S", "MI", "PL", "SG", "L") else "")
        else:
            out.append(token)
    return "".join(out)


def _scientific(number: Decimal, pattern: _Pattern) -> str:
    text = f"{number:.{pattern.post}e}"
    mantissa, _, exponent = text.partition("e")
    sign = "-" if mantissa.startswith("-") else ("" if pattern.fill_mode else " ")
    mantissa = mantissa.lstrip("-")
    power = int(exponent)
    return f"{sign}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"


_ROMAN = (
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
)  # fmt: skip


def _roman(number: Decimal, fill_mode: bool) -> str:
    value = int(number.to_integral_value(rounding=decimal.ROUND_HALF_UP))
    if not 1 <= value <= 3999:
        return "#" * 15
    out = ""
    for amount, letters in _ROMAN:
        while value >= amount:
            out += letters
            value -= amount
    return out if fill_mode else out.rjust(15)


def _ordinal(integer: int, lower: bool) -> str:
    last_two = integer % 100
    last = integer % 10
    suffix = "TH"
    if last_two not in (11, 12, 13):
        suffix = {1: "ST", 2: "ND", 3: "RD"}.get(last, "TH")
    return suffix.lower() if lower else suffix


def to_number(text: str | None, fmt: str | None) -> str | None:
    """``to_number(text, pattern)``: the digits the pattern's positions read, its decimal
    point, and a minus sign (``-`` anywhere, or ``<...>`` with PR), as numeric text.

    Example:
        >>> to_number("12,454.8-", "99G999D9S"), to_number("<123>", "999PR")
        ('-12454.8', '-123')
    """
    if text is None or fmt is None:
        return None
    pattern = _pattern(fmt)
    negative = "-" in text or ("PR" in pattern.sign_items and "<" in text)
    whole_digits: list[str] = []
    fraction_digits: list[str] = []
    in_fraction = False
    for char in text:
        if char.isdigit():
            if in_fraction:
                if len(fraction_digits) < pattern.post:
                    fraction_digits.append(char)
            elif len(whole_digits) < pattern.pre:
                whole_digits.append(char)
        elif char == "." and pattern.point and not in_fraction:
            in_fraction = True
    if not whole_digits and not fraction_digits:
        if any(c.isdigit() for c in text) or not text.strip():
            return None if not text.strip() else "0"
        raise InvalidTextRepresentation('invalid input syntax for type numeric: " "')
    number = Decimal("".join(whole_digits) or "0")
    if fraction_digits:
        number += Decimal("0." + "".join(fraction_digits))
    if pattern.multiplier:
        number = number.scaleb(-pattern.multiplier)
    if negative:
        number = -number
    return format(number, "f")


def format_text(fmt: str | None, args: list[str | None] | None) -> str | None:
    """PostgreSQL's ``format(formatstr, args...)``: ``%s``, ``%I``, ``%L`` and ``%%``, with
    positions (``%2$s``), the ``-`` flag and widths (``%10s``, ``%*s``, ``%*2$s``).

    Example:
        >>> format_text("%s|%-4s|%I|%L|%2$s", ["a", "b", "Tab", None])
        'a|b   |"Tab"|NULL|b'
    """
    if fmt is None:
        return None
    args = list(args or [])
    out: list[str] = []
    index = 0
    next_arg = 0
    length = len(fmt)
    while index < length:
        char = fmt[index]
        if char != "%":
            out.append(char)
            index += 1
            continue
        index += 1
        if index >= length:
            raise InvalidParameterValue("unterminated format() type specifier")
        if fmt[index] == "%":
            out.append("%")
            index += 1
            continue
        position, index = _position(fmt, index)
        left = False
        if index < length and fmt[index] == "-":
            left = True
            index += 1
        width: int | None = None
        if index < length and fmt[index] == "*":
            index += 1
            star, index = _position(fmt, index)
            if star is not None:
                width_arg = _arg(args, star - 1)
                next_arg = star  # the value follows the width's argument
            else:
                width_arg = _arg(args, next_arg)
                next_arg += 1
            width = _width(width_arg)
            if width is not None and width < 0:
                left, width = True, -width
        else:
            digits = ""
            while index < length and fmt[index].isdigit():
                digits += fmt[index]
                index += 1
            width = int(digits) if digits else None
        if index >= length:
            raise InvalidParameterValue("unterminated format() type specifier")
        kind = fmt[index]
        index += 1
        if position is not None:
            next_arg = position - 1
        value = _arg(args, next_arg)
        next_arg += 1
        if kind == "s":
            piece = "" if value is None else value
        elif kind == "I":
            if value is None:
                raise NullValueNotAllowed("null values cannot be formatted as an SQL identifier")
            piece = quote_ident(value)
        elif kind == "L":
            piece = "NULL" if value is None else _quote_literal(value)
        else:
            raise InvalidParameterValue(f'unrecognized format() type specifier "{kind}"')
        if width is not None and len(piece) < width:
            piece = piece.ljust(width) if left else piece.rjust(width)
        out.append(piece)
    return "".join(out)


def _position(fmt: str, index: int) -> tuple[int | None, int]:
    """An ``n$`` argument position at ``index`` (None if there is none) and what follows."""
    end = index
    while end < len(fmt) and fmt[end].isdigit():
        end += 1
    if end > index and end < len(fmt) and fmt[end] == "$":
        position = int(fmt[index:end])
        if position < 1:
            raise InvalidParameterValue(
                "format specifies argument 0, but arguments are numbered from 1"
            )
        return position, end + 1
    return None, index


def _width(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise InvalidTextRepresentation(
            f'invalid input syntax for type integer: "{text}"'
        ) from None


def _arg(args: list[str | None], index: int) -> str | None:
    if index >= len(args):
        raise InvalidParameterValue("too few arguments for format()")
    return args[index]


def _quote_literal(value: str) -> str:
    quoted = "'" + value.replace("'", "''") + "'"
    if "\\" in value:
        return "E" + quoted.replace("\\", "\\\\")
    return quoted


def register(duck: duckdb.DuckDBPyConnection) -> None:
    """Create the ``nyf_`` formatting functions on ``duck``."""
    for name, function, params, returns in (
        (TO_CHAR_FUNCTION, to_char, ["VARCHAR", "VARCHAR"], "VARCHAR"),
        (TO_NUMBER_FUNCTION, to_number, ["VARCHAR", "VARCHAR"], "VARCHAR"),
        (FORMAT_FUNCTION, format_text, ["VARCHAR", "VARCHAR[]"], "VARCHAR"),
    ):
        duck.create_function(  # type: ignore[call-overload]  # DuckDB's stubs name only types
            name, function, params, returns, null_handling="special"
        )
