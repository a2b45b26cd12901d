"""Turn SQL text into sqlglot statements, with PostgreSQL-style syntax errors.

The text is tokenized once and split at top-level semicolons, so every
statement keeps character offsets into the whole query string: ErrorResponse
positions (the P field) point at the right place even in the third statement
of a multi-statement Query.  sqlglot's ParseError and TokenError become
SqlSyntaxError (42601) with that position.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from sql.frontend.dialect import Nyala
from storage.errors import SqlSyntaxError

DIALECT = Nyala()

# sqlglot logs a warning for each statement it falls back to parsing as a Command;
# those are handled (or refused with 0A000) by the session, so the warning is noise.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


@dataclass(frozen=True, slots=True)
class ParsedStatement:
    """One statement: its AST, its own text, and where that text starts in the query string."""

    ast: exp.Expression
    text: str
    offset: int
    tokens: tuple[Token, ...]


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


def tokenize(sql: str) -> list[Token]:
    try:
        return DIALECT.tokenize(sql)
    except TokenError as exc:
        message = str(exc)
        if "'" in sql and message.startswith("Error tokenizing"):
            message = "unterminated quoted string"
        raise SqlSyntaxError(message, position=len(sql)) from exc


def split(sql: str) -> list[list[Token]]:
    """Split tokens at top-level semicolons; empty statements are dropped."""
    chunks: list[list[Token]] = [[]]
    for token in tokenize(sql):
        if token.token_type is TokenType.SEMICOLON:
            chunks.append([])
        else:
            chunks[-1].append(token)
    return [c for c in chunks if c]


def parse_tokens(sql: str, tokens: list[Token]) -> ParsedStatement:
    try:
        trees = DIALECT.parser().parse(tokens, sql)
    except ParseError as exc:
        raise _syntax_error(sql, exc) from exc
    trees = [t for t in trees if t is not None]
    if len(trees) != 1:
        raise SqlSyntaxError("syntax error", position=tokens[0].start + 1)
    start, end = tokens[0].start, tokens[-1].end + 1
    return ParsedStatement(trees[0], sql[start:end], start, tuple(tokens))


def parse(sql: str) -> list[ParsedStatement]:
    """Parse every statement in ``sql``; raise SqlSyntaxError at the first bad one."""
    return [parse_tokens(sql, chunk) for chunk in split(sql)]
