"""Turn SQL text into typed statements, with PostgreSQL-style syntax errors.

The text is tokenized once and split at top-level semicolons, so every
statement keeps character offsets into the whole query string: ErrorResponse
positions (the P field) point at the right place even in the third statement
of a multi-statement Query.  sqlglot's ParseError and TokenError become
SqlSyntaxError (42601) with that position.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from sqlglot.errors import ParseError
from sqlglot.tokens import Token, TokenType

from sql.common import names
from sql.frontend import utility
from sql.frontend.dialect import DIALECT, parse_statement, tokenize
from sql.frontend.statements import ParsedStatement, Utility
from storage.errors import DbError, FeatureNotSupported, SqlSyntaxError

__all__ = [
    "DIALECT",
    "ParsedStatement",
    "parse",
    "parse_tokens",
    "parse_utility",
    "split",
    "tokenize",
    "truncation_notices",
]

# sqlglot logs a warning for each statement it falls back to parsing as a Command;
# those are handled (or refused with 0A000) by the session, so the warning is noise.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


def _line_col_to_position(sql: str, line: int, col: int, highlight: str) -> int:
    """1-based character position of a token that ends at (line, col), as sqlglot reports."""
    lines = sql.split("\n")
    offset = sum(len(text) + 1 for text in lines[: max(line - 1, 0)])
    return max(offset + col - len(highlight), 0) + 1


def _syntax_error(sql: str, error: ParseError) -> SqlSyntaxError:
    if not error.errors:
        return SqlSyntaxError(f"syntax error: {error}")
    first = error.errors[0]
    highlight = first.get("highlight") or ""
    position = _line_col_to_position(sql, first.get("line", 1), first.get("col", 1), highlight)
    near = highlight or "end of input"
    message = f'syntax error at or near "{near}"' if highlight else "syntax error at end of input"
    return SqlSyntaxError(message, detail=first.get("description"), position=position)


def split(sql: str) -> list[list[Token]]:
    """Split tokens at top-level semicolons; empty statements are dropped."""
    chunks: list[list[Token]] = [[]]
    for token in tokenize(sql):
        if token.token_type is TokenType.SEMICOLON:
            chunks.append([])
        else:
            chunks[-1].append(token)
    return [c for c in chunks if c]


def parse_tokens(
    sql: str, tokens: list[Token], admit: Callable[[], None] | None = None
) -> ParsedStatement:
    """One statement as a typed statement; ``admit`` runs before parsing any statement a
    failed transaction block refuses (see ``NyalaParser.admit``)."""
    try:
        return parse_statement(sql, tokens, admit)
    except ParseError as exc:
        if tokens and tokens[0].token_type is TokenType.MERGE:
            # Valid MERGE that sqlglot cannot read is as unsupported as the MERGE it can.
            raise FeatureNotSupported("statement is not supported: MERGE") from exc
        raise _syntax_error(sql, exc) from exc


def parse_utility(sql: str, tokens: list[Token]) -> ParsedStatement[Utility] | None:
    """The statement if it is a utility statement, else None: a Query's transaction control
    is read before any of its statements runs."""
    statement = utility.parse(tokens)
    if statement is None:
        return None
    start, end = tokens[0].start, tokens[-1].end + 1
    return ParsedStatement(statement, sql[start:end], start, tuple(tokens))


def truncation_notices(tokens: list[Token]) -> list[DbError]:
    """PostgreSQL's NOTICE for each identifier among ``tokens`` cut to 63 bytes."""
    return list(
        names.truncation_notices(
            [
                (t.text, t.token_type is TokenType.IDENTIFIER)
                for t in tokens
                if len(t.text) >= names.NAMEDATALEN // 4
                and t.token_type in (TokenType.VAR, TokenType.IDENTIFIER)
            ]
        )
    )


def parse(sql: str) -> list[ParsedStatement]:
    """Parse every statement in ``sql``; raise SqlSyntaxError at the first bad one."""
    return [parse_tokens(sql, chunk) for chunk in split(sql)]
