"""Catalog function calls over columns inside a write, computed per distinct argument tuple.

A write runs on the user DuckDB, which has no catalog functions.  ``pg_size_pretty(n)`` or
``has_table_privilege(name_col, 'select')`` there becomes ``nyf_catalog_call(session,
call, args)``: ``args`` is the call's column arguments as text, and the session that planned
the write (``register``) evaluates each distinct argument tuple once, by one catalog query
per batch of new tuples, and answers its value as text, which the write casts back to the
call's type.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence

import duckdb
import pyarrow as pa

FUNCTION = "nyf_catalog_call"

Evaluator = Callable[[str, Sequence[tuple[str | None, ...]]], list[str | None]]
"""Given a call's template and distinct argument tuples, each tuple's value as text."""

_EVALUATORS: dict[int, Evaluator] = {}
_LOCK = threading.Lock()
_TOKENS = itertools.count(1)


def register_session(evaluate: Evaluator) -> int:
    """Make ``evaluate`` answer calls naming the returned token, until ``unregister``."""
    token = next(_TOKENS)
    _EVALUATORS[token] = evaluate
    return token


def unregister(token: int) -> None:
    _EVALUATORS.pop(token, None)


def _call(tokens: pa.Array, calls: pa.Array, args: pa.Array) -> pa.Array:
    out: list[str | None] = []
    token_values, call_values, arg_values = tokens.to_pylist(), calls.to_pylist(), args.to_pylist()
    pending: dict[tuple[int, str], dict[tuple[str | None, ...], str | None]] = {}
    keys = []
    for token, call, row in zip(token_values, call_values, arg_values, strict=True):
        key = tuple(row or ())
        pending.setdefault((token, call), {})[key] = None
        keys.append(key)
    answers: dict[tuple[int, str], dict[tuple[str | None, ...], str | None]] = {}
    with _LOCK:  # DuckDB may run chunks on two threads; the session evaluates one at a time
        for (token, call), distinct in pending.items():
            evaluate = _EVALUATORS.get(token)
            if evaluate is None:
                raise RuntimeError("a catalog call ran outside the write that planned it")
            tuples = list(distinct)
            answers[(token, call)] = dict(zip(tuples, evaluate(call, tuples), strict=True))
    for token, call, key in zip(token_values, call_values, keys, strict=True):
        out.append(answers[(token, call)][key])
    return pa.array(out, pa.string())


def register(duck: duckdb.DuckDBPyConnection) -> None:
    """Create ``nyf_catalog_call`` on the user DuckDB."""
    duck.create_function(  # type: ignore[call-overload]  # DuckDB's stubs name only types
        FUNCTION,
        _call,
        ["BIGINT", "VARCHAR", "VARCHAR[]"],
        "VARCHAR",
        type="arrow",
        null_handling="special",
        side_effects=True,
    )
