"""The typed statements the frontend parses beside sqlglot's own: one node class per kind.

Each is a sqlglot Expression whose args are its fields, read through
properties named as the fields, so the session dispatches on the node's
type and the stage that runs it reads plain values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlglot import exp
from sqlglot.tokens import Token

A = TypeVar("A", bound=exp.Expr)


@dataclass(frozen=True, slots=True)
class ParsedStatement(Generic[A]):
    """One statement: its AST, its own text, and where that text starts in the query string."""

    ast: A
    text: str
    offset: int
    tokens: tuple[Token, ...]


def _field(key: str) -> Any:
    return property(lambda self: self.args.get(key))


class Statement(exp.Expression):
    """A typed statement: equal to another of its type with the same fields."""

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.args == other.args

    def __hash__(self) -> int:
        return hash(type(self).__name__)


class Utility(Statement):
    """Transaction control, SET, SHOW, RESET, DEALLOCATE, DISCARD, CHECKPOINT and savepoints.

    ``kind`` is one of BEGIN, COMMIT, ROLLBACK, SET, SHOW, RESET, DEALLOCATE, DISCARD,
    CHECKPOINT, SAVEPOINT, ROLLBACK TO, RELEASE (``name`` is the savepoint), PREPARE
    TRANSACTION, COMMIT PREPARED, ROLLBACK PREPARED (``name`` is the gid);
    ``name`` and ``value`` carry the setting for SET/SHOW/RESET (for DEALLOCATE,
    ``name`` is the statement, empty for ALL); ``modes`` the transaction
    modes (e.g. ``isolation level repeatable read``, ``read only``).
    """

    arg_types = {"kind": True, "name": False, "value": False, "modes": False, "local": False}

    def __init__(
        self,
        kind: str = "",
        name: str = "",
        value: str = "",
        modes: tuple[str, ...] = (),
        local: bool = False,
    ) -> None:
        super().__init__(kind=kind, name=name, value=value, modes=modes, local=local)

    kind: str = _field("kind")
    name: str = _field("name")
    value: str = _field("value")
    modes: tuple[str, ...] = _field("modes")
    local: bool = _field("local")
    """SET LOCAL: the value holds until the transaction ends."""


class MaintenanceStatement(Statement):
    """VACUUM or ANALYZE (``kind``) of the ``tables`` named, all of them when none is."""

    arg_types = {"kind": True, "tables": False}

    def __init__(self, kind: str = "", tables: tuple[str, ...] = ()) -> None:
        super().__init__(kind=kind, tables=tables)

    kind: str = _field("kind")
    tables: tuple[str, ...] = _field("tables")


class SetConstraints(Statement):
    """SET CONSTRAINTS {ALL | name, ...} {DEFERRED | IMMEDIATE}; ``names`` is empty for ALL."""

    arg_types = {"names": False, "deferred": True}

    def __init__(self, names: tuple[str, ...] = (), deferred: bool = False) -> None:
        super().__init__(names=names, deferred=deferred)

    names: tuple[str, ...] = _field("names")
    deferred: bool = _field("deferred")


class CursorStatement(Statement):
    """DECLARE (with its query text), FETCH, MOVE or CLOSE.

    ``count`` is the number of rows FETCH/MOVE asks for, None for ALL.
    ``name`` is empty for ``CLOSE ALL``; ``text`` is a DECLARE's whole text (pg_cursors).
    """

    arg_types = {
        "kind": True, "name": True, "query": False, "hold": False, "count": False, "text": False
    }  # fmt: skip

    def __init__(
        self,
        kind: str = "",
        name: str = "",
        query: str = "",
        hold: bool = False,
        count: int | None = 1,
        text: str = "",
    ) -> None:
        super().__init__(kind=kind, name=name, query=query, hold=hold, count=count, text=text)

    kind: str = _field("kind")
    name: str = _field("name")
    query: str = _field("query")
    hold: bool = _field("hold")
    count: int | None = _field("count")
    text: str = _field("text")  # type: ignore[assignment]  # shadows Expression.text, a method


@dataclass(slots=True)
class CopyOptions:
    """One COPY's format and its settings, defaults filled in for the format."""

    format: str = "text"
    delimiter: str | None = None
    null: str | None = None
    header: bool = False
    header_match: bool = False
    quote: str | None = None
    escape: str | None = None
    force_quote: tuple[str, ...] | None = None
    force_quote_all: bool = False
    force_not_null: tuple[str, ...] | None = None
    force_null: tuple[str, ...] | None = None
    encoding: str | None = None
    freeze: bool = False
    """Accepted and ignored: a tablet row needs no freezing, it is visible from its commit."""

    @property
    def is_binary(self) -> bool:
        """Binary on the wire: PostgreSQL's binary tuples or an Arrow IPC stream."""
        return self.format in ("binary", "arrow")

    @property
    def is_arrow(self) -> bool:
        return self.format == "arrow"

    @property
    def is_csv(self) -> bool:
        return self.format == "csv"


