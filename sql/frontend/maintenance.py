"""The grammar of VACUUM and ANALYZE: ``VACUUM [(options)] [FULL] [FREEZE] [VERBOSE] [ANALYZE] [table [(cols)], ...]``.

Both are written by pgbench and pg_dump's users after a load; the options
only steer PostgreSQL's heap and statistics work, so the statement keeps the
tables it names, which must exist.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from sql.frontend.statements import MaintenanceStatement
from storage.errors import SqlSyntaxError

KEYWORDS = ("vacuum", "analyze", "analyse")
_VACUUM_WORDS = {"full", "freeze", "verbose", "analyze", "analyse"}
_ANALYZE_WORDS = {"verbose"}


def _error(sql: str, token: Token | None) -> SqlSyntaxError:
    if token is None:
        return SqlSyntaxError("syntax error at end of input", position=len(sql) + 1)
    return SqlSyntaxError(f'syntax error at or near "{token.text}"', position=token.start + 1)


def _skip_parenthesised(sql: str, tokens: list[Token], index: int) -> int:
    depth = 0
    while index < len(tokens):
        kind = tokens[index].token_type
        depth += (kind is TokenType.L_PAREN) - (kind is TokenType.R_PAREN)
        index += 1
        if depth == 0:
            return index
    raise _error(sql, None)


def _name(token: Token) -> str:
    return token.text if token.token_type is TokenType.IDENTIFIER else token.text.lower()


def parse(sql: str, head: Token, rest: list[Token]) -> MaintenanceStatement:
    """The statement ``head`` (VACUUM or ANALYZE) and ``rest`` (its tokens after it) spell."""
    kind = "VACUUM" if head.text.lower() == "vacuum" else "ANALYZE"
    words = _VACUUM_WORDS if kind == "VACUUM" else _ANALYZE_WORDS
    index = 0
    if index < len(rest) and rest[index].token_type is TokenType.L_PAREN:
        index = _skip_parenthesised(sql, rest, index)
    while index < len(rest) and rest[index].text.lower() in words:
        index += 1
    tables: list[str] = []
    while index < len(rest):
        token = rest[index]
        if (
            token.token_type not in (TokenType.VAR, TokenType.IDENTIFIER)
            and not token.text.isidentifier()
        ):
            raise _error(sql, token)
        name = _name(token)
        index += 1
        if index + 1 < len(rest) and rest[index].token_type is TokenType.DOT:
            name = _name(rest[index + 1])  # the schema is public, as for every table
            index += 2
        if index < len(rest) and rest[index].token_type is TokenType.L_PAREN:
            index = _skip_parenthesised(sql, rest, index)
        tables.append(name)
        if index < len(rest):
            if rest[index].token_type is not TokenType.COMMA or index + 1 == len(rest):
                raise _error(sql, rest[index])
            index += 1
    return MaintenanceStatement(kind=kind, tables=tuple(tables))
