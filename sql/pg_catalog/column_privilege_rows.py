"""Column privileges in the catalogs: pg_attribute.attacl, information_schema's column
grants, has_column_privilege and has_any_column_privilege.

``with_column_acls`` writes each column's ACL (``catalog.column_privileges``)
into its pg_attribute row, so psql's ``\\dp`` "Column privileges" and pgjdbc's
``getColumnPrivileges`` read it where PostgreSQL keeps it.
``ColumnPrivileges`` answers the two functions in every form PostgreSQL 15
has: role by name or OID (or left out), table by name or OID, column by name
or number; a table's privilege is a privilege on each of its columns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb

from catalog.column_privileges import COLUMN_PRIVILEGES, owned_by
from catalog.privileges import ObjectAcl, table_key
from sql.pg_catalog.catalog_rows import CatalogRows
from sql.pg_catalog.relations import RELATIONS
from storage.errors import InvalidParameterValue, UndefinedColumn

_UDF = "nyp_"
PREFIX = "pgf_"


def _at(relation: str, name: str) -> int:
    return [c for c, _ in RELATIONS[relation]].index(name)


def with_column_acls(rows: CatalogRows, acls: dict[str, ObjectAcl], owner: str) -> None:
    """Fill pg_attribute.attacl in place from the column ACLs, as their table's owner grants."""
    if not any(key.startswith("column:") for key in acls):
        return
    rel_at, num_at, acl_at = (_at("pg_attribute", c) for c in ("attrelid", "attnum", "attacl"))
    attributes = rows.rows.get("pg_attribute", [])
    for index, row in enumerate(attributes):
        acl = acls.get(f"column:{row[rel_at]}:{row[num_at]}")
        if acl is None or not acl.items:
            continue
        table = acls.get(table_key(row[rel_at]))
        values = list(row)
        values[acl_at] = owned_by(acl, table.owner if table is not None else owner).acl_text()
        attributes[index] = tuple(values)


TableCheck = Callable[[str, int, str, bool], bool]
"""Whether a role holds any of some privilege letters (or their grant options) on a table."""


