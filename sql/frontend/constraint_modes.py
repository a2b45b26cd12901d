"""The grammar of SET CONSTRAINTS: ``SET CONSTRAINTS {ALL | name [, ...]} {DEFERRED | IMMEDIATE}``."""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from sql.frontend.statements import SetConstraints
from storage.errors import SqlSyntaxError

KEYWORDS = ("set",)


def _error(sql: str, token: Token | None) -> SqlSyntaxError:
    if token is None:
        return SqlSyntaxError("syntax error at end of input", position=len(sql) + 1)
    return SqlSyntaxError(f'syntax error at or near "{token.text}"', position=token.start + 1)


def _name(token: Token) -> str:
    return token.text if token.token_type is TokenType.IDENTIFIER else token.text.lower()


def parse(sql: str, tokens: list[Token]) -> SetConstraints | None:
    """The statement ``tokens`` spell if they are SET CONSTRAINTS, else None."""
    if len(tokens) < 2 or tokens[1].text.lower() != "constraints":
        return None
    if len(tokens) < 4:
        raise _error(sql, None)
    mode = tokens[-1].text.lower()
    if mode not in ("deferred", "immediate"):
        raise _error(sql, tokens[-1])
    listed = tokens[2:-1]
    if (
        len(listed) == 1
        and listed[0].token_type is not TokenType.IDENTIFIER
        and (listed[0].text.lower() == "all")
    ):
        return SetConstraints((), mode == "deferred")
    names: list[str] = []
    index = 0
    while index < len(listed):
        token = listed[index]
        if index + 2 < len(listed) and listed[index + 1].token_type is TokenType.DOT:
            if _name(token) != "public":
                raise _error(sql, token)  # only the public schema exists
            index += 2
            token = listed[index]
        if token.token_type not in (TokenType.VAR, TokenType.IDENTIFIER) and not (
            token.text.isidentifier()
        ):
            raise _error(sql, token)
        names.append(_name(token))
        index += 1
        if index < len(listed):
            if listed[index].token_type is not TokenType.COMMA:
                raise _error(sql, listed[index])
            index += 1
    return SetConstraints(tuple(names), mode == "deferred")
