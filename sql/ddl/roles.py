"""CREATE, ALTER and DROP ROLE (and USER): parse them and apply them to the durable role store.

Only what nyala enforces is kept: LOGIN, SUPERUSER and the password (stored as
a SCRAM-SHA-256 verifier by ``catalog.roles``).  PostgreSQL's other role
attributes (CREATEDB, CREATEROLE, INHERIT, REPLICATION, BYPASSRLS, CONNECTION
LIMIT, VALID UNTIL) are accepted and ignored, so scripts written for
PostgreSQL run.  As in PostgreSQL, only a superuser may create, drop or change
roles, and any role may change its own password.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot.tokens import Token, TokenType

from catalog.roles import Role, RoleStore, password_verifier
from sql.common.result import Result
from storage.errors import (
    DbError,
    DuplicateObject,
    FeatureNotSupported,
    InsufficientPrivilege,
    ObjectInUse,
    SqlSyntaxError,
    UndefinedObject,
)

_FLAGS = {
    "superuser": ("superuser", True),
    "nosuperuser": ("superuser", False),
    "login": ("login", True),
    "nologin": ("login", False),
}
_IGNORED = {
    "createdb", "nocreatedb", "createrole", "nocreaterole", "inherit", "noinherit",
    "replication", "noreplication", "bypassrls", "nobypassrls",
}  # fmt: skip
_STRINGS = (TokenType.STRING, TokenType.NATIONAL_STRING, TokenType.BYTE_STRING)


@dataclass(slots=True)
class RoleStatement:
    """A parsed CREATE/ALTER/DROP ROLE or USER."""

    action: str
    names: list[str]
    attributes: dict[str, object] = field(default_factory=dict)
    if_exists: bool = False


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


def parse_role_statement(sql: str, tokens: list[Token]) -> RoleStatement:
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


def execute_role_statement(
    statement: RoleStatement, store: RoleStore | None, current_user: str
) -> Result:
    """Apply the statement as ``current_user``; returns its command tag and notices."""
    if store is None:
        raise FeatureNotSupported("roles are not available in this database")
    current = store.get(current_user)
    is_superuser = current is not None and current.superuser
    if statement.action == "CREATE":
        return _create(statement, store, is_superuser)
    if statement.action == "ALTER":
        return _alter(statement, store, current_user, is_superuser)
    return _drop(statement, store, current_user, is_superuser)


def _create(statement: RoleStatement, store: RoleStore, is_superuser: bool) -> Result:
    if not is_superuser:
        raise InsufficientPrivilege("permission denied to create role")
    name = statement.names[0]
    if store.get(name) is not None:
        raise DuplicateObject(f'role "{name}" already exists')
    attributes = statement.attributes
    password = attributes.get("password")
    role = Role(
        name,
        login=bool(attributes.get("login", False)),
        superuser=bool(attributes.get("superuser", False)),
        password=password_verifier(str(password)) if password else None,
    )
    store.put(role)
    return Result(command_tag="CREATE ROLE")


def _alter(
    statement: RoleStatement, store: RoleStore, current_user: str, is_superuser: bool
) -> Result:
    name = statement.names[0]
    role = store.get(name)
    if role is None:
        raise UndefinedObject(f'role "{name}" does not exist')
    attributes = statement.attributes
    only_password = set(attributes) <= {"password"}
    if not is_superuser and not (only_password and name == current_user):
        raise InsufficientPrivilege("permission denied")
    changes: dict[str, object] = {}
    if "login" in attributes:
        changes["login"] = bool(attributes["login"])
    if "superuser" in attributes:
        changes["superuser"] = bool(attributes["superuser"])
    if "password" in attributes:
        password = attributes["password"]
        changes["password"] = password_verifier(str(password)) if password else None
    store.put(_replace(role, changes))
    return Result(command_tag="ALTER ROLE")


def _replace(role: Role, changes: dict[str, object]) -> Role:
    values = {
        "name": role.name,
        "login": role.login,
        "superuser": role.superuser,
        "password": role.password,
    }
    values.update(changes)
    return Role(**values)  # type: ignore[arg-type]


def _drop(
    statement: RoleStatement, store: RoleStore, current_user: str, is_superuser: bool
) -> Result:
    if not is_superuser:
        raise InsufficientPrivilege("permission denied to drop role")
    notices: list[DbError] = []
    for name in statement.names:
        if name == current_user:
            raise ObjectInUse("current user cannot be dropped")
        if store.get(name) is None:
            if statement.if_exists:
                notice = UndefinedObject(f'role "{name}" does not exist, skipping')
                notice.severity = "NOTICE"
                notices.append(notice)
                continue
            raise UndefinedObject(f'role "{name}" does not exist')
    for name in statement.names:
        store.drop(name)
    return Result(command_tag="DROP ROLE", notices=notices)
