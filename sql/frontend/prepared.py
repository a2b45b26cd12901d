"""The grammar of SQL-level prepared statements: PREPARE name [(types)] AS statement and
EXECUTE name [(arguments)] (DEALLOCATE is a utility statement)."""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from sql.frontend.statements import ExecuteStatement, PrepareStatement
from storage.errors import SqlSyntaxError

KEYWORDS = ("prepare", "execute")


def _is_name(token: Token) -> bool:
    if token.token_type is TokenType.IDENTIFIER:
        return bool(token.text)
    return token.token_type is TokenType.VAR or token.text.isidentifier()


def _name(token: Token) -> str:
    return token.text if token.token_type is TokenType.IDENTIFIER else token.text.lower()


def parse(
    sql: str, tokens: list[Token], rest: list[Token]
) -> PrepareStatement | ExecuteStatement | None:
    """The statement ``tokens`` spell (``rest``: the tokens after the keyword, read again),
    or None for PREPARE TRANSACTION, which is a utility statement."""
    verb = tokens[0].text.lower()
    if verb == "prepare" and rest and rest[0].text.lower() == "transaction":
        return None
    if not rest or not _is_name(rest[0]):
        near = rest[0].text if rest else verb.upper()
        raise SqlSyntaxError(f'syntax error at or near "{near}"')
    name = _name(rest[0])
    groups, after = _parenthesised(sql, rest[1:])
    if verb == "execute":
        if after:
            raise SqlSyntaxError(f'syntax error at or near "{after[0].text}"')
        return ExecuteStatement(name=name, arguments=tuple(groups))
    if not after or after[0].token_type is TokenType.IDENTIFIER or after[0].text.lower() != "as":
        near = after[0].text if after else "end of input"
        raise SqlSyntaxError(f'syntax error at or near "{near}"')
    if len(after) < 2:
        raise SqlSyntaxError("syntax error at end of input")
    end = tokens[-1].end + 1
    query = sql[after[1].start : end].strip()
    return PrepareStatement(
        name=name, types=tuple(groups), query=query, text=sql[tokens[0].start : end].strip()
    )


def _parenthesised(sql: str, tokens: list[Token]) -> tuple[list[str], list[Token]]:
    """The texts of a leading ``( a, b(1, 2), ... )`` list split at its top-level commas,
    and the tokens after it."""
    if not tokens or tokens[0].token_type is not TokenType.L_PAREN:
        return [], tokens
    depth = 0
    items: list[str] = []
    start = None
    for index, token in enumerate(tokens):
        if token.token_type is TokenType.L_PAREN:
            depth += 1
            if depth == 1:
                start = None
                continue
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                if start is None:
                    raise SqlSyntaxError('syntax error at or near ")"')
                items.append(sql[start : tokens[index - 1].end + 1].strip())
                return items, tokens[index + 1 :]
        elif token.token_type is TokenType.COMMA and depth == 1:
            if start is None:
                raise SqlSyntaxError('syntax error at or near ","')
            items.append(sql[start : tokens[index - 1].end + 1].strip())
            start = None
            continue
        if start is None:
            start = token.start
    raise SqlSyntaxError("syntax error at end of input")
