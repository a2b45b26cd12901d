"""PostgreSQL's jsonb operators and functions, for the DuckDB that runs user queries.

DuckDB's own JSON functions re-serialise what they return (``1.50`` comes
back as ``1.5``, objects lose their spacing) and answer containment and key
tests with other rules than PostgreSQL's, so the planner
(``planner.json_operators``) sends jsonb's operators here.  Each function
takes and returns documents as text; a returned document is jsonb_out's text
(``json_values.jsonb_text``), which the planner casts back to DuckDB's JSON.
The ``nyj_column_`` forms, for a table's jsonb column, answer a whole batch
with ``jsonb_columns``' kernels when the other arguments are constant, and
otherwise (or for the rows a kernel leaves) run the same per-row function.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sql.common.array_input import flatten, parse_array
from sql.common.json_values import (
    JsonValue,
    jsonb_text,
    normalize_jsonb,
    parse_json,
    refuse_surrogates,
    typeof,
)
from sql.execution import jsonb_columns, jsonb_deletion
from storage.errors import DbError, InvalidParameterValue

_ARROW_UDF: dict[str, Any] = {"type": "arrow", "null_handling": "special"}


@functools.lru_cache(maxsize=64)
def _parse(text: str) -> JsonValue:
    """A document's parsed value, cached: the constant side of ``doc @> '{...}'`` is the same
    text on every row.  A lone surrogate escape fails here, as in PostgreSQL's operators.
    Nothing here changes a parsed value, so sharing one is safe."""
    value = parse_json(text)
    refuse_surrogates(text, value)
    return value


def _checked(text: str) -> str:
    """A json input text unchanged, once it is known to be JSON (json keeps it verbatim)."""
    parse_json(text)
    return text


MISSING = object()
"""What ``->`` and ``#>`` find where there is nothing (SQL NULL; JSON null is None)."""


def field(value: JsonValue, key: str, by_index: bool) -> JsonValue:
    """``->``: an object's field, or an array's element (negative counts from the end)."""
    if by_index:
        if isinstance(value, dict):
            return MISSING
        if not isinstance(value, list):
            value = [value]  # jsonb keeps a scalar as a one-element array, and indexes it so
        index = int(key)
        if index < 0:
            index += len(value)
        return value[index] if 0 <= index < len(value) else MISSING
    if isinstance(value, dict):
        return value.get(key, MISSING)
    return MISSING


def path(value: JsonValue, keys: list[str | None]) -> JsonValue:
    """``#>``: follow ``keys`` down; an array step reads its key as an integer index."""
    for key in keys:
        if key is None:
            return MISSING
        if isinstance(value, dict):
            if key not in value:
                return MISSING
            value = value[key]
        elif isinstance(value, list):
            try:
                index = int(key)
            except ValueError:
                return MISSING
            if index < 0:
                index += len(value)
            if not 0 <= index < len(value):
                return MISSING
            value = value[index]
        else:
            return MISSING
    return value


def as_text(value: JsonValue) -> str | None:
    """``->>``'s text of a value: a string unquoted, JSON null as SQL NULL."""
    if value is None or value is MISSING:
        return None
    if isinstance(value, str):
        return value
    return jsonb_text(value)