class CopyStatement(Statement):
    """A COPY: a table (and columns) or a query, FROM STDIN or TO STDOUT, with its options."""

    arg_types = {
        "is_from": True, "table": False, "schema": False, "columns": False,
        "query_sql": False, "options": False,
    }  # fmt: skip

    def __init__(
        self,
        is_from: bool = True,
        table: str | None = None,
        schema: str | None = None,
        columns: list[str] | None = None,
        query_sql: str | None = None,
        options: CopyOptions | None = None,
    ) -> None:
        super().__init__(
            is_from=is_from, table=table, schema=schema, columns=columns,
            query_sql=query_sql, options=options if options is not None else CopyOptions(),
        )  # fmt: skip

    is_from: bool = _field("is_from")
    table: str | None = _field("table")
    schema: str | None = _field("schema")
    columns: list[str] | None = _field("columns")
    query_sql: str | None = _field("query_sql")
    options: CopyOptions = _field("options")


class RoleStatement(Statement):
    """CREATE/ALTER/DROP ROLE or USER: the role names and the attributes nyala keeps."""

    arg_types = {"action": True, "names": True, "attributes": False, "if_exists": False}

    def __init__(
        self,
        action: str = "",
        names: list[str] | None = None,
        attributes: dict[str, object] | None = None,
        if_exists: bool = False,
    ) -> None:
        super().__init__(
            action=action,
            names=names if names is not None else [],
            attributes=attributes if attributes is not None else {},
            if_exists=if_exists,
        )

    action: str = _field("action")
    names: list[str] = _field("names")
    attributes: dict[str, object] = _field("attributes")
    if_exists: bool = _field("if_exists")


class ExplainStatement(Statement):
    """EXPLAIN [ANALYZE]: whether to run the statement, the statement explained, and whether
    the plan is wanted as JSON (``FORMAT JSON``)."""

    arg_types = {"analyze": False, "statement": True, "json": False}

    def __init__(
        self,
        analyze: bool = False,
        statement: ParsedStatement | None = None,
        json: bool = False,
    ) -> None:
        super().__init__(analyze=analyze, statement=statement, json=json)

    analyze: bool = _field("analyze")
    json: bool = _field("json")
    statement: ParsedStatement = _field("statement")


class GrantStatement(Statement):
    """GRANT or REVOKE of privileges on tables or schemas.

    ``privileges`` are upper-case names (``("ALL",)`` for ALL PRIVILEGES); ``kind`` is
    TABLE, SEQUENCE, SCHEMA, ALL TABLES or ALL SEQUENCES (``ON ALL ... IN SCHEMA``,
    ``objects`` then naming the schemas); ``objects`` are (schema or "", name) pairs; ``grantees`` role names, PUBLIC
    as "".  ``grant_option``: WITH GRANT OPTION, or REVOKE GRANT OPTION FOR.  ``columns``
    holds the privileges given with a column list (``SELECT (a, b)``), each with its columns.
    """

    arg_types = {
        "is_grant": True, "privileges": True, "kind": True, "objects": True, "grantees": True,
        "grant_option": False, "cascade": False, "columns": False,
    }  # fmt: skip

    def __init__(
        self,
        is_grant: bool = True,
        privileges: tuple[str, ...] = (),
        kind: str = "TABLE",
        objects: tuple[tuple[str, str], ...] = (),
        grantees: tuple[str, ...] = (),
        grant_option: bool = False,
        cascade: bool = False,
        columns: tuple[tuple[str, tuple[str, ...]], ...] = (),
    ) -> None:
        super().__init__(
            is_grant=is_grant, privileges=privileges, kind=kind, objects=objects,
            grantees=grantees, grant_option=grant_option, cascade=cascade, columns=columns,
        )  # fmt: skip

    is_grant: bool = _field("is_grant")
    privileges: tuple[str, ...] = _field("privileges")
    kind: str = _field("kind")
    objects: tuple[tuple[str, str], ...] = _field("objects")
    grantees: tuple[str, ...] = _field("grantees")
    grant_option: bool = _field("grant_option")
    cascade: bool = _field("cascade")
    columns: tuple[tuple[str, tuple[str, ...]], ...] = _field("columns")


