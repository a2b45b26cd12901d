"""jsonb operators over a whole column of stored jsonb text, as numpy passes over its bytes.

A stored jsonb value is jsonb_out's text (``sql.common.json_values``): keys
unique and sorted, ``", "`` and ``": "`` between items, numbers without an
exponent, every string written one way.  So a batch's bytes can be read
structurally: one pass over the bytes finds the few that matter (quotes,
backslashes, brackets, commas), and passes over those positions say which
quotes are escaped, which marks lie inside strings, and each one's nesting
depth.  A top-level key
is then the byte pattern of its jsonb text followed by ``": "`` at depth one,
and its value runs to the next comma at depth one or the closing brace.

A kernel answers a whole batch, or returns None (a needle or key it has no
pass for, a batch whose text is not balanced jsonb text); the caller then
runs the per-row functions.  Where a kernel leaves single rows to them (a
string value with escapes to unquote) it says which.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_QUOTE, _BACKSLASH, _COMMA = 1, 2, 7
_TOKENS = np.zeros(256, np.uint8)
for _kind, _byte in enumerate('"\\{[}],', start=1):
    _TOKENS[ord(_byte)] = _kind
_STEP = np.array([0, 0, 0, 1, 1, -1, -1, 0], np.int32)
"""Depth change per token kind: none, quote, backslash, { [ } ] and comma."""
_MAX_PATTERN = 256
"""Longest key (as jsonb text) a pass looks for; a longer one goes row by row."""


@dataclass(frozen=True, slots=True)
class _Layout:
    """A batch's bytes and where its structure is: positions of the few bytes that matter,
    never a per-byte array beyond the one pass that finds them."""

    data: np.ndarray  # uint8, the batch's bytes
    starts: np.ndarray  # int64, each row's first byte
    ends: np.ndarray  # int64, one past each row's last byte
    valid: np.ndarray  # bool, the row is not NULL
    keys: np.ndarray  # int64, sorted: opening quotes at depth one
    backslashes: np.ndarray  # int64, sorted
    stops: np.ndarray  # int64, sorted: commas at depth one and top-level closers

    def rows_of(self, positions: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.starts, positions, side="right") - 1

    def first_byte(self, byte: str) -> np.ndarray:
        """Rows (not NULL, not empty) whose text starts with ``byte``."""
        nonempty = self.ends > self.starts
        if not len(self.data):
            return nonempty  # all False
        first = self.data[np.minimum(self.starts, len(self.data) - 1)]
        return self.valid & nonempty & (first == ord(byte))


def _bytes(docs: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A batch's bytes, each row's start and end in them, and which rows are not NULL."""
    if docs.type != pa.string():
        docs = docs.cast(pa.string())
    if isinstance(docs, pa.ChunkedArray):
        docs = docs.combine_chunks()
    valid = np.ones(len(docs), bool) if docs.null_count == 0 else docs.is_valid().to_numpy(False)
    if docs.null_count:
        docs = pc.fill_null(docs, "")  # a NULL slot's bytes are not defined
    offsets = np.frombuffer(docs.buffers()[1], np.int32)[docs.offset : docs.offset + len(docs) + 1]
    base, end = int(offsets[0]), int(offsets[-1])
    buffer = docs.buffers()[2]
    data = np.frombuffer(buffer, np.uint8)[base:end] if buffer else np.zeros(0, np.uint8)
    return data, offsets[:-1].astype(np.int64) - base, offsets[1:].astype(np.int64) - base, valid


def _escaped(quotes: np.ndarray, backslashes: np.ndarray) -> np.ndarray:
    """Which quotes are escaped: an odd run of backslashes comes right before them."""
    if not len(backslashes):
        return np.zeros(len(quotes), bool)
    run_start = np.ones(len(backslashes), bool)
    run_start[1:] = np.diff(backslashes) != 1
    first = np.maximum.accumulate(np.where(run_start, backslashes, 0))
    at = np.minimum(np.searchsorted(backslashes, quotes - 1), len(backslashes) - 1)
    after_run = backslashes[at] == quotes - 1
    return after_run & ((quotes - first[at]) % 2 == 1)


