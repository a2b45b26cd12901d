"""The grammar of LOCK TABLE, which pg_dump sends for every table it dumps.

``LOCK [TABLE] [ONLY] name [*] [, ...] [IN lockmode MODE] [NOWAIT]``, with PostgreSQL's
eight lock modes.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from sql.common.names import fold
from sql.frontend.statements import LockStatement
from storage.errors import InvalidSchemaName, SqlSyntaxError

KEYWORDS = ("lock",)
MODES = (
    "ACCESS SHARE", "ROW SHARE", "ROW EXCLUSIVE", "SHARE UPDATE EXCLUSIVE", "SHARE",
    "SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE",
)  # fmt: skip


def _error(sql: str, tokens: list[Token], at: int) -> SqlSyntaxError:
    if at >= len(tokens):
        return SqlSyntaxError("syntax error at end of input", position=len(sql) + 1)
    token = tokens[at]
    return SqlSyntaxError(f'syntax error at or near "{token.text}"', position=token.start + 1)


def _word(tokens: list[Token], at: int) -> str:
    if at >= len(tokens) or tokens[at].token_type is TokenType.IDENTIFIER:
        return ""
    return tokens[at].text.lower()


def parse(sql: str, tokens: list[Token]) -> LockStatement:
    at = 1
    if _word(tokens, at) == "table":
        at += 1
    names: list[str] = []
    while True:
        if _word(tokens, at) == "only":
            at += 1
        parts: list[str] = []
        while True:
            if at >= len(tokens):
                raise _error(sql, tokens, at)
            token = tokens[at]
            if token.token_type is TokenType.IDENTIFIER:
                parts.append(token.text)
            elif token.text[:1].isalpha() or token.text[:1] == "_":
                parts.append(fold(token.text))
            else:
                raise _error(sql, tokens, at)
            at += 1
            if at < len(tokens) and tokens[at].token_type is TokenType.DOT:
                at += 1
                continue
            break
        if len(parts) > 2:
            raise _error(sql, tokens, at)
        if len(parts) == 2 and parts[0] != "public":
            raise InvalidSchemaName(f'schema "{parts[0]}" does not exist')
        names.append(parts[-1])
        if at < len(tokens) and tokens[at].token_type is TokenType.STAR:
            at += 1
        if at < len(tokens) and tokens[at].token_type is TokenType.COMMA:
            at += 1
            continue
        break
    mode = "ACCESS EXCLUSIVE"
    if _word(tokens, at) == "in":
        words = []
        at += 1
        while at < len(tokens) and _word(tokens, at) not in ("mode", ""):
            words.append(_word(tokens, at).upper())
            at += 1
        if _word(tokens, at) != "mode" or " ".join(words) not in MODES:
            raise _error(sql, tokens, at)
        mode = " ".join(words)
        at += 1
    nowait = _word(tokens, at) == "nowait"
    if nowait:
        at += 1
    if at < len(tokens):
        raise _error(sql, tokens, at)
    return LockStatement(tuple(names), mode, nowait)