def _same(a: JsonValue, b: JsonValue) -> bool:
    """jsonb equality: numbers by value, objects by key set, arrays in order."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return False


def _in(value: JsonValue, candidates: list[str | None]) -> bool | None:
    """``doc IN (...)`` as PostgreSQL's chain of jsonb ``=``: true on a match, else NULL
    when a candidate is NULL, else false."""
    if any(c is not None and _same(value, _parse(c)) for c in candidates):
        return True
    return None if None in candidates else False


def _all_same(value: JsonValue, candidates: list[str | None]) -> bool | None:
    """``doc = ALL (...)`` as PostgreSQL's conjunction of jsonb ``=``: false on a mismatch,
    else NULL when a candidate is NULL, else true (so for no candidates)."""
    if any(c is not None and not _same(value, _parse(c)) for c in candidates):
        return False
    return None if None in candidates else True


def contains(haystack: JsonValue, needle: JsonValue, top: bool = True) -> bool:
    """``@>`` as jsonb_contains: objects by subset of pairs, arrays by subset of elements
    (an array also contains a bare scalar at the top level), scalars by equality."""
    if isinstance(haystack, dict):
        return isinstance(needle, dict) and all(
            k in haystack and contains(haystack[k], v, False) for k, v in needle.items()
        )
    if isinstance(haystack, list):
        if not isinstance(needle, list):
            if top and not isinstance(needle, dict):
                needle = [needle]
            else:
                return False
        for element in needle:
            if isinstance(element, (dict, list)):
                found = any(
                    isinstance(h, type(element)) and contains(h, element, False) for h in haystack
                )
            else:
                found = any(_same(h, element) for h in haystack)
            if not found:
                return False
        return True
    if isinstance(needle, (dict, list)):
        return False
    return _same(haystack, needle)


def exists(value: JsonValue, key: str) -> bool:
    """``?``: a top-level key of an object, or a string element of an array (or the string)."""
    if isinstance(value, dict):
        return key in value
    if isinstance(value, list):
        return any(isinstance(v, str) and v == key for v in value)
    return isinstance(value, str) and value == key


def concat(left: JsonValue, right: JsonValue) -> JsonValue:
    """``||``: objects merge (the right's keys win); anything else concatenates as arrays."""
    if isinstance(left, dict) and isinstance(right, dict):
        return {**left, **right}
    as_list = [left] if not isinstance(left, list) else left
    return as_list + ([right] if not isinstance(right, list) else right)


def array_length(value: JsonValue) -> int:
    if isinstance(value, list):
        return len(value)
    if isinstance(value, dict):
        raise InvalidParameterValue("cannot get array length of a non-array")
    raise InvalidParameterValue("cannot get array length of a scalar")


def object_keys(value: JsonValue) -> list[str]:
    """jsonb_object_keys: an object's keys, in jsonb's order (the stored text's)."""
    if isinstance(value, dict):
        return list(value)
    kind = "an array" if isinstance(value, list) else "a scalar"
    raise InvalidParameterValue(f"cannot call jsonb_object_keys on {kind}")


def array_elements(value: JsonValue) -> list[JsonValue]:
    """jsonb_array_elements: an array's elements."""
    if isinstance(value, list):
        return value
    kind = "an object" if isinstance(value, dict) else "a scalar"
    raise InvalidParameterValue(f"cannot extract elements from {kind}")


def _map(arrays: tuple[pa.Array, ...], fn: Callable[..., Any], out: pa.DataType) -> pa.Array:
    # Per value: no Arrow kernel reads JSON; these operators are rare beside scans.
    columns = [a.to_pylist() for a in arrays]
    values = [
        None if any(v is None for v in row) else fn(*row) for row in zip(*columns, strict=True)
    ]
    return pa.array(values, out)


def _doc(fn: Callable[..., JsonValue]) -> Callable[..., str | None]:
    def wrapped(text: str, *args: Any) -> str | None:
        value = fn(_parse(text), *args)
        return None if value is MISSING else jsonb_text(value)

    return wrapped


_FUNCTIONS: dict[str, tuple[Callable[..., Any], list[str], str]] = {
    "nyj_jsonb_in": (normalize_jsonb, ["VARCHAR"], "VARCHAR"),
    "nyj_json_in": (lambda t: _checked(t), ["VARCHAR"], "VARCHAR"),
    "nyj_field": (_doc(field), ["VARCHAR", "VARCHAR", "BOOLEAN"], "VARCHAR"),
    "nyj_field_text": (
        lambda t, k, i: as_text(field(_parse(t), k, i)),
        ["VARCHAR", "VARCHAR", "BOOLEAN"],
        "VARCHAR",
    ),
    "nyj_path": (_doc(path), ["VARCHAR", "VARCHAR[]"], "VARCHAR"),
    "nyj_path_text": (
        lambda t, p: as_text(path(_parse(t), p)),
        ["VARCHAR", "VARCHAR[]"],
        "VARCHAR",
    ),
    "nyj_contains": (
        lambda a, b: contains(_parse(a), _parse(b)),
        ["VARCHAR", "VARCHAR"],
        "BOOLEAN",
    ),
    "nyj_equal": (lambda a, b: _same(_parse(a), _parse(b)), ["VARCHAR", "VARCHAR"], "BOOLEAN"),
    "nyj_exists": (lambda t, k: exists(_parse(t), k), ["VARCHAR", "VARCHAR"], "BOOLEAN"),
    "nyj_exists_any": (
        lambda t, ks: any(k is not None and exists(_parse(t), k) for k in ks),
        ["VARCHAR", "VARCHAR[]"],
        "BOOLEAN",
    ),
    "nyj_exists_all": (
        lambda t, ks: all(k is None or exists(_parse(t), k) for k in ks),
        ["VARCHAR", "VARCHAR[]"],
        "BOOLEAN",
    ),
    "nyj_concat": (
        lambda a, b: jsonb_text(concat(_parse(a), _parse(b))),
        ["VARCHAR", "VARCHAR"],
        "VARCHAR",
    ),
    "nyj_delete_key": (_doc(jsonb_deletion.delete_key), ["VARCHAR", "VARCHAR"], "VARCHAR"),
    "nyj_delete_keys": (_doc(jsonb_deletion.delete_keys), ["VARCHAR", "VARCHAR[]"], "VARCHAR"),
    "nyj_delete_index": (_doc(jsonb_deletion.delete_index), ["VARCHAR", "INTEGER"], "VARCHAR"),
    "nyj_delete_path": (_doc(jsonb_deletion.delete_path), ["VARCHAR", "VARCHAR[]"], "VARCHAR"),
    "nyj_in": (
        lambda t, candidates: _in(_parse(t), candidates),
        ["VARCHAR", "VARCHAR[]"],
        "BOOLEAN",
    ),
    "nyj_in_array_text": (
        lambda t, array: _in(_parse(t), flatten(parse_array(array))),
        ["VARCHAR", "VARCHAR"],
        "BOOLEAN",
    ),
    "nyj_all": (
        lambda t, candidates: _all_same(_parse(t), candidates),
        ["VARCHAR", "VARCHAR[]"],
        "BOOLEAN",
    ),
    "nyj_all_array_text": (
        lambda t, array: _all_same(_parse(t), flatten(parse_array(array))),
        ["VARCHAR", "VARCHAR"],
        "BOOLEAN",
    ),
    "nyj_typeof": (lambda t: typeof(_parse(t)), ["VARCHAR"], "VARCHAR"),
    "nyj_object_keys": (lambda t: object_keys(_parse(t)), ["VARCHAR"], "VARCHAR[]"),
    "nyj_array_elements": (
        lambda t: [jsonb_text(v) for v in array_elements(_parse(t))],
        ["VARCHAR"],
        "VARCHAR[]",
    ),
    "nyj_array_elements_text": (
        lambda t: [as_text(v) for v in array_elements(_parse(t))],
        ["VARCHAR"],
        "VARCHAR[]",
    ),
    "nyj_array_length": (lambda t: array_length(_parse(t)), ["VARCHAR"], "INTEGER"),
}

_RESULT_ARROW = {
    "VARCHAR": pa.string(),
    "BOOLEAN": pa.bool_(),
    "INTEGER": pa.int32(),
    "VARCHAR[]": pa.list_(pa.string()),
}


def _arrow_function(fn: Callable[..., Any], arity: int, returns: str) -> Callable[..., pa.Array]:
    """``fn`` over whole Arrow arrays, with the fixed arity DuckDB checks a UDF for."""
    out = _RESULT_ARROW[returns]
    if arity == 1:
        return lambda a: _map((a,), fn, out)
    if arity == 2:
        return lambda a, b: _map((a, b), fn, out)
    return lambda a, b, c: _map((a, b, c), fn, out)


def _constant(array: pa.Array) -> Any:
    """The one value of an argument DuckDB passes as the same value on every row, or
    MISSING when the rows differ or hold a NULL."""
    if len(array) == 0 or array.null_count:
        return MISSING
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    first = array[0]
    if len(array) > 1 and not pc.all(pc.equal(array, first)).as_py():
        return MISSING
    return first.as_py()


def _completed(
    answer: jsonb_columns.Answer, arrays: tuple[pa.Array, ...], fn: Callable[..., Any]
) -> pa.Array:
    """A kernel's answer with the rows it left undecided answered by ``fn`` row by row."""
    if answer.undecided is None:
        return answer.values
    rows = np.flatnonzero(answer.undecided)
    taken = [a.take(pa.array(rows)) for a in arrays]
    return pc.replace_with_mask(
        answer.values,
        pa.array(answer.undecided),
        _map(tuple(taken), fn, answer.values.type),
    )


def _column_function(
    kernel: Callable[..., jsonb_columns.Answer | None], general: str
) -> Callable[..., pa.Array]:
    """A stored jsonb column's operator with constant other arguments: ``kernel`` over the
    whole batch where it has a pass for them, else ``general`` row by row (the same
    answers)."""
    fn, _, returns = _FUNCTIONS[general]
    out = _RESULT_ARROW[returns]

    def run(docs: pa.Array, *others: pa.Array) -> pa.Array:
        constants = [_constant(a) for a in others]
        if all(c is not MISSING for c in constants):
            answer = kernel(docs, *constants)
            if answer is not None:
                return _completed(answer, (docs, *others), fn)
        return _map((docs, *others), fn, out)

    arity = len(_FUNCTIONS[general][1])
    if arity == 2:
        return lambda a, b: run(a, b)
    return lambda a, b, c: run(a, b, c)


def _needle_contains(docs: pa.Array, needle: str) -> jsonb_columns.Answer | None:
    return jsonb_columns.contains(docs, _parse(needle))


def _equal_to(docs: pa.Array, other: str) -> jsonb_columns.Answer | None:
    """``doc = other`` over stored jsonb text: the same text is the same document, and a
    different text differs unless a number's scale does (``1.0`` = ``1``), so only rows
    with a ``.`` (or all, when ``other`` has one) are left to ``_same``."""
    try:
        needle = jsonb_text(_parse(other))
    except DbError:
        return None  # the per-row function raises it, as PostgreSQL does
    if pa.types.is_dictionary(docs.type):
        docs = docs.dictionary_decode()
    valid = np.asarray(docs.is_valid().to_numpy(zero_copy_only=False), bool)
    same = pc.fill_null(pc.equal(docs, needle), False)
    matched = np.asarray(same.to_numpy(zero_copy_only=False), bool)
    undecided = valid & ~matched
    if "." not in needle:
        dotted = pc.fill_null(pc.match_substring(docs, "."), False)
        undecided &= np.asarray(dotted.to_numpy(zero_copy_only=False), bool)
    values = pa.array(matched, pa.bool_(), mask=~valid)
    return jsonb_columns.Answer(values, undecided if undecided.any() else None)


_COLUMN_FUNCTIONS: dict[str, tuple[Callable[..., Any], str]] = {
    "nyj_equal": (_equal_to, "nyj_equal"),
    "nyj_field": (jsonb_columns.field, "nyj_field"),
    "nyj_field_text": (jsonb_columns.field_text, "nyj_field_text"),
    "nyj_contains": (_needle_contains, "nyj_contains"),
    "nyj_exists": (jsonb_columns.exists, "nyj_exists"),
}
"""The ``nyj_column_`` forms, for a stored jsonb column (jsonb_out's text) as first
argument: a kernel over the batch, and the function whose answers it gives."""


def register(duck: duckdb.DuckDBPyConnection) -> None:
    """Create the ``nyj_`` functions on ``duck``."""
    for name, (fn, params, returns) in _FUNCTIONS.items():
        duck.create_function(
            name,
            _arrow_function(fn, len(params), returns),
            params,  # type: ignore[arg-type]  # DuckDB's stubs list type names one by one
            returns,
            **_ARROW_UDF,
        )
    for name, (kernel, general) in _COLUMN_FUNCTIONS.items():
        _, params, returns = _FUNCTIONS[general]
        duck.create_function(
            name.replace("nyj_", "nyj_column_"),
            _column_function(kernel, general),
            params,  # type: ignore[arg-type]
            returns,
            **_ARROW_UDF,
        )
