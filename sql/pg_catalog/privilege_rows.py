"""Privileges in the catalogs: relowner, relacl and nspacl, and the has_*_privilege functions.

``with_privileges`` writes each table's owner and ACL into the pg_class rows
and the public schema's into pg_namespace, so psql's ``\\dp``/``\\z`` and
drivers' metadata read them where PostgreSQL keeps them.  ``PrivilegeLookup``
answers ``has_table_privilege``, ``has_schema_privilege``,
``has_database_privilege`` and ``pg_has_role`` from the same snapshot, with PostgreSQL's
argument forms (role and object by name or OID, privilege names comma-separated, ``WITH
GRANT OPTION`` allowed), and holds the lookups of the column privilege functions
(``column_privilege_rows``) and the other has_*_privilege functions
(``privilege_functions``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb

from catalog.privileges import (
    DATABASE,
    DATABASE_PRIVILEGES,
    PUBLIC_SCHEMA,
    SCHEMA_PRIVILEGES,
    TABLE_PRIVILEGES,
    ObjectAcl,
    table_key,
)
from catalog.roles import PREDEFINED, Role, RoleStore
from sql.pg_catalog import column_privilege_rows, privilege_functions
from sql.pg_catalog.catalog_rows import DATABASE_OID, CatalogRows
from sql.pg_catalog.relations import RELATIONS
from sql.pg_catalog.temp_namespaces import PUBLIC_OID
from storage.errors import (
    InvalidCatalogName,
    InvalidParameterValue,
    InvalidSchemaName,
    UndefinedObject,
    UndefinedTable,
)

_UDF = "nyp_"
_DATABASE_NAMES = DATABASE_PRIVILEGES | {"TEMP": "T"}
_DEFAULT_ACL_OID_BASE = 1_300_000_000
PREFIX = "pgf_"


def _column(relation: str, name: str) -> int:
    return [c for c, _ in RELATIONS[relation]].index(name)


def with_privileges(rows: CatalogRows, acls: dict[str, ObjectAcl], owner: str) -> None:
    """Fill pg_class.relowner/relacl, pg_views.viewowner, pg_namespace.nspacl and
    pg_database.datacl in place, and add the pg_default_acl rows."""
    role_oids = {
        r[_column("pg_roles", "rolname")]: r[_column("pg_roles", "oid")]
        for r in rows.rows.get("pg_roles", [])
    }
    oid_at, owner_at, acl_at = (_column("pg_class", c) for c in ("oid", "relowner", "relacl"))
    classes = rows.rows.get("pg_class", [])
    for index, row in enumerate(classes):
        acl = acls.get(table_key(row[oid_at]))
        if acl is None:
            continue
        values = list(row)
        values[owner_at] = role_oids.get(acl.owner, values[owner_at])
        values[acl_at] = acl.acl_text()
        classes[index] = tuple(values)
    name_at = _column("pg_class", "relname")
    owners = {
        row[name_at]: acl.owner
        for row in classes
        if (acl := acls.get(table_key(row[oid_at]))) is not None
    }
    view_at, view_owner_at = _column("pg_views", "viewname"), _column("pg_views", "viewowner")
    views = rows.rows.get("pg_views", [])
    for index, row in enumerate(views):
        if row[view_at] in owners:
            values = list(row)
            values[view_owner_at] = owners[row[view_at]]
            views[index] = tuple(values)
    defaults = [
        (key.split(":"), default)
        for key, default in sorted(acls.items())
        if key.startswith("default:")
    ]
    for number, ((_, role, in_schema, kind), default) in enumerate(defaults):
        rows.add(
            "pg_default_acl",
            oid=_DEFAULT_ACL_OID_BASE + number,
            defaclrole=role_oids.get(role, 0),
            defaclnamespace=PUBLIC_OID if in_schema else 0,
            defaclobjtype="r" if kind == "table" else "S",
            defaclacl=default.acl_text() or [],
        )
    database = acls.get(DATABASE)
    if database is not None:
        dat_acl_at = _column("pg_database", "datacl")
        databases = rows.rows.get("pg_database", [])
        for index, row in enumerate(databases):
            values = list(row)
            values[dat_acl_at] = database.acl_text()
            databases[index] = tuple(values)
    schema = acls.get(PUBLIC_SCHEMA) or ObjectAcl("schema", owner)
    nsp_oid_at, nsp_acl_at = _column("pg_namespace", "oid"), _column("pg_namespace", "nspacl")
    namespaces = rows.rows.get("pg_namespace", [])
    for index, row in enumerate(namespaces):
        if row[nsp_oid_at] == PUBLIC_OID:
            values = list(row)
            values[nsp_acl_at] = [item.text() for item in schema.effective()]
            namespaces[index] = tuple(values)
    column_privilege_rows.with_column_acls(rows, acls, owner)


class PrivilegeLookup:
    """has_*_privilege over one snapshot of the ACLs, for the session user ``user``."""

    def __init__(self) -> None:
        self.columns = column_privilege_rows.ColumnPrivileges()
        self.objects = privilege_functions.ObjectPrivileges()
        self.load({}, [], "", "", CatalogRows())

    def load(
        self,
        acls: dict[str, ObjectAcl],
        roles: list[Role],
        owner: str,
        user: str,
        rows: CatalogRows,
        store: RoleStore | None = None,
    ) -> None:
        self._acls = acls
        self._roles = {r.name: r for r in roles} | (PREDEFINED if roles else {})
        self._store = store
        self._owner = owner
        self._user = user
        self._database = next(
            (r[_column("pg_database", "datname")] for r in rows.rows.get("pg_database", [])), ""
        )
        self._role_oids = {
            r[_column("pg_roles", "oid")]: r[_column("pg_roles", "rolname")]
            for r in rows.rows.get("pg_roles", [])
        }
        name_at, nsp_at, oid_at = (
            _column("pg_class", c) for c in ("relname", "relnamespace", "oid")
        )
        self._tables = {
            r[name_at]: r[oid_at] for r in rows.rows.get("pg_class", []) if r[nsp_at] == PUBLIC_OID
        }
        self._class_oids = {r[oid_at] for r in rows.rows.get("pg_class", [])}
        schema_names = {
            r[_column("pg_namespace", "oid")]: r[_column("pg_namespace", "nspname")]
            for r in rows.rows.get("pg_namespace", [])
        }
        self._system_tables = {
            f"{schema_names.get(r[nsp_at])}.{r[name_at]}": r[oid_at]
            for r in rows.rows.get("pg_class", [])
            if r[nsp_at] != PUBLIC_OID
        }
        """The catalogs by qualified name: PUBLIC may read them, as in PostgreSQL."""
        privileges_of = store.privileges_of if store is not None else None
        self.columns.load(
            acls, rows, user, self._on_table, self._role, self._table_oid, privileges_of
        )
        self.objects.load(acls, rows, user, owner, self._is_superuser, self._role, privileges_of)
        self._schemas = {
            r[_column("pg_namespace", "nspname")]: r[_column("pg_namespace", "oid")]
            for r in rows.rows.get("pg_namespace", [])
        }

    def _on_table(self, role: str, oid: int, letters: str, options: bool) -> bool:
        """Whether ``role`` holds one of ``letters`` (their grant options) on the table."""
        if self._is_superuser(role):
            return True
        acl = self._acls.get(table_key(oid)) or ObjectAcl("table", self._owner)
        mine = self._store.privileges_of(role) if self._store is not None else frozenset((role,))
        return bool(set(letters) & acl.held(mine, options=options))

    def _is_superuser(self, name: str) -> bool:
        if name.startswith(_NO_ROLE):
            return False
        role = self._roles.get(name)
        return role is None or role.superuser

    def _role(self, role: Any) -> str:
        if isinstance(role, int):
            # An OID naming no role is no error, as in PostgreSQL: a role that holds
            # nothing but what PUBLIC holds and is a member of nothing.
            return self._role_oids.get(role, f"{_NO_ROLE}{role}")
        name = str(role)
        if self._roles and name not in self._roles and name != self._user:
            raise UndefinedObject(f'role "{name}" does not exist')
        return name

    def _table_oid(self, table: Any) -> int:
        if isinstance(table, int):
            return table
        text = str(table).strip()
        name = text[1:-1] if text.startswith('"') else text.lower()
        name = name.removeprefix("public.")
        oid = self._tables.get(name)
        if oid is None:
            oid = self._system_tables.get(name, self._system_tables.get("pg_catalog." + name))
        if oid is None:
            raise UndefinedTable(f'relation "{text}" does not exist')
        return oid

    def has(self, a: Any, b: Any, c: Any, kind: str) -> bool | None:
        """``has_x_privilege([role,] object, privileges)``: ``c`` is None in the two-argument
        form."""
        if a is None or b is None:
            return None
        role, target, wanted = (self._user, a, b) if c is None else (self._role(a), b, c)
        letters, options = _wanted(str(wanted), kind)
        if kind == "schema" and target not in ("public", PUBLIC_OID):
            return self._system_schema(role, target, letters)
        # A table named by a name that names none is 42P01, for a superuser too; an OID
        # naming no relation (or database) gives NULL.
        if kind == "table" and isinstance(target, int) and target not in self._class_oids:
            return None
        if kind == "database" and isinstance(target, int) and target != DATABASE_OID:
            return None
        oid = self._table_oid(target) if kind == "table" else 0
        if kind == "database" and str(target) != self._database and target != DATABASE_OID:
            raise InvalidCatalogName(f'database "{target}" does not exist', severity="ERROR")
        if self._is_superuser(role):
            return True
        if kind == "table" and oid in self._system_tables.values():
            return letters == "r" and not options
        if kind == "table":
            acl = self._acls.get(table_key(oid))
            acl = acl or ObjectAcl("table", self._owner)
        elif kind == "database":
            acl = self._acls.get(DATABASE) or ObjectAcl("database", self._owner)
        else:
            acl = self._acls.get(PUBLIC_SCHEMA) or ObjectAcl("schema", self._owner)
        mine = self._store.privileges_of(role) if self._store is not None else frozenset((role,))
        held = acl.held(mine, options=options)
        return any(letter in held for letter in letters)

    def _system_schema(self, role: str, target: Any, letters: str) -> bool | None:
        """pg_catalog and information_schema: PUBLIC may use them, only superusers create
        in them; a schema OID naming nothing gives NULL, a name 3F000."""
        if target not in self._schemas and target not in self._schemas.values():
            if isinstance(target, int):
                return None
            raise InvalidSchemaName(f'schema "{target}" does not exist')
        return "U" in letters or self._is_superuser(role)

    def has_role(self, a: Any, b: Any, c: Any) -> bool | None:
        """``pg_has_role([user,] role, privilege)``: MEMBER (SET ROLE may become it), USAGE
        (has its privileges), either WITH ADMIN OPTION (may grant it)."""
        if a is None or b is None:
            return None
        user, role, wanted = (self._user, a, b) if c is None else (self._role(a), b, c)
        role = self._role(role)
        modes = [" ".join(part.upper().split()) for part in str(wanted).split(",")]
        known = {"MEMBER", "USAGE", "MEMBER WITH ADMIN OPTION", "USAGE WITH ADMIN OPTION",
                 "MEMBER WITH GRANT OPTION", "USAGE WITH GRANT OPTION"}  # fmt: skip
        for mode in modes:
            if mode not in known:
                raise InvalidParameterValue(f'unrecognized privilege type: "{mode.lower()}"')
        if self._is_superuser(user):
            return True
        if self._store is None:
            return user == role
        for mode in modes:
            if "OPTION" in mode:
                if self._store.has_admin(user, role):
                    return True
            elif role in (
                self._store.member_of(user) if mode == "MEMBER" else self._store.privileges_of(user)
            ):
                return True
        return False

    def has_database(self, a: Any, b: Any, c: Any) -> bool | None:
        return self.has(a, b, c, "database")

    def has_table(self, a: Any, b: Any, c: Any) -> bool | None:
        return self.has(a, b, c, "table")

    def has_schema(self, a: Any, b: Any, c: Any) -> bool | None:
        return self.has(a, b, c, "schema")


def _wanted(text: str, kind: str) -> tuple[str, bool]:
    known = {"table": TABLE_PRIVILEGES, "schema": SCHEMA_PRIVILEGES}.get(kind, _DATABASE_NAMES)
    letters = []
    options = False
    for part in text.split(","):
        words = part.strip().upper().split()
        if words[1:] == ["WITH", "GRANT", "OPTION"]:
            options = True
            words = words[:1]
        if len(words) != 1 or words[0] not in known:
            raise InvalidParameterValue(f'unrecognized privilege type: "{part.strip()}"')
        letters.append(known[words[0]])
    return "".join(letters), options


_NO_ROLE = "\0role oid "
"""How an OID naming no role is spelt where a role name stands (no role name holds a NUL)."""

_UDFS = (
    ("has_table", "has_table_privilege"),
    ("has_schema", "has_schema_privilege"),
    ("has_database", "has_database_privilege"),
    ("has_role", "pg_has_role"),
)


def register(duck: duckdb.DuckDBPyConnection, current: Callable[[], PrivilegeLookup]) -> None:
    """Create the ``nyp_*`` functions and their ``pgf_*`` macros on the shared catalog DuckDB."""
    for method, sql_name in _UDFS:
        duck.create_function(  # type: ignore[call-overload]  # DuckDB's stubs name only types
            _UDF + method,
            _dispatch(current, method),
            ["VARCHAR", "VARCHAR", "VARCHAR"],
            "BOOLEAN",
            null_handling="special",
        )
        duck.execute(
            f"CREATE MACRO {PREFIX}{sql_name}(a, b, c := NULL) AS "
            f"{_UDF}{method}(a::VARCHAR, b::VARCHAR, c::VARCHAR)"
        )
    column_privilege_rows.register(duck, lambda: current().columns)
    privilege_functions.register(duck, lambda: current().objects)


def names() -> frozenset[str]:
    return (
        frozenset(sql_name for _, sql_name in _UDFS)
        | column_privilege_rows.names()
        | privilege_functions.names()
    )


def _dispatch(current: Callable[[], PrivilegeLookup], method: str) -> Callable[..., Any]:
    def call(a: Any, b: Any, c: Any) -> Any:
        return getattr(current(), method)(_number(a), _number(b), c)

    return call


def _number(value: Any) -> Any:
    """OIDs arrive as text through the VARCHAR signature; digits mean an OID."""
    return int(value) if isinstance(value, str) and value.isdigit() else value