class MembershipStatement(Statement):
    """GRANT role TO role or REVOKE role FROM role: ``roles`` are granted to (or revoked
    from) ``grantees``; ``admin_option`` is WITH ADMIN OPTION, or REVOKE ADMIN OPTION FOR.
    Grantees spelled CURRENT_USER, SESSION_USER or CURRENT_ROLE keep that spelling."""

    arg_types = {
        "is_grant": True, "roles": True, "grantees": True, "admin_option": False,
        "cascade": False,
    }  # fmt: skip

    def __init__(
        self,
        is_grant: bool = True,
        roles: tuple[str, ...] = (),
        grantees: tuple[str, ...] = (),
        admin_option: bool = False,
        cascade: bool = False,
    ) -> None:
        super().__init__(
            is_grant=is_grant, roles=roles, grantees=grantees, admin_option=admin_option,
            cascade=cascade,
        )  # fmt: skip

    is_grant: bool = _field("is_grant")
    roles: tuple[str, ...] = _field("roles")
    grantees: tuple[str, ...] = _field("grantees")
    admin_option: bool = _field("admin_option")
    cascade: bool = _field("cascade")


class DefaultPrivilegesStatement(Statement):
    """ALTER DEFAULT PRIVILEGES [FOR ROLE r, ...] [IN SCHEMA s] GRANT/REVOKE ...: ``grant``
    has ``kind`` TABLES or SEQUENCES and no objects; ``roles`` empty means the current role;
    ``schema`` is "" for defaults in every schema."""

    arg_types = {"roles": False, "schema": False, "grant": True}

    def __init__(
        self, roles: tuple[str, ...] = (), schema: str = "", grant: GrantStatement | None = None
    ) -> None:
        super().__init__(roles=roles, schema=schema, grant=grant)

    roles: tuple[str, ...] = _field("roles")
    schema: str = _field("schema")
    grant: GrantStatement = _field("grant")


class OwnedStatement(Statement):
    """REASSIGN OWNED BY roles TO new_owner, or DROP OWNED BY roles [CASCADE]."""

    arg_types = {"action": True, "roles": True, "new_owner": False, "cascade": False}

    def __init__(
        self,
        action: str = "REASSIGN",
        roles: tuple[str, ...] = (),
        new_owner: str = "",
        cascade: bool = False,
    ) -> None:
        super().__init__(action=action, roles=roles, new_owner=new_owner, cascade=cascade)

    action: str = _field("action")
    roles: tuple[str, ...] = _field("roles")
    new_owner: str = _field("new_owner")
    cascade: bool = _field("cascade")


class OwnerStatement(Statement):
    """ALTER TABLE [IF EXISTS] t OWNER TO role (``owner`` "CURRENT_USER" etc. as spelled);
    ``kind`` is TABLE (also for views and sequences, as PostgreSQL allows), SEQUENCE, VIEW
    or SCHEMA."""

    arg_types = {"table": True, "owner": True, "if_exists": False, "kind": False}

    def __init__(
        self, table: str = "", owner: str = "", if_exists: bool = False, kind: str = "TABLE"
    ) -> None:
        super().__init__(table=table, owner=owner, if_exists=if_exists, kind=kind)

    table: str = _field("table")
    owner: str = _field("owner")
    kind: str = _field("kind")
    if_exists: bool = _field("if_exists")


class ExtensionStatement(Statement):
    """CREATE EXTENSION [IF NOT EXISTS] name [...] or DROP EXTENSION [IF EXISTS] names
    (``action`` CREATE or DROP; ``if_flag`` is the IF [NOT] EXISTS)."""

    arg_types = {"action": True, "names": True, "if_flag": False}

    def __init__(
        self, action: str = "CREATE", names: tuple[str, ...] = (), if_flag: bool = False
    ) -> None:
        super().__init__(action=action, names=names, if_flag=if_flag)

    action: str = _field("action")
    names: tuple[str, ...] = _field("names")
    if_flag: bool = _field("if_flag")


