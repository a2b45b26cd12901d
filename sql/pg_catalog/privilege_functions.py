"""has_sequence_privilege and the has_*_privilege functions of objects nyala keeps no ACL for.

A sequence's rights come from its ACL (``catalog.privileges.sequence_acl``:
its table's owner holds them all).  Functions, types and the languages
are PUBLIC's to use (not to grant), as PostgreSQL's default ACLs give them;
tablespaces and parameters
(``GRANT SET ON PARAMETER`` is not kept) give a non-superuser nothing; no
foreign-data wrapper or server exists.  Each function takes PostgreSQL 15's
argument forms: role by name or OID or left out, object by name or OID (an
OID naming nothing gives NULL, a name 42P01, 42704 or 42883 as PostgreSQL's),
privileges comma-separated, each perhaps ``WITH GRANT OPTION``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb

from catalog.privileges import ObjectAcl, table_key
from sql.pg_catalog.catalog_rows import CatalogRows
from sql.pg_catalog.functions import type_oid
from sql.pg_catalog.relations import RELATIONS
from storage.errors import (
    InvalidParameterValue,
    InvalidTextRepresentation,
    UndefinedFunction,
    UndefinedObject,
    UndefinedTable,
    WrongObjectType,
)

_UDF = "nyp_"
PREFIX = "pgf_"
_SEQUENCE = {"USAGE": "U", "SELECT": "r", "UPDATE": "w"}
_LANGUAGES = {"internal": 12, "c": 13, "sql": 14, "plpgsql": 0}


def _rows(rows: CatalogRows, relation: str) -> list[dict[str, Any]]:
    names = [c for c, _ in RELATIONS[relation]]
    return [dict(zip(names, row, strict=True)) for row in rows.rows.get(relation, [])]


class ObjectPrivileges:
    """The functions over one snapshot of the catalogs and ACLs, for the session's user."""

    def __init__(self) -> None:
        self.load({}, CatalogRows(), "", "", lambda _: True, lambda r: str(r), None)

    def load(
        self,
        acls: dict[str, ObjectAcl],
        rows: CatalogRows,
        user: str,
        default_owner: str,
        is_superuser: Callable[[str], bool],
        role: Callable[[Any], str],
        privileges_of: Callable[[str], frozenset[str]] | None,
    ) -> None:
        self._acls = acls
        self._user = user
        self._default_owner = default_owner
        self._is_superuser = is_superuser
        self._role = role
        self._privileges_of = privileges_of
        role_names = {r["oid"]: r["rolname"] for r in _rows(rows, "pg_roles")}
        self._classes = {
            r["oid"]: (r["relname"], r["relkind"], role_names.get(r["relowner"], default_owner))
            for r in _rows(rows, "pg_class")
        }
        self._class_oids = {name: oid for oid, (name, _, _) in self._classes.items()}
        self._owning_table = {
            r["objid"]: r["refobjid"] for r in _rows(rows, "pg_depend") if r["deptype"] in "ai"
        }
        self._procs: dict[str, set[int]] = {}
        self._proc_oids: set[int] = set()
        for proc in _rows(rows, "pg_proc"):
            self._procs.setdefault(proc["proname"], set()).add(proc["pronargs"])
            self._proc_oids.add(proc["oid"])
        self._types = {r["typname"]: r["oid"] for r in _rows(rows, "pg_type")}
        self._tablespaces = {r["spcname"]: r["oid"] for r in _rows(rows, "pg_tablespace")}
        self._settings = {r["name"].lower() for r in _rows(rows, "pg_settings")}

    def _args(self, a: Any, b: Any, c: Any) -> tuple[str, Any, Any]:
        return (self._user, a, b) if c is None else (self._role(a), b, c)

    def has_sequence(self, a: Any, b: Any, c: Any) -> bool | None:
        if a is None or b is None:
            return None
        role, target, wanted = self._args(a, b, c)
        letters, options = _wanted(wanted, _SEQUENCE)
        if isinstance(target, int):
            oid: int | None = target if target in self._classes else None
            if oid is None:
                return None
        else:
            text = str(target).strip()
            name = text[1:-1] if text.startswith('"') else text.lower()
            oid = self._class_oids.get(name.removeprefix("public."))
            if oid is None:
                raise UndefinedTable(f'relation "{text}" does not exist')
        name, kind, relowner = self._classes[oid]
        if kind != "S":
            raise WrongObjectType(f'"{name}" is not a sequence')
        if self._is_superuser(role):
            return True
        table = self._owning_table.get(oid)
        if table is not None:
            owner_acl = self._acls.get(table_key(table))
            owner = owner_acl.owner if owner_acl is not None else self._default_owner
        else:
            owner = relowner
        found = self._acls.get(table_key(oid))
        acl = ObjectAcl("sequence", owner)
        if found is not None:  # a copy, handed to the owner of the table now
            acl = ObjectAcl(
                "sequence", found.owner, None if found.items is None else [*found.items]
            )
            acl.change_owner(owner)
        mine = self._privileges_of(role) if self._privileges_of else frozenset((role,))
        return bool(set(letters) & acl.held(mine, options=options))

    def has_function(self, a: Any, b: Any, c: Any) -> bool | None:
        if a is None or b is None:
            return None
        role, target, wanted = self._args(a, b, c)
        _, options = _wanted(wanted, {"EXECUTE": "X"})
        if isinstance(target, int):
            return self._public(role, options) if target in self._proc_oids else None
        text = str(target).strip()
        if "(" not in text:
            raise InvalidTextRepresentation("expected a left parenthesis")
        name, args = text.split("(", 1)
        inner = args.rsplit(")", 1)[0].strip()
        count = len(inner.split(",")) if inner else 0
        if count not in self._procs.get(name.strip().lower().removeprefix("pg_catalog."), ()):
            raise UndefinedFunction(f'function "{text}" does not exist')
        return self._public(role, options)

    def has_type(self, a: Any, b: Any, c: Any) -> bool | None:
        if a is None or b is None:
            return None
        role, target, wanted = self._args(a, b, c)
        _, options = _wanted(wanted, {"USAGE": "U"})
        if isinstance(target, int):
            return self._public(role, options) if target in self._types.values() else None
        if type_oid(self._types, str(target)) is None:
            raise UndefinedObject(f'type "{target}" does not exist')
        return self._public(role, options)

    def has_language(self, a: Any, b: Any, c: Any) -> bool | None:
        if a is None or b is None:
            return None
        role, target, wanted = self._args(a, b, c)
        _, options = _wanted(wanted, {"USAGE": "U"})
        if isinstance(target, int):
            if target not in _LANGUAGES.values():
                return None
        elif str(target).strip().lower() not in _LANGUAGES:
            raise UndefinedObject(f'language "{target}" does not exist')
        return self._public(role, options)

    def _public(self, role: str, options: bool) -> bool:
        """What PUBLIC holds by default: the privilege, but no grant option (which only the
        owner, a superuser, has)."""
        return not options or self._is_superuser(role)

    def has_tablespace(self, a: Any, b: Any, c: Any) -> bool | None:
        if a is None or b is None:
            return None
        role, target, wanted = self._args(a, b, c)
        _wanted(wanted, {"CREATE": "C"})
        if isinstance(target, int):
            if target not in self._tablespaces.values():
                return None
        elif str(target) not in self._tablespaces:
            raise UndefinedObject(f'tablespace "{target}" does not exist')
        return self._is_superuser(role)

    def has_parameter(self, a: Any, b: Any, c: Any) -> bool | None:
        if a is None or b is None:
            return None
        role, _, wanted = self._args(a, b, c)
        _wanted(wanted, {"SET": "s", "ALTER SYSTEM": "A"})
        return self._is_superuser(role)

    def has_foreign_data_wrapper(self, a: Any, b: Any, c: Any) -> bool | None:
        return self._nothing(a, b, c, "foreign-data wrapper")

    def has_server(self, a: Any, b: Any, c: Any) -> bool | None:
        return self._nothing(a, b, c, "server")

    def _nothing(self, a: Any, b: Any, c: Any, kind: str) -> bool | None:
        """An object kind of which none exists: NULL for an OID, 42704 for a name."""
        if a is None or b is None:
            return None
        _, target, wanted = self._args(a, b, c)
        _wanted(wanted, {"USAGE": "U"})
        if isinstance(target, int):
            return None
        raise UndefinedObject(f'{kind} "{target}" does not exist')


