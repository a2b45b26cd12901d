"""The grammar of SECURITY LABEL, the statement pg_dump writes nyala's storage layout as.

``SECURITY LABEL [FOR provider] ON {TABLE [schema.]t | COLUMN [schema.]t.c} IS {'label' | NULL}``;
other object kinds are refused by the statement's runner, not here.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from sql.frontend.statements import SecurityLabelStatement
from storage.errors import FeatureNotSupported, InvalidSchemaName, SqlSyntaxError

_NAMES = (TokenType.VAR, TokenType.IDENTIFIER)


def _error(sql: str, token: Token | None) -> SqlSyntaxError:
    if token is None:
        return SqlSyntaxError("syntax error at end of input", position=len(sql) + 1)
    return SqlSyntaxError(f'syntax error at or near "{token.text}"', position=token.start + 1)


def _name(token: Token) -> str:
    return token.text if token.token_type is TokenType.IDENTIFIER else token.text.lower()


def parse(sql: str, tokens: list[Token]) -> SecurityLabelStatement | None:
    """The statement, or None when ``tokens`` do not start with SECURITY LABEL."""
    if len(tokens) < 2 or tokens[1].text.lower() != "label":
        return None
    at = 2
    provider = ""

    def token(i: int) -> Token | None:
        return tokens[i] if i < len(tokens) else None

    if (t := token(at)) is not None and t.token_type is TokenType.FOR:
        name = token(at + 1)
        if name is None or name.token_type not in (*_NAMES, TokenType.STRING):
            raise _error(sql, name)
        provider = name.text if name.token_type is TokenType.STRING else _name(name)
        at += 2
    if (t := token(at)) is None or t.token_type is not TokenType.ON:
        raise _error(sql, t)
    kind = token(at + 1)
    if kind is None:
        raise _error(sql, kind)
    at += 2
    parts: list[str] = []
    while (t := token(at)) is not None and t.token_type in _NAMES:
        parts.append(_name(t))
        at += 1
        if (t := token(at)) is not None and t.token_type is TokenType.DOT:
            at += 1
            continue
        break
    if not parts:
        raise _error(sql, token(at))
    if (t := token(at)) is None or t.token_type is not TokenType.IS:
        raise _error(sql, t)
    value = token(at + 1)
    if value is None or value.token_type not in (TokenType.STRING, TokenType.NULL):
        raise _error(sql, value)
    if at + 2 < len(tokens):
        raise _error(sql, tokens[at + 2])
    label = value.text if value.token_type is TokenType.STRING else None
    word = kind.text.lower()
    if word not in ("table", "column"):
        raise FeatureNotSupported(f"SECURITY LABEL ON {kind.text.upper()} is not supported")
    if word == "column":
        if len(parts) < 2:
            raise SqlSyntaxError("column name must be qualified")
        parts, column = parts[:-1], parts[-1]
    else:
        column = ""
    if len(parts) > 2 or (len(parts) == 2 and parts[0] != "public"):
        raise InvalidSchemaName(f'schema "{parts[0]}" does not exist')
    return SecurityLabelStatement(provider, parts[-1], column, label)
