"""The grammar of CREATE, ALTER and DROP ROLE (and USER).

Only what nyala enforces is kept: LOGIN, SUPERUSER, INHERIT and the password.
PostgreSQL's other role attributes (CREATEDB, CREATEROLE,
REPLICATION, BYPASSRLS, CONNECTION LIMIT, VALID UNTIL) are accepted and
ignored, so scripts written for PostgreSQL run.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from sql.frontend.statements import RoleStatement
from storage.errors import SqlSyntaxError

_FLAGS = {
    "superuser": ("superuser", True),
    "nosuperuser": ("superuser", False),
    "login": ("login", True),
    "nologin": ("login", False),
    "inherit": ("inherit", True),
    "noinherit": ("inherit", False),
}
_IGNORED = {
    "createdb", "nocreatedb", "createrole", "nocreaterole", "replication", "noreplication",
    "bypassrls", "nobypassrls",
}  # fmt: skip
_STRINGS = (TokenType.STRING, TokenType.NATIONAL_STRING, TokenType.BYTE_STRING)


def is_role_statement(tokens: list[Token]) -> bool:
    if len(tokens) < 2:
        return False
    return tokens[0].text.lower() in ("create", "alter", "drop") and tokens[1].text.lower() in (
        "role",
        "user",
    )


def _error(token: Token | None, sql: str) -> SqlSyntaxError:
    if token is None:
        return SqlSyntaxError("syntax error at end of input", position=len(sql) + 1)
    return SqlSyntaxError(f'syntax error at or near "{token.text}"', position=token.start + 1)


def _role_name(token: Token, sql: str) -> str:
    if token.token_type is TokenType.IDENTIFIER:
        return token.text
    if token.token_type in _STRINGS or not token.text[:1].isalpha() and token.text[:1] != "_":
        raise _error(token, sql)
    return token.text.lower()


def parse(sql: str, tokens: list[Token]) -> RoleStatement:
    action = tokens[0].text.upper()
    is_user = tokens[1].text.lower() == "user"
    rest = tokens[2:]
    if action == "DROP":
        if_exists = False
        if len(rest) >= 2 and [t.text.lower() for t in rest[:2]] == ["if", "exists"]:
            if_exists, rest = True, rest[2:]
        names = []
        expect_name = True
        for token in rest:
            if expect_name:
                names.append(_role_name(token, sql))
            elif token.token_type is not TokenType.COMMA:
                raise _error(token, sql)
            expect_name = not expect_name
        if expect_name:
            raise _error(None, sql)
        return RoleStatement("DROP", names, if_exists=if_exists)
    if not rest:
        raise _error(None, sql)
    name = _role_name(rest[0], sql)
    statement = RoleStatement(action, [name])
    if action == "CREATE":
        statement.attributes["login"] = is_user
    _parse_attributes(sql, rest[1:], statement)
    return statement


def _parse_attributes(sql: str, tokens: list[Token], statement: RoleStatement) -> None:
    index = 0
    if tokens and tokens[0].text.lower() == "with":
        index = 1
    while index < len(tokens):
        token = tokens[index]
        word = token.text.lower()
        index += 1
        if word in _FLAGS:
            key, value = _FLAGS[word]
            statement.attributes[key] = value
        elif word in _IGNORED:
            continue
        elif word in ("encrypted", "password"):
            if word == "encrypted":
                if index >= len(tokens) or tokens[index].text.lower() != "password":
                    raise _error(tokens[index] if index < len(tokens) else None, sql)
                index += 1
            if index >= len(tokens):
                raise _error(None, sql)
            value_token = tokens[index]
            index += 1
            if value_token.token_type is TokenType.NULL:
                statement.attributes["password"] = None
            elif value_token.token_type in _STRINGS:
                statement.attributes["password"] = value_token.text
            else:
                raise _error(value_token, sql)
        elif word == "connection":
            if index + 1 >= len(tokens) or tokens[index].text.lower() != "limit":
                raise _error(tokens[index] if index < len(tokens) else None, sql)
            index += 2
        elif word == "valid":
            if index + 1 >= len(tokens) or tokens[index].text.lower() != "until":
                raise _error(tokens[index] if index < len(tokens) else None, sql)
            index += 2
        else:
            raise _error(token, sql)