class ColumnPrivileges:
    """has_column_privilege and has_any_column_privilege over one snapshot of the ACLs."""

    def __init__(self) -> None:
        self.load({}, CatalogRows(), "", lambda *_: False, lambda name: name, lambda t: 0, None)

    def load(
        self,
        acls: dict[str, ObjectAcl],
        rows: CatalogRows,
        user: str,
        on_table: TableCheck,
        role: Callable[[Any], str],
        table_oid: Callable[[Any], int],
        privileges_of: Callable[[str], frozenset[str]] | None,
    ) -> None:
        self._acls = acls
        self._user = user
        self._on_table = on_table
        self._role = role
        self._table_oid = table_oid
        self._privileges_of = privileges_of
        rel_at, num_at, name_at, dropped_at = (
            _at("pg_attribute", c) for c in ("attrelid", "attnum", "attname", "attisdropped")
        )
        self._columns: dict[int, dict[str, int]] = {}
        for row in rows.rows.get("pg_attribute", []):
            if row[num_at] > 0 and not row[dropped_at]:
                self._columns.setdefault(row[rel_at], {})[row[name_at]] = row[num_at]
        oid_at, class_name_at = _at("pg_class", "oid"), _at("pg_class", "relname")
        self._names = {r[oid_at]: r[class_name_at] for r in rows.rows.get("pg_class", [])}

    def _column_held(self, role: str, oid: int, attnum: int, options: bool) -> set[str]:
        acl = self._acls.get(f"column:{oid}:{attnum}")
        if acl is None:
            return set()
        mine = self._privileges_of(role) if self._privileges_of else frozenset((role,))
        return acl.held(mine, options=options)

    def _subject(self, role: Any, args: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
        """The role asked about and the remaining arguments: the session user when the last
        argument is None (the form without a role)."""
        if args[-1] is None:
            return self._user, (role, *args[:-1])
        return self._role(role), args

    def has_column(self, a: Any, b: Any, c: Any, d: Any) -> bool | None:
        """``has_column_privilege([role,] table, column, privileges)``: ``d`` is None in the
        three-argument form."""
        if a is None or b is None or c is None:
            return None
        role, (table, column, wanted) = self._subject(a, (b, c, d))
        letters, options = _wanted(str(wanted))
        oid = self._table_oid(table)
        columns = self._columns.get(oid)
        if columns is None:
            return None  # a table OID that names no table, as in PostgreSQL
        if isinstance(column, int):
            if column not in columns.values():
                return None
            attnum = column
        else:
            found = columns.get(str(column))
            if found is None:
                name = self._names.get(oid, str(table))
                raise UndefinedColumn(f'column "{column}" of relation "{name}" does not exist')
            attnum = found
        if self._on_table(role, oid, letters, options):
            return True
        return bool(set(letters) & self._column_held(role, oid, attnum, options))

    def has_any_column(self, a: Any, b: Any, c: Any) -> bool | None:
        """``has_any_column_privilege([role,] table, privileges)``."""
        if a is None or b is None:
            return None
        role, (table, wanted) = self._subject(a, (b, c))
        letters, options = _wanted(str(wanted))
        oid = self._table_oid(table)
        columns = self._columns.get(oid)
        if columns is None:
            return None
        if self._on_table(role, oid, letters, options):
            return True
        return any(
            set(letters) & self._column_held(role, oid, attnum, options)
            for attnum in columns.values()
        )


def _wanted(text: str) -> tuple[str, bool]:
    letters = []
    options = False
    for part in text.split(","):
        words = part.strip().upper().split()
        if words[1:] == ["WITH", "GRANT", "OPTION"]:
            options = True
            words = words[:1]
        if len(words) != 1 or words[0] not in COLUMN_PRIVILEGES:
            raise InvalidParameterValue(f'unrecognized privilege type: "{part.strip()}"')
        letters.append(COLUMN_PRIVILEGES[words[0]])
    return "".join(letters), options


def register(duck: duckdb.DuckDBPyConnection, current: Callable[[], ColumnPrivileges]) -> None:
    """Create the two functions' ``nyp_*`` UDFs and ``pgf_*`` macros on the catalog DuckDB."""

    def has_column(a: Any, b: Any, c: Any, d: Any) -> bool | None:
        return current().has_column(_number(a), _number(b), _number(c), d)

    def has_any_column(a: Any, b: Any, c: Any) -> bool | None:
        return current().has_any_column(_number(a), _number(b), c)

    duck.create_function(  # type: ignore[call-overload]  # DuckDB's stubs name only types
        f"{_UDF}has_column", has_column, ["VARCHAR"] * 4, "BOOLEAN", null_handling="special"
    )
    duck.create_function(  # type: ignore[call-overload]
        f"{_UDF}has_any_column", has_any_column, ["VARCHAR"] * 3, "BOOLEAN",
        null_handling="special",
    )  # fmt: skip
    duck.execute(
        f"CREATE MACRO {PREFIX}has_column_privilege(a, b, c, d := NULL) AS "
        f"{_UDF}has_column(a::VARCHAR, b::VARCHAR, c::VARCHAR, d::VARCHAR)"
    )
    duck.execute(
        f"CREATE MACRO {PREFIX}has_any_column_privilege(a, b, c := NULL) AS "
        f"{_UDF}has_any_column(a::VARCHAR, b::VARCHAR, c::VARCHAR)"
    )


def names() -> frozenset[str]:
    return frozenset(("has_column_privilege", "has_any_column_privilege"))


def _number(value: Any) -> Any:
    """OIDs and column numbers arrive as text through the VARCHAR signature."""
    return int(value) if isinstance(value, str) and value.isdigit() else value


# One row per column privilege: those granted on the column and those granted on its table,
# as PostgreSQL's information_schema.column_privileges unions them.
COLUMN_GRANTS = """
        WITH items AS (
            SELECT n.nspname, c.relname, a.attname, r.rolname AS owner, unnest(a.attacl) AS item
            FROM pgc.pg_attribute a JOIN pgc.pg_class c ON c.oid = a.attrelid
            JOIN pgc.pg_namespace n ON n.oid = c.relnamespace
            JOIN pgc.pg_roles r ON r.oid = c.relowner
            WHERE c.relkind IN ('r', 'v', 'p') AND n.nspname = 'public' AND a.attnum > 0
                  AND NOT a.attisdropped AND a.attacl IS NOT NULL
            UNION ALL
            SELECT n.nspname, c.relname, a.attname, r.rolname AS owner,
                   unnest(coalesce(c.relacl, [r.rolname || '=arwdDxt/' || r.rolname])) AS item
            FROM pgc.pg_attribute a JOIN pgc.pg_class c ON c.oid = a.attrelid
            JOIN pgc.pg_namespace n ON n.oid = c.relnamespace
            JOIN pgc.pg_roles r ON r.oid = c.relowner
            WHERE c.relkind IN ('r', 'v', 'p') AND n.nspname = 'public' AND a.attnum > 0
                  AND NOT a.attisdropped
        ), parts AS (
            SELECT nspname, relname, attname, owner, split_part(item, '=', 1) AS grantee,
                   split_part(split_part(item, '=', 2), '/', 1) AS rights,
                   split_part(item, '/', 2) AS grantor
            FROM items
        )
        SELECT DISTINCT g.grantor,
               CASE WHEN g.grantee = '' THEN 'PUBLIC' ELSE g.grantee END AS grantee,
               (SELECT datname FROM pgc.pg_database LIMIT 1) AS table_catalog,
               g.nspname AS table_schema, g.relname AS table_name, g.attname AS column_name,
               p.name AS privilege_type,
               CASE WHEN g.grantee = g.owner OR contains(g.rights, p.letter || '*')
                    THEN 'YES' ELSE 'NO' END AS is_grantable
        FROM parts g
        JOIN (VALUES ('a', 'INSERT'), ('r', 'SELECT'), ('w', 'UPDATE'), ('x', 'REFERENCES'))
             p(letter, name) ON contains(g.rights, p.letter)
        WHERE {visible}"""
