"""The grammar of GRANT and REVOKE: of privileges on tables and schemas, and of role membership.

``GRANT privileges ON [TABLE] t [, ...] | SEQUENCE s [, ...] | SCHEMA s [, ...] |
DATABASE d | ALL {TABLES | SEQUENCES} IN SCHEMA s
TO grantee [, ...] [WITH GRANT OPTION] [GRANTED BY role]`` and ``REVOKE [GRANT OPTION
FOR] privileges ON ... FROM grantee [, ...] [GRANTED BY role] [CASCADE | RESTRICT]``,
where a grantee is a role, PUBLIC, CURRENT_USER, SESSION_USER or CURRENT_ROLE;
``GRANT role [, ...] TO role [, ...] [WITH ADMIN OPTION] [GRANTED BY role]`` and
``REVOKE [ADMIN OPTION FOR] role [, ...] FROM role [, ...] [GRANTED BY role] [CASCADE |
RESTRICT]`` (a list of names not followed by ON).  A privilege on tables may name columns
(``SELECT (a, b)``); functions are refused
with 0A000 until they are kept.  ``ALTER TABLE t OWNER TO role``, ``ALTER DEFAULT
PRIVILEGES``, ``REASSIGN OWNED`` and ``DROP OWNED`` are read here too.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from sql.common.names import fold
from sql.frontend.statements import (
    DefaultPrivilegesStatement,
    GrantStatement,
    MembershipStatement,
    OwnedStatement,
    OwnerStatement,
)
from storage.errors import (
    FeatureNotSupported,
    InvalidGrantOperation,
    InvalidSchemaName,
    SqlSyntaxError,
)

KEYWORDS = ("grant", "revoke")
_PRIVILEGES = {
    "select", "insert", "update", "delete", "truncate", "references", "trigger",
    "usage", "create", "connect", "temporary", "temp", "execute", "all",
}  # fmt: skip
_SPECIAL_GRANTEES = ("current_user", "session_user", "current_role")


class _Reader:
    def __init__(self, sql: str, tokens: list[Token]) -> None:
        self.sql = sql
        self.tokens = tokens
        self.index = 0

    def peek(self, offset: int = 0) -> Token | None:
        at = self.index + offset
        return self.tokens[at] if at < len(self.tokens) else None

    def word(self, offset: int = 0) -> str:
        token = self.peek(offset)
        return token.text.lower() if token is not None else ""

    def error(self) -> SqlSyntaxError:
        token = self.peek()
        if token is None:
            return SqlSyntaxError("syntax error at end of input", position=len(self.sql) + 1)
        return SqlSyntaxError(f'syntax error at or near "{token.text}"', position=token.start + 1)

    def take(self) -> Token:
        token = self.peek()
        if token is None:
            raise self.error()
        self.index += 1
        return token

    def accept(self, *words: str) -> bool:
        if [self.word(i) for i in range(len(words))] == list(words):
            self.index += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.error()

    def name(self) -> str:
        token = self.take()
        if token.token_type is TokenType.IDENTIFIER:
            return token.text
        if token.token_type in (TokenType.STRING, TokenType.NUMBER) or not (
            token.text[:1].isalpha() or token.text[:1] == "_"
        ):
            self.index -= 1
            raise self.error()
        return fold(token.text)

    def comma(self) -> bool:
        token = self.peek()
        if token is not None and token.token_type is TokenType.COMMA:
            self.index += 1
            return True
        return False


def parse(sql: str, tokens: list[Token]) -> GrantStatement | MembershipStatement:
    reader = _Reader(sql, tokens)
    is_grant = reader.take().text.lower() == "grant"
    if _is_membership(tokens):
        return _membership(reader, is_grant)
    grant_option = not is_grant and reader.accept("grant", "option", "for")
    privileges, columns = _privileges(reader)
    if not reader.accept("on"):
        raise reader.error()
    kind, objects = _objects(reader)
    grantees, with_option, cascade = _grantees(reader, is_grant, "grant")
    return GrantStatement(
        is_grant, tuple(privileges), kind, tuple(objects), grantees,
        grant_option or with_option, cascade, tuple(columns),
    )  # fmt: skip


def _is_membership(tokens: list[Token]) -> bool:
    """Role membership names roles, then TO or FROM, with no ON before them."""
    for token in tokens[1:]:
        word = token.text.lower() if token.token_type is not TokenType.IDENTIFIER else ""
        if word == "on":
            return False
        if word in ("to", "from"):
            return True
    return False


def _membership(reader: _Reader, is_grant: bool) -> MembershipStatement:
    admin_option = not is_grant and reader.accept("admin", "option", "for")
    roles = [reader.name()]
    while reader.comma():
        roles.append(reader.name())
    grantees, with_option, cascade = _grantees(reader, is_grant, "admin")
    return MembershipStatement(
        is_grant, tuple(roles), grantees, admin_option or with_option, cascade
    )


def _grantees(reader: _Reader, is_grant: bool, option: str) -> tuple[tuple[str, ...], bool, bool]:
    """The tail GRANT and REVOKE share, of privileges and of roles alike: ``TO``/``FROM`` and
    the grantees, then ``WITH <option> OPTION`` (grant only), ``GRANTED BY`` and ``CASCADE`` /
    ``RESTRICT`` (revoke only).  Returns the grantees, whether the option was given, cascade."""
    reader.expect("to" if is_grant else "from")
    grantees = [_grantee(reader)]
    while reader.comma():
        grantees.append(_grantee(reader))
    with_option = cascade = False
    while reader.peek() is not None:
        if is_grant and reader.accept("with", option, "option"):
            with_option = True
        elif reader.accept("granted", "by"):
            _grantee(reader)
        elif not is_grant and reader.word() in ("cascade", "restrict"):
            cascade = reader.take().text.lower() == "cascade"
        else:
            raise reader.error()
    return tuple(grantees), with_option, cascade


def parse_default(sql: str, tokens: list[Token]) -> DefaultPrivilegesStatement | None:
    """``ALTER DEFAULT PRIVILEGES [FOR {ROLE | USER} r [, ...]] [IN SCHEMA s [, ...]]``
    followed by a GRANT or REVOKE ``ON TABLES | SEQUENCES``, or None for another ALTER."""
    reader = _Reader(sql, tokens)
    if not reader.accept("alter", "default", "privileges"):
        return None
    roles: list[str] = []
    schema = ""
    while True:
        if reader.accept("for", "role") or reader.accept("for", "user"):
            roles.append(_grantee(reader))
            while reader.comma():
                roles.append(_grantee(reader))
        elif reader.accept("in", "schema"):
            schema = reader.name()
            if schema != "public":
                raise InvalidSchemaName(f'schema "{schema}" does not exist')
        else:
            break
    if reader.word() not in ("grant", "revoke"):
        raise reader.error()
    is_grant = reader.take().text.lower() == "grant"
    grant_option = not is_grant and reader.accept("grant", "option", "for")
    privileges, columns = _privileges(reader)
    if columns:
        raise InvalidGrantOperation("default privileges cannot be set for columns")
    reader.expect("on")
    kind = reader.word().upper()
    if kind not in ("TABLES", "SEQUENCES"):
        if kind in ("FUNCTIONS", "ROUTINES", "TYPES", "SCHEMAS"):
            raise FeatureNotSupported(f"default privileges on {kind} are not supported yet")
        raise reader.error()
    reader.take()
    reader.expect("to" if is_grant else "from")
    grantees = [_grantee(reader)]
    while reader.comma():
        grantees.append(_grantee(reader))
    cascade = False
    while reader.peek() is not None:
        if is_grant and reader.accept("with", "grant", "option"):
            grant_option = True
        elif not is_grant and reader.word() in ("cascade", "restrict"):
            cascade = reader.take().text.lower() == "cascade"
        else:
            raise reader.error()
    grant = GrantStatement(
        is_grant, tuple(privileges), kind, (), tuple(grantees), grant_option, cascade
    )
    return DefaultPrivilegesStatement(tuple(roles), schema, grant)


def parse_owned(sql: str, tokens: list[Token]) -> OwnedStatement | None:
    """``REASSIGN OWNED BY role [, ...] TO role`` or ``DROP OWNED BY role [, ...] [CASCADE |
    RESTRICT]``, or None for any other statement."""
    reader = _Reader(sql, tokens)
    action = reader.word().upper()
    if action not in ("REASSIGN", "DROP") or reader.word(1) != "owned":
        return None
    reader.index = 2
    reader.expect("by")
    roles = [_grantee(reader)]
    while reader.comma():
        roles.append(_grantee(reader))
    if action == "REASSIGN":
        reader.expect("to")
        new_owner = _grantee(reader)
        if reader.peek() is not None:
            raise reader.error()
        return OwnedStatement(action, tuple(roles), new_owner)
    cascade = reader.word() == "cascade"
    if reader.word() in ("cascade", "restrict"):
        reader.take()
    if reader.peek() is not None:
        raise reader.error()
    return OwnedStatement(action, tuple(roles), cascade=cascade)


def parse_owner(sql: str, tokens: list[Token]) -> OwnerStatement | None:
    """``ALTER TABLE [IF EXISTS] [ONLY] t OWNER TO role``, or None for any other ALTER."""
    words = [t.text.lower() for t in tokens]
    kinds = ("table", "sequence", "view", "schema")
    if len(words) < 5 or words[0] != "alter" or words[1] not in kinds:
        return None
    if words[-3:-1] != ["owner", "to"]:
        return None
    reader = _Reader(sql, tokens)
    reader.index = 2
    if_exists = reader.accept("if", "exists")
    reader.accept("only")
    try:
        schema, table = _qualified(reader)
    except SqlSyntaxError:
        return None
    if not reader.accept("owner", "to"):
        return None  # another ALTER TABLE (RENAME owner TO holder ...)
    if schema not in ("", "public"):
        raise InvalidSchemaName(f'schema "{schema}" does not exist')
    owner = _grantee(reader)
    if reader.peek() is not None:
        raise reader.error()
    if words[1] == "schema" and (schema or table != "public"):
        raise InvalidSchemaName(f'schema "{schema or table}" does not exist')
    return OwnerStatement(table, owner, if_exists, words[1].upper())


def _privileges(reader: _Reader) -> tuple[list[str], list[tuple[str, tuple[str, ...]]]]:
    """The privileges named, and apart from them those given with a column list."""
    out: list[str] = []
    columns: list[tuple[str, tuple[str, ...]]] = []
    if reader.accept("all"):
        reader.accept("privileges")
        names = _columns(reader)
        return ([], [("ALL", names)]) if names else (["ALL"], [])
    while True:
        word = reader.word()
        if word not in _PRIVILEGES or word == "all":
            raise reader.error()
        reader.take()
        privilege = "TEMPORARY" if word == "temp" else word.upper()
        names = _columns(reader)
        if names:
            columns.append((privilege, names))
        else:
            out.append(privilege)
        if not reader.comma():
            return out, columns


def _columns(reader: _Reader) -> tuple[str, ...]:
    """A privilege's ``(column [, ...])``, or () when none follows."""
    token = reader.peek()
    if token is None or token.token_type is not TokenType.L_PAREN:
        return ()
    reader.take()
    names = [reader.name()]
    while reader.comma():
        names.append(reader.name())
    token = reader.peek()
    if token is None or token.token_type is not TokenType.R_PAREN:
        raise reader.error()
    reader.take()
    return tuple(names)


