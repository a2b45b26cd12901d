"""PostgreSQL's ``regexp_matches``, for the DuckDB that runs user queries.

``nyf_regexp_matches(string, pattern, flags)`` returns the matches as a list of ``text[]``
(the capture groups of each match, or the whole match when the pattern has none); the
planner (``planner.string_functions``) unnests it into PostgreSQL's rows.  Without flag
``g`` only the first match counts.  Patterns are Python's ``re`` dialect, which agrees with
PostgreSQL's advanced regular expressions on the common syntax.
"""

from __future__ import annotations

import functools
import re

import duckdb

from sql.planner.string_functions import REGEXP_MATCHES_FUNCTION
from storage.errors import InvalidParameterValue, InvalidRegularExpression

_FLAGS = {
    "i": re.IGNORECASE,
    "c": 0,
    "n": re.MULTILINE,
    "m": re.MULTILINE,
    "s": 0,
    "x": re.VERBOSE,
    "g": 0,
    "q": 0,
}


@functools.lru_cache(maxsize=256)
def _compile(pattern: str, flags: str) -> re.Pattern[str]:
    bits = 0
    for flag in flags:
        if flag not in _FLAGS:
            raise InvalidParameterValue(f'invalid regular expression option: "{flag}"')
        bits |= _FLAGS[flag]
    if "q" in flags:  # the pattern is a literal string
        pattern = re.escape(pattern)
    try:
        return re.compile(pattern, bits)
    except re.error as exc:
        raise InvalidRegularExpression(f"invalid regular expression: {exc}") from None


def regexp_matches(
    string: str | None, pattern: str | None, flags: str | None
) -> list[list[str | None]] | None:
    """Each match's capture groups (or the whole match), as PostgreSQL's ``regexp_matches``.

    Example:
        >>> regexp_matches("foobarbequebaz", "ba.", "g")
        [['bar'], ['baz']]
    """
    if string is None or pattern is None or flags is None:
        return []
    compiled = _compile(pattern, flags)
    found = compiled.finditer(string) if "g" in flags else filter(None, [compiled.search(string)])
    return [list(m.groups()) if compiled.groups else [m.group(0)] for m in found]


def register(duck: duckdb.DuckDBPyConnection) -> None:
    """Create ``nyf_regexp_matches`` on ``duck``."""
    duck.create_function(  # type: ignore[call-overload]  # DuckDB's stubs name only types
        REGEXP_MATCHES_FUNCTION,
        regexp_matches,
        ["VARCHAR", "VARCHAR", "VARCHAR"],
        "VARCHAR[][]",
        null_handling="special",
    )