def _wanted(text: Any, known: dict[str, str]) -> tuple[str, bool]:
    letters = []
    options = False
    for part in str(text).split(","):
        words = part.strip().upper().split()
        if words[-3:] == ["WITH", "GRANT", "OPTION"]:
            options = True
            words = words[:-3]
        name = " ".join(words)
        if name not in known:
            raise InvalidParameterValue(f'unrecognized privilege type: "{part.strip()}"')
        letters.append(known[name])
    return "".join(letters), options


_FUNCTIONS = (
    "sequence", "function", "type", "language", "tablespace", "parameter",
    "foreign_data_wrapper", "server",
)  # fmt: skip


def register(duck: duckdb.DuckDBPyConnection, current: Callable[[], ObjectPrivileges]) -> None:
    """Create each function's ``nyp_*`` UDF and ``pgf_*`` macro on the catalog DuckDB."""
    for kind in _FUNCTIONS:
        duck.create_function(  # type: ignore[call-overload]  # DuckDB's stubs name only types
            f"{_UDF}has_{kind}",
            _dispatch(current, kind),
            ["VARCHAR"] * 3,
            "BOOLEAN",
            null_handling="special",
        )
        duck.execute(
            f"CREATE MACRO {PREFIX}has_{kind}_privilege(a, b, c := NULL) AS "
            f"{_UDF}has_{kind}(a::VARCHAR, b::VARCHAR, c::VARCHAR)"
        )


def _dispatch(current: Callable[[], ObjectPrivileges], kind: str) -> Callable[..., Any]:
    def call(a: Any, b: Any, c: Any) -> Any:
        return getattr(current(), f"has_{kind}")(_number(a), _number(b), c)

    return call


def _number(value: Any) -> Any:
    return int(value) if isinstance(value, str) and value.isdigit() else value


def names() -> frozenset[str]:
    return frozenset(f"has_{kind}_privilege" for kind in _FUNCTIONS)
