"""json and jsonb values as PostgreSQL reads and writes them.

A document is parsed into Python values with every number kept as the
``Decimal`` of its text, because jsonb keeps numbers as ``numeric``:
``1.0`` stays ``1.0``, ``1e3`` becomes ``1000``.  ``jsonb_text`` writes
jsonb_out's form: object keys sorted by byte length, then bytes; a repeated
key keeps its last value; ``", "`` and ``": "`` between items.  json is kept
as the text given (``parse_json`` only checks it).
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from storage.errors import InvalidTextRepresentation, UntranslatableCharacter

JsonValue = Any
"""None, bool, Decimal, str, list or dict: a parsed document."""


def _reject_constant(name: str) -> None:
    raise ValueError(f"Token {name!r} is invalid")


_DECODER = json.JSONDecoder(parse_float=Decimal, parse_int=Decimal, parse_constant=_reject_constant)


def parse_json(text: str) -> JsonValue:
    """Parse a json or jsonb input text; 22P02 as PostgreSQL says it when it is not JSON."""
    body = text.strip(" \t\n\r")
    try:
        value, end = _DECODER.raw_decode(body)
    except (ValueError, RecursionError) as exc:
        raise InvalidTextRepresentation(
            "invalid input syntax for type json", detail=str(exc).split(":")[0] + "."
        ) from None
    if end != len(body):
        raise InvalidTextRepresentation(
            "invalid input syntax for type json",
            detail=f'Token "{body[end:].split()[0]}" is invalid.',
        )
    return value


def parse_jsonb(text: str) -> JsonValue:
    """Parse a jsonb input text: as json, and a ``\\u0000`` is refused (22P05), as jsonb does."""
    value = parse_json(text)
    if "\\u0000" in text and _has_nul(value):
        raise UntranslatableCharacter(
            "unsupported Unicode escape sequence",
            detail="\\u0000 cannot be converted to text.",
        )
    refuse_surrogates(text, value)
    return value


def refuse_surrogates(text: str, value: JsonValue) -> None:
    """22P02 when a document holds a lone surrogate escape (``"\\ud800"``): json keeps one
    as text, but jsonb, and json's operators once they read the string, refuse it.  Python's
    decoder keeps it as a character no UTF-8 can encode."""
    if "\\u" in text and _has_surrogate(value):
        raise InvalidTextRepresentation(
            "invalid input syntax for type json",
            detail="Unicode low surrogate must follow a high surrogate.",
        )


def _has_nul(value: JsonValue) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    if isinstance(value, dict):
        return any("\x00" in k or _has_nul(v) for k, v in value.items())
    return False


_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogate(value: JsonValue) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(_SURROGATE.search(k) is not None or _has_surrogate(v) for k, v in value.items())
    return False


def _key_order(key: str) -> tuple[int, bytes]:
    raw = key.encode()
    return len(raw), raw


def number_text(value: Decimal) -> str:
    """numeric_out's text of a JSON number: no exponent, the input's own scale, no ``-0``."""
    if value.is_zero():
        value = abs(value)
    return format(value, "f")


def jsonb_text(value: JsonValue) -> str:
    """jsonb_out's text of a parsed document."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, Decimal):
        return number_text(value)
    if isinstance(value, (int, float)):
        return number_text(Decimal(str(value)))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(jsonb_text(v) for v in value) + "]"
    items = sorted(value.items(), key=lambda item: _key_order(item[0]))
    return (
        "{"
        + ", ".join(json.dumps(k, ensure_ascii=False) + ": " + jsonb_text(v) for k, v in items)
        + "}"
    )


def normalize_jsonb(text: str) -> str:
    """A jsonb input text as jsonb stores and prints it.

    Example:
        >>> normalize_jsonb('{"b":1, "a":1.0, "b":1e3}')
        '{"a": 1.0, "b": 1000}'
    """
    return jsonb_text(parse_jsonb(text))


def typeof(value: JsonValue) -> str:
    """jsonb_typeof's name for a value's JSON type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, Decimal):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"
