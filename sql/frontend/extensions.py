"""The grammar of CREATE EXTENSION and DROP EXTENSION, as monitoring tools and dumps send them.

``CREATE EXTENSION [IF NOT EXISTS] name [WITH] [SCHEMA s] [VERSION v] [CASCADE]``
and ``DROP EXTENSION [IF EXISTS] name [, ...] [CASCADE | RESTRICT]``; the
options only say where PostgreSQL would install the extension's objects.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from sql.frontend.statements import ExtensionStatement
from storage.errors import SqlSyntaxError

_NAMES = (TokenType.VAR, TokenType.IDENTIFIER, TokenType.STRING)
_CREATE_OPTIONS = {"schema", "version", "from"}


def _error(sql: str, token: Token | None) -> SqlSyntaxError:
    if token is None:
        return SqlSyntaxError("syntax error at end of input", position=len(sql) + 1)
    return SqlSyntaxError(f'syntax error at or near "{token.text}"', position=token.start + 1)


def _name(token: Token) -> str:
    return token.text if token.token_type is not TokenType.VAR else token.text.lower()


def _words(tokens: list[Token], at: int, *words: str) -> bool:
    return len(tokens) >= at + len(words) and all(
        t.text.lower() == w for t, w in zip(tokens[at:], words, strict=False)
    )


def is_extension_statement(tokens: list[Token]) -> bool:
    return len(tokens) > 1 and tokens[1].text.lower() == "extension"


def parse(sql: str, tokens: list[Token]) -> ExtensionStatement | None:
    """The statement, or None when ``tokens`` are not CREATE/DROP EXTENSION."""
    if not is_extension_statement(tokens):
        return None
    action = tokens[0].text.upper()
    if action not in ("CREATE", "DROP"):
        return None
    index = 2
    flag_words = ("if", "not", "exists") if action == "CREATE" else ("if", "exists")
    if_flag = _words(tokens, index, *flag_words)
    index += len(flag_words) if if_flag else 0
    names: list[str] = []
    while True:
        token = tokens[index] if index < len(tokens) else None
        if token is None or token.token_type not in _NAMES:
            raise _error(sql, token)
        names.append(_name(token))
        index += 1
        if action == "DROP" and index < len(tokens) and tokens[index].token_type is TokenType.COMMA:
            index += 1
            continue
        break
    rest = tokens[index:]
    if action == "CREATE":
        _check_create_options(sql, rest)
    elif rest and (len(rest) > 1 or rest[0].text.lower() not in ("cascade", "restrict")):
        raise _error(sql, rest[0])
    return ExtensionStatement(action=action, names=tuple(names), if_flag=if_flag)


def _check_create_options(sql: str, rest: list[Token]) -> None:
    index = 1 if rest and rest[0].text.lower() == "with" else 0
    while index < len(rest):
        word = rest[index].text.lower()
        if word == "cascade":
            index += 1
        elif word in _CREATE_OPTIONS and index + 1 < len(rest):
            if rest[index + 1].token_type not in _NAMES:
                raise _error(sql, rest[index + 1])
            index += 2
        else:
            raise _error(sql, rest[index] if word not in _CREATE_OPTIONS else None)