def _layout(docs: pa.Array) -> _Layout | None:
    """The structure of a batch of jsonb texts; None if it is not balanced jsonb text.

    One pass finds the bytes that matter (quotes, backslashes, brackets, commas); the
    rest runs over those positions only, in order: a running count of quotes says which
    are inside strings, a running sum of brackets gives each one's depth."""
    data, starts, ends, valid = _bytes(docs)
    marks = data == ord('"')
    for byte in b"\\{[}],":
        marks |= data == byte
    where = np.flatnonzero(marks)
    kind = np.take(_TOKENS, np.take(data, where))
    quote = kind == _QUOTE
    backslash = kind == _BACKSLASH
    if backslash.any():
        quote[np.flatnonzero(quote)[_escaped(where[quote], where[backslash])]] = False
    inside = (np.cumsum(quote, dtype=np.int32) & 1) == 1  # an opening quote is inside
    step = np.where(inside | quote, 0, np.take(_STEP, kind))
    depth = np.cumsum(step, dtype=np.int32)  # after each position
    last = np.searchsorted(where, ends) - 1
    last = last[last >= 0]
    if inside[last].any() or (depth[last] != 0).any():
        return None
    keys = where[quote & inside & (depth == 1)]
    stop = ((kind == _COMMA) & ~inside & (depth == 1)) | ((step < 0) & (depth == 0))
    return _Layout(data, starts, ends, valid, keys, where[backslash], where[stop])


def _find(layout: _Layout, pattern: bytes) -> np.ndarray:
    """Positions where ``pattern`` starts with a string's opening quote at depth one."""
    data, candidates = layout.data, layout.keys
    candidates = candidates[candidates + len(pattern) <= len(data)]
    for i, byte in enumerate(pattern[1:], start=1):  # candidates thin out byte by byte
        if not len(candidates):
            break
        candidates = candidates[data[candidates + i] == byte]
    return candidates