class PrepareStatement(Statement):
    """SQL-level ``PREPARE name [(type, ...)] AS statement``: the types as written, the
    statement's text, and the whole PREPARE's text (pg_prepared_statements.statement)."""

    arg_types = {"name": True, "types": False, "query": True, "text": False}

    def __init__(
        self, name: str = "", types: tuple[str, ...] = (), query: str = "", text: str = ""
    ) -> None:
        super().__init__(name=name, types=types, query=query, text=text)

    name: str = _field("name")
    types: tuple[str, ...] = _field("types")
    query: str = _field("query")
    text: str = _field("text")  # type: ignore[assignment]  # shadows Expression.text, a method


class ExecuteStatement(Statement):
    """SQL-level ``EXECUTE name [(argument, ...)]``: each argument's SQL text."""

    arg_types = {"name": True, "arguments": False}

    def __init__(self, name: str = "", arguments: tuple[str, ...] = ()) -> None:
        super().__init__(name=name, arguments=arguments)

    name: str = _field("name")
    arguments: tuple[str, ...] = _field("arguments")


class SequenceStatement(Statement):
    """CREATE, ALTER or DROP SEQUENCE.

    ``names`` is the sequence (several for DROP); ``options`` maps each option given to
    its value: ``as`` (type name), ``increment``, ``minvalue``/``maxvalue`` (None for NO
    MINVALUE/MAXVALUE), ``start``, ``restart`` (None for RESTART without a value),
    ``cache``, ``cycle`` (bool), ``owned_by`` ((table, column) or None for NONE);
    ``rename_to`` is ALTER SEQUENCE ... RENAME TO's new name.
    """

    arg_types = {
        "action": True, "names": True, "options": False, "if_exists": False,
        "if_not_exists": False, "cascade": False, "rename_to": False,
    }  # fmt: skip

    def __init__(
        self,
        action: str = "CREATE",
        names: tuple[str, ...] = (),
        options: dict[str, Any] | None = None,
        if_exists: bool = False,
        if_not_exists: bool = False,
        cascade: bool = False,
        rename_to: str = "",
    ) -> None:
        super().__init__(
            action=action, names=names, options=options if options is not None else {},
            if_exists=if_exists, if_not_exists=if_not_exists, cascade=cascade,
            rename_to=rename_to,
        )  # fmt: skip

    action: str = _field("action")
    names: tuple[str, ...] = _field("names")
    options: dict[str, Any] = _field("options")
    if_exists: bool = _field("if_exists")
    if_not_exists: bool = _field("if_not_exists")
    cascade: bool = _field("cascade")
    rename_to: str = _field("rename_to")


class IdentityStatement(Statement):
    """ALTER TABLE t ALTER [COLUMN] c ADD GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY
    [(options)], as pg_dump writes identity columns; ``options`` as SequenceStatement's,
    plus ``sequence_name``."""

    arg_types = {"table": True, "column": True, "always": True, "options": False,
                 "if_exists": False}  # fmt: skip

    def __init__(
        self,
        table: str = "",
        column: str = "",
        always: bool = True,
        options: dict[str, Any] | None = None,
        if_exists: bool = False,
    ) -> None:
        super().__init__(
            table=table, column=column, always=always,
            options=options if options is not None else {}, if_exists=if_exists,
        )  # fmt: skip

    table: str = _field("table")
    column: str = _field("column")
    always: bool = _field("always")
    options: dict[str, Any] = _field("options")
    if_exists: bool = _field("if_exists")


class LockStatement(Statement):
    """LOCK [TABLE] [ONLY] t [, ...] [IN mode MODE] [NOWAIT]; ``mode`` upper case, e.g.
    ``ACCESS SHARE`` (PostgreSQL's default is ACCESS EXCLUSIVE)."""

    arg_types = {"tables": True, "mode": True, "nowait": False}

    def __init__(
        self, tables: tuple[str, ...] = (), mode: str = "ACCESS EXCLUSIVE", nowait: bool = False
    ) -> None:
        super().__init__(tables=tables, mode=mode, nowait=nowait)

    tables: tuple[str, ...] = _field("tables")
    mode: str = _field("mode")
    nowait: bool = _field("nowait")


class SecurityLabelStatement(Statement):
    """``SECURITY LABEL [FOR provider] ON TABLE t | ON COLUMN t.c IS 'label' | NULL``:
    ``column`` is empty for a table; ``label`` None for IS NULL."""

    arg_types = {"provider": False, "table": True, "column": False, "label": False}

    def __init__(
        self, provider: str = "", table: str = "", column: str = "", label: str | None = None
    ) -> None:
        super().__init__(provider=provider, table=table, column=column, label=label)

    provider: str = _field("provider")
    table: str = _field("table")
    column: str = _field("column")
    label: str | None = _field("label")
