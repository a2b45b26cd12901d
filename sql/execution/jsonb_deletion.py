"""jsonb's deletion operators: ``- text``, ``- int``, ``- text[]`` and ``#- text[]``.

Each follows PostgreSQL's jsonb_delete, jsonb_delete_idx, jsonb_delete_array and
jsonb_delete_path, errors and all: a scalar refuses every deletion (22023), an object
refuses an integer index, and a path is checked only as far as the document goes (an
element that is NULL or, where an array is met, not an integer, fails only when reached).
Parsed documents are shared through a cache, so these build new values and never change
the ones they are given.
"""

from __future__ import annotations

import re

from sql.common.json_values import JsonValue
from storage.errors import InvalidParameterValue, InvalidTextRepresentation, NullValueNotAllowed

_INT4 = (-(2**31), 2**31 - 1)
_INTEGER = re.compile(r"[ \t\n\r\f\v]*[+-]?[0-9]+")


def _not_scalar(value: JsonValue, message: str = "cannot delete from scalar") -> None:
    if not isinstance(value, (dict, list)):
        raise InvalidParameterValue(message)


def delete_key(value: JsonValue, key: str) -> JsonValue:
    """``jsonb - text``: an object without the key, an array without string elements equal
    to it."""
    _not_scalar(value)
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k != key}
    return [v for v in value if not (isinstance(v, str) and v == key)]


def delete_keys(value: JsonValue, keys: list[str | None]) -> JsonValue:
    """``jsonb - text[]``: ``- text`` for every key; NULL keys are skipped."""
    _not_scalar(value)
    wanted = {k for k in keys if k is not None}
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k not in wanted}
    return [v for v in value if not (isinstance(v, str) and v in wanted)]


def delete_index(value: JsonValue, index: int) -> JsonValue:
    """``jsonb - int``: an array without its element at ``index`` (negative counts from the
    end; out of range leaves it whole)."""
    _not_scalar(value)
    if isinstance(value, dict):
        raise InvalidParameterValue("cannot delete from object using integer index")
    if index < 0:
        index += len(value)
    if not 0 <= index < len(value):
        return value
    return value[:index] + value[index + 1 :]


def delete_path(value: JsonValue, path: list[str | None]) -> JsonValue:
    """``jsonb #- text[]``: the document without the element the path leads to."""
    _not_scalar(value, "cannot delete path in scalar")
    if not path or not value:
        return value
    return _without(value, path, 0)


def _without(value: JsonValue, path: list[str | None], level: int) -> JsonValue:
    step = path[level]
    if step is None:
        raise NullValueNotAllowed(f"path element at position {level + 1} is null")
    last = level == len(path) - 1
    if isinstance(value, dict):
        if step not in value:
            return value
        if last:
            return {k: v for k, v in value.items() if k != step}
        return {k: _without(v, path, level + 1) if k == step else v for k, v in value.items()}
    if isinstance(value, list):
        index = _path_index(step, level)
        if index < 0:
            index = index + len(value) if -index <= len(value) else len(value)
        if index >= len(value):
            return value
        if last:
            return value[:index] + value[index + 1 :]
        return [*value[:index], _without(value[index], path, level + 1), *value[index + 1 :]]
    return value


def _path_index(step: str, level: int) -> int:
    """A path element met at an array: an int4, as PostgreSQL's strtoint reads it."""
    if _INTEGER.fullmatch(step):
        number = int(step)
        if _INT4[0] <= number <= _INT4[1]:
            return number
    raise InvalidTextRepresentation(
        f'path element at position {level + 1} is not an integer: "{step}"'
    )