def _strings(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, bytes]:
    """The byte ranges ``[starts, ends)`` of ``data`` as Arrow string offsets and bytes."""
    lengths = ends - starts
    offsets = np.zeros(len(starts) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    gather = np.arange(total, dtype=np.int64) + np.repeat(starts - offsets[:-1], lengths)
    return offsets, data[gather].tobytes()


def _text_array(
    layout: _Layout, rows: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> pa.Array:
    """A string per row of the batch: the byte range found for ``rows``, NULL elsewhere."""
    count = len(layout.starts)
    row_starts = np.zeros(count, np.int64)
    row_ends = np.zeros(count, np.int64)
    row_starts[rows] = starts
    row_ends[rows] = ends
    present = np.zeros(count, bool)
    present[rows] = True
    offsets, data = _strings(layout.data, row_starts, row_ends)
    if offsets[-1] >= 2**31:
        return pa.LargeStringArray.from_buffers(
            count, pa.py_buffer(offsets), pa.py_buffer(data), _validity(present)
        ).cast(pa.string())
    return pa.StringArray.from_buffers(
        count, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data), _validity(present)
    )


def _validity(present: np.ndarray) -> pa.Buffer:
    return pa.py_buffer(np.packbits(present, bitorder="little"))


def _key_values(layout: _Layout, key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each object row holding top-level ``key``: its row, and its value's byte range."""
    pattern = (json.dumps(key, ensure_ascii=False) + ": ").encode()
    found = _find(layout, pattern)
    rows = layout.rows_of(found)
    starts = found + len(pattern)
    ends = layout.stops[np.searchsorted(layout.stops, starts)]
    return rows, starts, ends


def _all_elements(layout: _Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every element of every top-level array: its row, and its byte range, in order."""
    arrays = np.flatnonzero(layout.first_byte("["))
    nonempty = arrays[layout.data[layout.starts[arrays] + 1] != ord("]")]
    commas = layout.stops[layout.data[layout.stops] == ord(",")]
    commas = commas[layout.data[layout.starts[layout.rows_of(commas)]] == ord("[")]
    begins = np.sort(np.concatenate([layout.starts[nonempty] + 1, commas + 2]))
    ends = layout.stops[np.searchsorted(layout.stops, begins)]
    return layout.rows_of(begins), begins, ends


def _elements(layout: _Layout, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each array row with an element at ``index`` (negative from the end): its row, and
    the element's byte range."""
    rows, begins, ends = _all_elements(layout)
    count = np.bincount(rows, minlength=len(layout.starts))
    first = np.concatenate([[0], np.cumsum(count)[:-1]])
    wanted = np.flatnonzero((count > 0) & (index < count) & (-index <= count))
    at = first[wanted] + (index if index >= 0 else count[wanted] + index)
    return wanted, begins[at], ends[at]


@dataclass(frozen=True, slots=True)
class Answer:
    """A kernel's answer for a batch; ``undecided`` rows are for the per-row functions."""

    values: pa.Array
    undecided: np.ndarray | None = None


_Spans = tuple[np.ndarray, np.ndarray, np.ndarray]
"""Rows, and the start and end in the batch's bytes of a value found in each."""


def _field_spans(
    layout: _Layout, key: str, by_index: bool
) -> tuple[_Spans, np.ndarray | None] | None:
    """Where ``->`` finds its value in each row, and the rows left to the per-row path."""
    if not by_index:
        if len(key.encode()) > _MAX_PATTERN:
            return None
        return _key_values(layout, key), None
    try:
        index = int(key)
    except ValueError:
        return None
    if abs(index) >= 2**31:
        return None
    # jsonb indexes a scalar as a one-element array: those rows go row by row.
    scalar = layout.valid & ~layout.first_byte("[") & ~layout.first_byte("{")
    return _elements(layout, index), scalar if scalar.any() else None


def field(docs: pa.Array, key: str, by_index: bool) -> Answer | None:
    """``->`` of a constant key or index: the value's jsonb text, NULL where there is none."""
    layout = _layout(docs)
    found = None if layout is None else _field_spans(layout, key, by_index)
    if layout is None or found is None:
        return None
    (rows, starts, ends), undecided = found
    return Answer(_text_array(layout, rows, starts, ends), undecided)


def field_text(docs: pa.Array, key: str, by_index: bool) -> Answer | None:
    """``->>``: as ``field``, a string unquoted and JSON null as NULL.  A string with an
    escape in it is left to the per-row functions."""
    layout = _layout(docs)
    found = None if layout is None else _field_spans(layout, key, by_index)
    if layout is None or found is None:
        return None
    (rows, starts, ends), undecided = found
    first = layout.data[starts] if len(starts) else np.zeros(0, np.uint8)
    null = (ends - starts == 4) & (first == ord("n"))
    rows, starts, ends, first = rows[~null], starts[~null], ends[~null], first[~null]
    quoted = first == ord('"')
    starts = starts + quoted
    ends = ends - quoted
    slashes = layout.backslashes
    escaped = quoted & (np.searchsorted(slashes, ends) > np.searchsorted(slashes, starts))
    if escaped.any():
        more = np.zeros(len(layout.starts), bool)
        more[rows[escaped]] = True
        undecided = more if undecided is None else undecided | more
    return Answer(_text_array(layout, rows, starts, ends), undecided)


def _starting(data: np.ndarray, starts: np.ndarray, ends: np.ndarray, text: bytes) -> np.ndarray:
    """Which byte ranges begin with ``text``."""
    hit = np.flatnonzero(ends - starts >= len(text))
    for i, byte in enumerate(text):  # the ranges thin out byte by byte
        if not len(hit):
            break
        hit = hit[data[starts[hit] + i] == byte]
    found = np.zeros(len(starts), bool)
    found[hit] = True
    return found


def _only_zeros(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which byte ranges hold nothing but ``0`` digits (an empty one does)."""
    offsets, digits = _strings(data, starts, ends)
    wrong = np.zeros(len(digits) + 1, np.int64)
    np.cumsum(np.frombuffer(digits, np.uint8) != ord("0"), out=wrong[1:])
    return wrong[offsets[1:]] == wrong[offsets[:-1]]


def _number_equal(
    data: np.ndarray, starts: np.ndarray, ends: np.ndarray, value: Decimal
) -> np.ndarray | None:
    """Which jsonb number texts equal ``value`` (``1`` is ``1.0`` is ``1.00``); None when
    ``value`` has no plain text."""
    if not value.is_finite():
        return None
    text = format(value.copy_abs(), "f")  # abs() would round to the context's precision
    if len(text) > _MAX_PATTERN:
        return None
    whole, _, fraction = text.partition(".")
    fraction = fraction.rstrip("0")
    sign = "-" if value < 0 and not value.is_zero() else ""
    prefix = f"{sign}{whole}.{fraction}" if fraction else f"{sign}{whole}"
    equal = _starting(data, starts, ends, prefix.encode())
    rest = starts + len(prefix)
    if not fraction:  # nothing more, or a point and zeros
        more = equal & (ends > rest)
        point = np.zeros(len(starts), bool)
        point[more] = (data[rest[more]] == ord(".")) & (ends[more] - rest[more] >= 2)
        equal &= ~more | point
        rest = rest + more
    check = np.flatnonzero(equal & (ends > rest))
    equal[check] = _only_zeros(data, rest[check], ends[check])
    return equal


def _equal(layout: _Layout, starts: np.ndarray, ends: np.ndarray, scalar: Any) -> np.ndarray | None:
    """Which values (byte ranges) equal a scalar by jsonb's rules (numbers by value); None
    for a container."""
    if isinstance(scalar, Decimal):
        return _number_equal(layout.data, starts, ends, scalar)
    if isinstance(scalar, (dict, list)):
        return None
    if scalar is None:
        text = "null"
    elif isinstance(scalar, bool):
        text = "true" if scalar else "false"
    else:
        text = json.dumps(scalar, ensure_ascii=False)
    raw = text.encode()
    return (ends - starts == len(raw)) & _starting(layout.data, starts, ends, raw)


def contains(docs: pa.Array, needle: Any) -> Answer | None:
    """``@>`` of a constant object whose values are scalars (each pair at the top level with
    an equal value), or of an array of scalars or a scalar (each an element of a top-level
    array; a scalar also equals a scalar document)."""
    if isinstance(needle, dict):
        if any(isinstance(v, (dict, list)) for v in needle.values()):
            return None
        layout = _layout(docs)
        return None if layout is None else _contains_pairs(layout, needle)
    scalar = not isinstance(needle, list)
    elements = [needle] if scalar else needle
    if any(isinstance(e, (dict, list)) for e in elements):
        return None
    layout = _layout(docs)
    if layout is None:
        return None
    rows, starts, ends = _all_elements(layout)
    held = layout.first_byte("[")
    for element in elements:
        equal = _equal(layout, starts, ends, element)
        if equal is None:
            return None
        found = np.zeros(len(layout.starts), bool)
        found[rows[equal]] = True
        held &= found
    if scalar:
        same = _equal(layout, layout.starts, layout.ends, needle)
        if same is None:
            return None
        held |= same & layout.valid & ~layout.first_byte("[") & ~layout.first_byte("{")
    return Answer(_booleans(held, layout.valid))


def _contains_pairs(layout: _Layout, needle: dict[str, Any]) -> Answer | None:
    held = layout.first_byte("{")
    for key, value in needle.items():
        if len(key.encode()) > _MAX_PATTERN:
            return None
        rows, starts, ends = _key_values(layout, key)
        equal = _equal(layout, starts, ends, value)
        if equal is None:
            return None
        found = np.zeros(len(layout.starts), bool)
        found[rows[equal]] = True
        held &= found
    return Answer(_booleans(held, layout.valid))


def exists(docs: pa.Array, key: str) -> Answer | None:
    """``?`` of a constant key: a top-level key of an object, a string element of an array,
    or the string itself."""
    quoted = json.dumps(key, ensure_ascii=False).encode()
    if len(quoted) > _MAX_PATTERN:
        return None
    layout = _layout(docs)
    if layout is None:
        return None
    count = len(layout.starts)
    answer = np.zeros(count, bool)
    rows, _, _ = _key_values(layout, key)
    answer[rows] = True
    found = _find(layout, quoted)
    after = found + len(quoted)
    element = (after < len(layout.data)) & np.isin(
        layout.data[np.minimum(after, max(len(layout.data) - 1, 0))],
        np.array([ord(","), ord("]")], np.uint8),
    )
    in_array = layout.rows_of(found[element])
    answer[in_array[layout.first_byte("[")[in_array]]] = True
    whole = pc.equal(docs, quoted.decode())
    answer |= np.asarray(pc.fill_null(whole, False).to_numpy(zero_copy_only=False), bool)
    return Answer(_booleans(answer, layout.valid))


def _booleans(values: np.ndarray, valid: np.ndarray) -> pa.Array:
    return pa.array(values, pa.bool_(), mask=~valid)
