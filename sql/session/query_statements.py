"""QueryStatement: one statement of a simple Query, as read from the Query's text alone.

Splitting a Query, reading its transaction control and finding its
identifiers PostgreSQL truncates depend on the text and nothing else, so a
session keeps them per Query string (``PlanCache.split``) and a repeated
Query (psql's ``\\d``, a driver without prepare) does none of it again.
What is kept is shared between runs and must not be changed.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sql.frontend import parser
from sql.frontend.statements import ParsedStatement, Utility
from storage.errors import DbError


class QueryStatement(NamedTuple):
    tokens: list[Any]
    utility: ParsedStatement[Utility] | None
    """The statement, when it is transaction control, SET, SHOW ... (``parse_utility``)."""
    notices: tuple[DbError, ...]
    """PostgreSQL's NOTICE for each identifier cut to 63 bytes."""


def split_query(sql: str) -> list[QueryStatement]:
    """Every statement of the Query ``sql`` (SqlSyntaxError for text that does not tokenize)."""
    return [
        QueryStatement(
            chunk, parser.parse_utility(sql, chunk), tuple(parser.truncation_notices(chunk))
        )
        for chunk in parser.split(sql)
    ]
