"""``pg_get_keywords()``: PostgreSQL 15's SQL key words, as pgjdbc's getSQLKeywords reads them.

The list (``pg_keywords.txt``: word, category code, whether it can be a bare column label)
is PostgreSQL 15's own, taken from its ``pg_get_keywords()``; the descriptions follow
from the codes as PostgreSQL words them.
"""

from __future__ import annotations

import functools
from pathlib import Path

_CATEGORIES = {
    "U": "unreserved",
    "C": "unreserved (cannot be function or type name)",
    "T": "reserved (can be function or type name)",
    "R": "reserved",
}


@functools.cache
def _keywords() -> list[tuple[str, str, bool]]:
    lines = (Path(__file__).parent / "pg_keywords.txt").read_text().splitlines()
    rows = []
    for line in lines:
        word, code, bare = line.split()
        rows.append((word, code, bare == "t"))
    return rows


def keywords_body() -> str:
    """The body of the table macro answering ``pg_get_keywords()``."""
    values = ", ".join(
        f"('{word}', '{code}', {'true' if bare else 'false'}, '{_CATEGORIES[code]}', "
        f"'{'can be bare label' if bare else 'requires AS'}')"
        for word, code, bare in _keywords()
    )
    return f"SELECT * FROM (VALUES {values}) AS k(word, catcode, barelabel, catdesc, baredesc)"