def _objects(reader: _Reader) -> tuple[str, list[tuple[str, str]]]:
    for kind in ("tables", "sequences"):
        if reader.accept("all", kind, "in", "schema"):
            schemas = [("", reader.name())]
            while reader.comma():
                schemas.append(("", reader.name()))
            return f"ALL {kind.upper()}", schemas
    if reader.accept("database"):
        names = [("", reader.name())]
        while reader.comma():
            names.append(("", reader.name()))
        return "DATABASE", names
    if reader.accept("sequence"):
        sequences = [_qualified(reader)]
        while reader.comma():
            sequences.append(_qualified(reader))
        return "SEQUENCE", sequences
    if reader.accept("schema"):
        names = [("", reader.name())]
        while reader.comma():
            names.append(("", reader.name()))
        return "SCHEMA", names
    if reader.word() in ("function", "procedure", "routine", "type",
                         "language", "domain", "foreign", "large", "tablespace", "parameter",
                         "all"):  # fmt: skip
        raise FeatureNotSupported(
            f"GRANT and REVOKE on {reader.word().upper()} are not supported yet"
        )
    reader.accept("table")
    tables = [_qualified(reader)]
    while reader.comma():
        tables.append(_qualified(reader))
    return "TABLE", tables


def _qualified(reader: _Reader) -> tuple[str, str]:
    first = reader.name()
    token = reader.peek()
    if token is not None and token.token_type is TokenType.DOT:
        reader.take()
        return first, reader.name()
    return "", first


def _grantee(reader: _Reader) -> str:
    reader.accept("group")
    token = reader.peek()
    if token is not None and token.token_type is not TokenType.IDENTIFIER:
        word = token.text.lower()
        if word == "public":
            reader.take()
            return ""
        if word in _SPECIAL_GRANTEES:
            reader.take()
            return word.upper()
    return reader.name()
