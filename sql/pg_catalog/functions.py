"""PostgreSQL's catalog functions and reg* casts, answered from the emulated catalog rows.

Clients call ``format_type``, ``pg_get_indexdef``, ``col_description``,
``'t'::regclass`` ... on pg_catalog rows.  ``CatalogFunctions`` answers them
from lookups built out of the same ``CatalogRows`` the relations hold; each
is registered on the session's catalog DuckDB as ``nyf_<name>`` with a
``pgf_<name>`` macro in front giving PostgreSQL's optional arguments.  The
rewriter renames a call ``f(...)`` to ``pgf_f(...)``, so DuckDB's own
pg_catalog functions of the same names never answer in their place.  These
run once per catalog row a client asks about, never over user data.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import duckdb

from sql.common.names import fold, quote_ident
from sql.execution.advisory_locks import SessionAdvisoryLocks
from sql.execution.notifications import PAYLOAD_LIMIT, Listener
from sql.pg_catalog import keywords
from sql.pg_catalog.builtin_types import TYPE_BY_OID
from sql.pg_catalog.catalog_rows import (
    INFORMATION_SCHEMA_OID,
    PG_CATALOG_OID,
    PUBLIC_OID,
    CatalogRows,
)
from sql.pg_catalog.relations import RELATIONS
from sql.pg_catalog.size_pretty import size_pretty
from storage.errors import (
    AmbiguousFunction,
    FeatureNotSupported,
    InvalidParameterValue,
    InvalidSchemaName,
    NullValueNotAllowed,
    QueryCanceled,
    UndefinedColumn,
    UndefinedFunction,
    UndefinedObject,
    UndefinedTable,
)

PREFIX = "pgf_"
_UDF = "nyf_"
_SLEEP_SLICE_S = 0.02
_SEARCH_PATH = (PG_CATALOG_OID, PUBLIC_OID, INFORMATION_SCHEMA_OID)
"""The schemas an unqualified relation name is looked for in, in order (after pg_temp)."""
_VISIBLE = (PG_CATALOG_OID, PUBLIC_OID)
"""PostgreSQL's default path: regclass_out shows a relation elsewhere schema-qualified."""

_TYPE_ALIASES = {
    "integer": "int4",
    "int": "int4",
    "bigint": "int8",
    "smallint": "int2",
    "boolean": "bool",
    "real": "float4",
    "double precision": "float8",
    "character varying": "varchar",
    "character": "bpchar",
    "decimal": "numeric",
    "timestamp without time zone": "timestamp",
    "timestamp with time zone": "timestamptz",
}


def _where(predicate: str, pretty: bool) -> str:
    return f" WHERE {predicate}" if pretty else f" WHERE ({predicate})"


def _rows(rows: CatalogRows, relation: str) -> list[dict[str, Any]]:
    names = [c for c, _ in RELATIONS[relation]]
    return [dict(zip(names, r, strict=True)) for r in rows.rows.get(relation, [])]


class CatalogFunctions:
    """Lookups over one snapshot of the catalog rows, and the functions built on them."""

    def __init__(
        self,
        is_cancelled: Callable[[], bool] = lambda: False,
        set_config: Callable[[str, str, bool], str] | None = None,
        advisory: SessionAdvisoryLocks | None = None,
        listener: Listener | None = None,
    ) -> None:
        self._is_cancelled = is_cancelled
        self._listener = listener
        self._set_config = set_config
        self._advisory = advisory
        self.sequence_state: Callable[[str], tuple[int, bool] | None] = lambda name: None
        self.custom_setting: Callable[[str], str | None] = lambda name: None
        """The session's value of a custom ``a.b`` setting (pg_settings does not list them)."""
        """(last_value, is_called) of a sequence by name, from the session's catalog."""
        self.temp_schema = ""
        """The session's own ``pg_temp_<n>``: searched first, and what ``pg_temp.`` names."""
        self.load(CatalogRows())

    def load(self, rows: CatalogRows) -> None:
        self._classes = {r["oid"]: r for r in _rows(rows, "pg_class")}
        self._namespaces = {r["oid"]: r["nspname"] for r in _rows(rows, "pg_namespace")}
        # Name -> OID indexes, so reading a reg* name back costs a lookup, not a search.
        self._named_relations: dict[str, list[tuple[int, int]]] = {}
        for oid, row in self._classes.items():
            self._named_relations.setdefault(row["relname"], []).append((row["relnamespace"], oid))
        self._temp_namespaces = tuple(
            o for o, n in self._namespaces.items() if n == self.temp_schema
        )
        self._namespace_oids: dict[str, int] = {}
        for oid, nspname in self._namespaces.items():
            self._namespace_oids.setdefault(nspname, oid)
        self._roles = {r["oid"]: r["rolname"] for r in _rows(rows, "pg_roles")}
        self._attnames = {
            (r["attrelid"], r["attnum"]): r["attname"] for r in _rows(rows, "pg_attribute")
        }
        self._indexes = {r["indexrelid"]: r for r in _rows(rows, "pg_index")}
        self._constraints = {r["oid"]: r for r in _rows(rows, "pg_constraint")}
        self._descriptions = {
            (r["objoid"], r["objsubid"]): r["description"] for r in _rows(rows, "pg_description")
        }
        self._settings = {r["name"].lower(): r["setting"] for r in _rows(rows, "pg_settings")}
        self._types = {r["typname"]: r["oid"] for r in _rows(rows, "pg_type")}
        self._procs: dict[str, list[tuple[int, int]]] = {}
        for proc in _rows(rows, "pg_proc"):
            self._procs.setdefault(proc["proname"], []).append((proc["oid"], proc["pronargs"]))
        self._view_definitions = {r["viewname"]: r["definition"] for r in _rows(rows, "pg_views")}
        self._index_suffixes = rows.index_suffixes
        self._partition_keys = rows.partition_keys
        self._partition_constraints = rows.partition_constraints
        self._sequence_of = {
            (r["refobjid"], r["refobjsubid"]): r["objid"]
            for r in _rows(rows, "pg_depend")
            if r["deptype"] in ("a", "i")
        }

    # -- the functions ---------------------------------------------------------------------

    def format_type(self, oid: int | None, typmod: int | None) -> str | None:
        if oid is None:
            return None
        if oid == 0:
            return "-"  # InvalidOid, as PostgreSQL's format_type shows it
        info = TYPE_BY_OID.get(oid)
        if info is None:
            return "???"
        if typmod is not None and typmod >= 4:
            if oid == 1700:
                return f"numeric({(typmod - 4) >> 16},{(typmod - 4) & 0xFFFF})"
            if oid in (1043, 1042):
                return f"{info.display}({typmod - 4})"
        return info.display

    def userbyid(self, oid: int | None) -> str | None:
        if oid is None:
            return None
        return self._roles.get(oid, f"unknown (OID={oid})")

    def table_is_visible(self, oid: int | None) -> bool | None:
        if oid is None:
            return None
        row = self._classes.get(oid)
        if row is None:
            return False
        return self._first_relation(row["relname"], self._temp_namespaces + _VISIBLE) == oid

    def _schema_of(self, oid: int) -> str:
        """The schema pg_get_indexdef names a relation in (``pg_temp`` for the session's own)."""
        namespace = self._classes[oid]["relnamespace"]
        if namespace in self._temp_namespaces:
            return "pg_temp"
        return quote_ident(self._namespaces.get(namespace, "public"))

    def my_temp_schema(self, _: int | None) -> int:
        """pg_my_temp_schema(): the session's ``pg_temp_<n>``, 0 until it has a temporary table."""
        return self._temp_namespaces[0] if self._temp_namespaces else 0

    def is_other_temp_schema(self, oid: int | None) -> bool | None:
        if oid is None:
            return None
        name = self._namespaces.get(oid, "")
        return name.startswith("pg_temp_") and name != self.temp_schema

    def indexdef(
        self, oid: int | None, column: int | None, pretty: bool | None = False
    ) -> str | None:
        """pg_get_indexdef; ``pretty`` drops the parentheses around a partial index's WHERE,
        as PostgreSQL's pretty-printer does for a plain comparison."""
        if oid is None:
            return None
        index = self._indexes.get(oid)
        if index is None:
            return None
        table = index["indrelid"]
        names = [quote_ident(self._attnames.get((table, n), "?")) for n in index["indkey"]]
        if column:
            return names[column - 1] if 0 < column <= len(names) else ""
        keys, include = names[: index["indnkeyatts"]], names[index["indnkeyatts"] :]
        unique = "UNIQUE " if index["indisunique"] else ""
        suffix = self._index_suffixes.get(oid)
        return (
            f"CREATE {unique}INDEX {quote_ident(self._classes[oid]['relname'])} ON "
            f"{self._schema_of(table)}.{quote_ident(self._classes[table]['relname'])}"
            f" USING btree ({', '.join(keys)})"
            + (f" INCLUDE ({', '.join(include)})" if include else "")
            + (" NULLS NOT DISTINCT" if index["indnullsnotdistinct"] else "")
            + (_where(index["indpred"], bool(pretty)) if index["indpred"] else "")
            + (f" {suffix}" if suffix else "")
        )

    def partkeydef(self, oid: int | None) -> str | None:
        return None if oid is None else self._partition_keys.get(oid)

    def partition_constraintdef(self, oid: int | None) -> str | None:
        return None if oid is None else self._partition_constraints.get(oid)

    def constraintdef(self, oid: int | None) -> str | None:
        con = self._constraints.get(oid) if oid is not None else None
        if con is None:
            return None
        names = [self._attnames.get((con["conrelid"], n), "?") for n in con["conkey"] or []]
        if con["contype"] == "p":
            return f"PRIMARY KEY ({', '.join(names)})"
        if con["contype"] == "u":
            distinct = " NULLS NOT DISTINCT" if con["conbin"] else ""
            return f"UNIQUE{distinct} ({', '.join(names)})"
        return con["conbin"]

    def description(self, oid: int | None, subid: int | None) -> str | None:
        if oid is None or subid is None:
            return None
        return self._descriptions.get((oid, subid))

    def current_setting(self, name: str | None, missing_ok: bool | None = True) -> str | None:
        """current_setting(name [, missing_ok]): 42704 for an unknown name unless missing_ok;
        custom ``a.b`` names are the session's own (not among the pg_settings rows)."""
        if name is None:
            return None
        value = self._settings.get(name.lower())
        if value is None and "." in name:
            value = self.custom_setting(name.lower())
        if value is None and not missing_ok:
            raise UndefinedObject(f'unrecognized configuration parameter "{name}"')
        return value

    def to_regtype(self, name: str | None) -> int | None:
        return None if name is None else type_oid(self._types, name)

    def viewdef(self, oid: int | None) -> str | None:
        """pg_get_viewdef: the view's query as pg_views shows it."""
        row = self._classes.get(oid) if oid is not None else None
        if row is None or row["relnamespace"] != PUBLIC_OID:
            return None
        return self._view_definitions.get(row["relname"])

    def sequence_value(self, name: str | None) -> int | None:
        """A sequence's last_value column as ``SELECT last_value FROM s`` reads it."""
        state = None if name is None else self.sequence_state(name)
        return state[0] if state is not None else None

    def sequence_called(self, name: str | None) -> bool | None:
        state = None if name is None else self.sequence_state(name)
        return state[1] if state is not None else None

    def sequence_last_value(self, name: str | None) -> int | None:
        """pg_sequences.last_value: NULL until the sequence has handed out a value."""
        state = None if name is None else self.sequence_state(name)
        return state[0] if state is not None and state[1] else None

    def serial_sequence(self, table: str | None, column: str | None) -> str | None:
        """pg_get_serial_sequence: the sequence a column's pg_depend row names."""
        if table is None or column is None:
            return None
        oid = self.regclass_in(table)
        for (relid, attnum), sequence in self._sequence_of.items():
            if relid == oid and self._attnames.get((relid, attnum)) == column:
                row = self._classes[sequence]
                return f"{self._namespaces.get(row['relnamespace'], 'public')}.{row['relname']}"
        if column not in {n for (r, _), n in self._attnames.items() if r == oid}:
            raise UndefinedColumn(f'column "{column}" of relation "{table}" does not exist')
        return None

    def regclass_in(self, name: str | None) -> int | None:
        """``'name'::regclass``: the relation's OID, 42P01 when there is none."""
        oid = self.to_regclass(name)
        if oid is None and name is not None:
            raise UndefinedTable(f'relation "{name}" does not exist')
        return oid

    def regtype_in(self, name: str | None) -> int | None:
        """``'name'::regtype``: the type's OID, 42704 when there is none."""
        oid = self.to_regtype(name)
        if oid is None and name is not None:
            raise UndefinedObject(f'type "{name}" does not exist')
        return oid

    def to_regclass(self, name: str | None) -> int | None:
        if name is None:
            return None
        text = name.strip()
        if text.isdigit():
            return int(text)
        parts = [p.strip('"') if p.startswith('"') else fold(p) for p in text.split(".")]
        if len(parts) > 1:
            if parts[-2] == "pg_temp":
                return self._first_relation(parts[-1], self._temp_namespaces)
            schemas = tuple(o for o, n in self._namespaces.items() if n == parts[-2])
            return self._first_relation(parts[-1], schemas)
        return self._first_relation(parts[-1], self._temp_namespaces + _SEARCH_PATH)

    def _first_relation(self, relname: str, schemas: tuple[int, ...]) -> int | None:
        """The OID of ``relname`` in the first of ``schemas`` holding one."""
        found = dict(self._named_relations.get(relname, ()))
        return next((found[s] for s in schemas if s in found), None)

    def regclass_out(self, oid: int | None) -> str | None:
        """The relation's name, schema-qualified unless the search path finds it by its
        bare name (as PostgreSQL's regclassout), so the name reads back as this OID."""
        if oid is None:
            return None
        row = self._classes.get(oid)
        if row is None:
            return str(oid)
        name = quote_ident(row["relname"])
        if self._first_relation(row["relname"], self._temp_namespaces + _VISIBLE) == oid:
            return name
        namespace = self._namespaces.get(row["relnamespace"])
        return name if namespace is None else f"{quote_ident(namespace)}.{name}"

    def regnamespace_in(self, name: str | None) -> int | None:
        """``'name'::regnamespace``: the schema's OID, 3F000 when there is none."""
        if name is None:
            return None
        text = name.strip()
        if text.isdigit():
            return int(text)
        wanted = text.strip('"') if text.startswith('"') else fold(text)
        oid = self._namespace_oids.get(wanted)
        if oid is None:
            raise InvalidSchemaName(f'schema "{wanted}" does not exist')
        return oid

    def regnamespace_out(self, oid: int | None) -> str | None:
        if oid is None:
            return None
        return self._namespaces.get(oid, str(oid))

    def sleep(self, seconds: float | None) -> str:
        """pg_sleep: wait, waking every few milliseconds to notice a cancel request."""
        deadline = time.monotonic() + max(seconds or 0.0, 0.0)
        while (left := deadline - time.monotonic()) > 0:
            if self._is_cancelled():
                raise QueryCanceled("canceling statement due to user request")
            time.sleep(min(left, _SLEEP_SLICE_S))
        return ""

    def set_config(self, name: str | None, value: str | None, is_local: bool | None) -> str | None:
        """set_config(name, value, is_local): SET through a function call, as pg_dump starts."""
        if name is None:
            raise NullValueNotAllowed("SET requires parameter name")
        if self._set_config is None:
            raise FeatureNotSupported("set_config is not available here")
        return self._set_config(name, value if value is not None else "", bool(is_local))

    def advisory(self, op: str, key: int | None, key2: int | None) -> bool | None:
        """The pg_advisory_* functions: ``op`` names which; a NULL key gives NULL (strict)."""
        if key is None:
            return None
        if self._advisory is None:
            raise FeatureNotSupported("advisory locks are not available here")
        keys = (key,) if key2 is None else (key, key2)
        if op == "unlock":
            return self._advisory.unlock(keys)
        if op == "unlock_all":
            self._advisory.unlock_all()
            return True
        return self._advisory.lock(keys, transaction="xact" in op, wait=not op.startswith("try"))

    def notify(self, channel: str | None, payload: str | None) -> str:
        """pg_notify(channel, payload): NOTIFY with computed arguments, sent at commit."""
        if not channel:
            raise InvalidParameterValue("channel name cannot be empty")
        if len((payload or "").encode()) >= PAYLOAD_LIMIT:
            raise InvalidParameterValue("payload string too long")
        if self._listener is None:
            raise FeatureNotSupported("pg_notify is not available here")
        self._listener.notify(channel, payload or "")
        return ""

    @staticmethod
    def typeof_name(duck_type: str | None) -> str | None:
        """pg_typeof: PostgreSQL's name for the type DuckDB computed the value in."""
        if duck_type is None:
            return None
        if duck_type.endswith("[]"):
            element = CatalogFunctions.typeof_name(duck_type[:-2])
            return None if element is None else element + "[]"
        if duck_type.startswith("DECIMAL"):
            return "numeric"
        return TYPEOF_NAMES.get(duck_type, duck_type.lower())

    @staticmethod
    def quote_ident(name: str | None) -> str | None:
        return None if name is None else quote_ident(name)

    @staticmethod
    def quote_literal(text: str | None) -> str | None:
        """PostgreSQL's quote_literal: doubled quotes, and E'' when there is a backslash."""
        if text is None:
            return None
        quoted = "'" + text.replace("'", "''").replace("\\", "\\\\") + "'"
        return ("E" + quoted) if "\\" in text else quoted

    def regproc_oid(self, text: str | None) -> int | None:
        """``'name'::regproc::oid`` or ``'name(args)'::regprocedure::oid`` (psql's ``\\sf``):
        the function's OID from pg_proc; 42883 if none, 42725 if a bare name names several."""
        if text is None:
            return None
        name, paren, args = text.strip().partition("(")
        name = name.strip().lower().removeprefix("pg_catalog.").strip('"')
        found = self._procs.get(name, [])
        if paren:
            inner = args.rsplit(")", 1)[0].strip()
            count = len(inner.split(",")) if inner else 0
            found = [p for p in found if p[1] == count]
        if not found:
            raise UndefinedFunction(f'function "{text.strip()}" does not exist')
        if len(found) > 1:
            raise AmbiguousFunction(f'more than one function named "{text.strip()}"')
        return found[0][0]

    @staticmethod
    def functiondef(oid: int | None) -> str | None:
        """pg_get_functiondef: nyala's functions are built in, with no SQL source to show."""
        if oid is None:
            return None
        raise FeatureNotSupported(
            "pg_get_functiondef is not supported: nyala's functions are built in and have"
            " no definition to show"
        )

    @staticmethod
    def size_pretty(text: str | None, duck_type: str | None) -> str | None:
        """PostgreSQL 15's pg_size_pretty, of bigint or numeric (``size_pretty``)."""
        return size_pretty(text, duck_type)


_UDFS: tuple[tuple[str, list[str], str], ...] = (
    ("format_type", ["BIGINT", "BIGINT"], "VARCHAR"),
    ("userbyid", ["BIGINT"], "VARCHAR"),
    ("table_is_visible", ["BIGINT"], "BOOLEAN"),
    ("my_temp_schema", ["BIGINT"], "UINTEGER"),
    ("is_other_temp_schema", ["BIGINT"], "BOOLEAN"),
    ("indexdef", ["BIGINT", "BIGINT", "BOOLEAN"], "VARCHAR"),
    ("constraintdef", ["BIGINT"], "VARCHAR"),
    ("partkeydef", ["BIGINT"], "VARCHAR"),
    ("partition_constraintdef", ["BIGINT"], "VARCHAR"),
    ("description", ["BIGINT", "BIGINT"], "VARCHAR"),
    ("current_setting", ["VARCHAR", "BOOLEAN"], "VARCHAR"),
    ("to_regtype", ["VARCHAR"], "UINTEGER"),
    ("regclass_in", ["VARCHAR"], "UINTEGER"),
    ("serial_sequence", ["VARCHAR", "VARCHAR"], "VARCHAR"),
    ("sequence_last_value", ["VARCHAR"], "BIGINT"),
    ("sequence_value", ["VARCHAR"], "BIGINT"),
    ("viewdef", ["BIGINT"], "VARCHAR"),
    ("sequence_called", ["VARCHAR"], "BOOLEAN"),
    ("to_regclass", ["VARCHAR"], "UINTEGER"),
    ("regtype_in", ["VARCHAR"], "UINTEGER"),
    ("regclass_out", ["BIGINT"], "VARCHAR"),
    ("regnamespace_in", ["VARCHAR"], "UINTEGER"),
    ("regnamespace_out", ["BIGINT"], "VARCHAR"),
    ("size_pretty", ["VARCHAR", "VARCHAR"], "VARCHAR"),
    ("regproc_oid", ["VARCHAR"], "UINTEGER"),
    ("functiondef", ["BIGINT"], "VARCHAR"),
    ("sleep", ["DOUBLE"], "VARCHAR"),
    ("set_config", ["VARCHAR", "VARCHAR", "BOOLEAN"], "VARCHAR"),
    ("typeof_name", ["VARCHAR"], "VARCHAR"),
    ("quote_ident", ["VARCHAR"], "VARCHAR"),
    ("quote_literal", ["VARCHAR"], "VARCHAR"),
    ("advisory", ["VARCHAR", "BIGINT", "BIGINT"], "BOOLEAN"),
    ("notify", ["VARCHAR", "VARCHAR"], "VARCHAR"),
)
# Run every time they are called, never folded or run while a statement is only described.
_SIDE_EFFECTS = {
    "sleep", "set_config", "advisory", "notify", "sequence_last_value", "sequence_value",
    "sequence_called",
}  # fmt: skip

# DuckDB's typeof() names for the types PostgreSQL's pg_typeof names differently.
TYPEOF_NAMES = {
    "INTEGER": "integer",
    "BIGINT": "bigint",
    "SMALLINT": "smallint",
    "BOOLEAN": "boolean",
    "VARCHAR": "text",
    "DOUBLE": "double precision",
    "FLOAT": "real",
    "DATE": "date",
    "TIME": "time without time zone",
    "TIMESTAMP": "timestamp without time zone",
    "TIMESTAMP WITH TIME ZONE": "timestamp with time zone",
    "INTERVAL": "interval",
    "BLOB": "bytea",
    "UUID": "uuid",
    "JSON": "json",
    "UINTEGER": "oid",
    "HUGEINT": "numeric",
    "NULL": "unknown",
    '"NULL"': "unknown",
}


def _dispatch(current: Callable[[], CatalogFunctions], name: str, arity: int) -> Callable[..., Any]:
    """A function of exactly ``arity`` arguments (DuckDB reads the signature) calling ``name``."""
    if arity == 1:

        def one(a: Any) -> Any:
            return getattr(current(), name)(a)

        return one

    if arity == 2:

        def two(a: Any, b: Any) -> Any:
            return getattr(current(), name)(a, b)

        return two

    def three(a: Any, b: Any, c: Any) -> Any:
        return getattr(current(), name)(a, b, c)

    return three


def register(duck: duckdb.DuckDBPyConnection, current: Callable[[], CatalogFunctions]) -> None:
    """Create the ``nyf_*`` functions and the ``pgf_*`` macros on ``duck``.

    Each call goes to ``current()``, the CatalogFunctions of the session whose
    query is running, so one DuckDB can serve every session.
    """
    for name, params, returns in _UDFS:
        # DuckDB takes type names as strings; its stubs name only DuckDBPyType.
        duck.create_function(  # type: ignore[call-overload]
            _UDF + name,
            _dispatch(current, name, len(params)),
            params,
            returns,
            null_handling="special",
            side_effects=name in _SIDE_EFFECTS,
        )
    for statement in create_statements():
        duck.execute(statement)


MACROS: dict[str, str] = {
    "format_type(t, m)": "nyf_format_type(t, m)",
    "pg_get_userbyid(r)": "nyf_userbyid(r)",
    "pg_table_is_visible(r)": "nyf_table_is_visible(r)",
    "pg_my_temp_schema()": "nyf_my_temp_schema(0)",
    "pg_is_other_temp_schema(n)": "nyf_is_other_temp_schema(n)",
    "pg_type_is_visible(r)": "true",
    "pg_get_expr(e, r, p := false)": "e",
    "pg_get_indexdef(idx, col := 0, p := false)": "nyf_indexdef(idx, col, p)",
    "pg_get_constraintdef(con, p := false)": "nyf_constraintdef(con)",
    "pg_get_triggerdef(t, p := false)": "NULL::VARCHAR",
    "pg_get_statisticsobjdef_columns(s)": "NULL::VARCHAR",
    "pg_relation_is_publishable(r)": "false",
    "pg_get_serial_sequence(t, c)": "nyf_serial_sequence(t, c)",
    "pg_collation_is_visible(c)": "true",
    "pg_encoding_to_char(e)": "CASE WHEN e = 6 THEN 'UTF8' ELSE 'SQL_ASCII' END",
    "obj_description(o, k := 'pg_class')": "nyf_description(o, 0)",
    "shobj_description(o, k)": "NULL::VARCHAR",
    "col_description(o, n)": "nyf_description(o, n)",
    "current_setting(n, missing_ok := false)": "nyf_current_setting(n, missing_ok)",
    "to_regtype(n)": "nyf_to_regtype(n)",
    "to_regclass(n)": "nyf_to_regclass(n)",
    "regclass_in(n)": "nyf_regclass_in(n)",
    "regclass_out(r)": "nyf_regclass_out(r)",
    "regtype_in(n)": "nyf_regtype_in(n)",
    "regtype_out(t)": "nyf_format_type(t, NULL)",
    "regnamespace_in(n)": "nyf_regnamespace_in(n)",
    "regnamespace_out(n)": "nyf_regnamespace_out(n)",
    "regproc_in(n)": "regexp_replace(trim(n), '^pg_catalog\\.', '')",
    "regrole_out(r)": "nyf_userbyid(r)",
    "regproc_out(r)": "r",
    "regproc_oid(n)": "nyf_regproc_oid(n)",
    "pg_get_functiondef(f)": "nyf_functiondef(f)",
    "_pg_expandarray(a)": "unnest(list_transform(a, lambda v, i: {'x': v, 'n': i}))",
    "pg_get_partkeydef(r)": "nyf_partkeydef(r)",
    # A regclass argument given as an OID or as a relation's name.
    "regclass_arg(r)": (
        "CASE WHEN TRY_CAST(r AS UINTEGER) IS NOT NULL THEN TRY_CAST(r AS UINTEGER) "
        "ELSE nyf_regclass_in(r::VARCHAR) END"
    ),
    "pg_get_partition_constraintdef(r)": "nyf_partition_constraintdef(r)",
    "pg_get_viewdef(r, p := false)": "nyf_viewdef(r)",
    "pg_get_function_result(f)": "NULL::VARCHAR",
    "pg_get_function_sqlbody(f)": "NULL::VARCHAR",
    "pg_tablespace_location(t)": "''",
    "pg_statistics_obj_is_visible(s)": "true",
    "pg_get_function_arguments(f)": "NULL::VARCHAR",
    "pg_size_pretty(s)": "nyf_size_pretty(s::VARCHAR, typeof(s))",
    "pg_table_size(r)": "0::BIGINT",
    "pg_relation_size(r, f := 'main')": "0::BIGINT",
    "pg_total_relation_size(r)": "0::BIGINT",
    "pg_indexes_size(r)": "0::BIGINT",
    "pg_database_size(d)": "0::BIGINT",
    "pg_sleep(s)": "nyf_sleep(s)",
    "set_config(n, v, l)": "nyf_set_config(n, v, l)",
    "pg_typeof(v)": "nyf_typeof_name(typeof(v))",
    "pg_notify(c, p)": "nyf_notify(c, p)",
    "pg_advisory_lock(a, b := NULL)": "CASE WHEN nyf_advisory('lock', a, b) THEN '' END",
    "pg_try_advisory_lock(a, b := NULL)": "nyf_advisory('try_lock', a, b)",
    "pg_advisory_xact_lock(a, b := NULL)": "CASE WHEN nyf_advisory('xact_lock', a, b) THEN '' END",
    "pg_try_advisory_xact_lock(a, b := NULL)": "nyf_advisory('try_xact_lock', a, b)",
    "pg_advisory_unlock(a, b := NULL)": "nyf_advisory('unlock', a, b)",
    "pg_advisory_unlock_all()": "CASE WHEN nyf_advisory('unlock_all', 0, NULL) THEN '' END",
    "quote_ident(s)": "nyf_quote_ident(s)",
    "quote_literal(v)": "nyf_quote_literal(v::VARCHAR)",
    "quote_nullable(v)": "coalesce(nyf_quote_literal(v::VARCHAR), 'NULL')",
    "pg_partition_ancestors(r)": "unnest([r::UINTEGER])",
    "pg_is_in_recovery()": "false",
    "pg_sequence_last_value(r)": "nyf_sequence_last_value(nyf_regclass_out(r))",
    # A sequence read as a relation (sql/pg_catalog/sequence_relations.py).
    "pg_sequence_row_value(n)": "nyf_sequence_value(n)",
    "pg_sequence_row_called(n)": "nyf_sequence_called(n)",
    # The built-in ACL of an object of kind k owned by role o (pg_dump compares with it).
    "acldefault(k, o)": "CASE k "
    "WHEN 'r' THEN [nyf_userbyid(o) || '=arwdDxt/' || nyf_userbyid(o)] "
    "WHEN 's' THEN [nyf_userbyid(o) || '=rwU/' || nyf_userbyid(o)] "
    "WHEN 'n' THEN [nyf_userbyid(o) || '=UC/' || nyf_userbyid(o)] "
    "WHEN 'd' THEN ['=Tc/' || nyf_userbyid(o), nyf_userbyid(o) || '=CTc/' || nyf_userbyid(o)] "
    "WHEN 'f' THEN ['=X/' || nyf_userbyid(o), nyf_userbyid(o) || '=X/' || nyf_userbyid(o)] "
    "WHEN 'T' THEN ['=U/' || nyf_userbyid(o), nyf_userbyid(o) || '=U/' || nyf_userbyid(o)] "
    "WHEN 'l' THEN ['=U/' || nyf_userbyid(o), nyf_userbyid(o) || '=U/' || nyf_userbyid(o)] "
    "ELSE []::VARCHAR[] END",
    "pg_postmaster_start_time()": "NULL::TIMESTAMPTZ",
}

TABLE_MACROS: dict[str, str] = {
    "pg_partition_ancestors(r)": (
        "WITH RECURSIVE up(relid, depth) AS (SELECT pgf_regclass_arg(r), 0 UNION ALL "
        "SELECT i.inhparent, up.depth + 1 FROM up JOIN pgc.pg_inherits i ON i.inhrelid = up.relid) "
        "SELECT relid, depth FROM up WHERE relid IN (SELECT oid FROM pgc.pg_class) ORDER BY depth"
    ),
    "pg_partition_tree(r)": (
        "WITH RECURSIVE down(relid, parentrelid, level) AS ("
        "SELECT pgf_regclass_arg(r), "
        "(SELECT inhparent FROM pgc.pg_inherits WHERE inhrelid = pgf_regclass_arg(r)), 0 "
        "UNION ALL SELECT i.inhrelid, i.inhparent, down.level + 1 FROM down "
        "JOIN pgc.pg_inherits i ON i.inhparent = down.relid) "
        "SELECT d.relid, d.parentrelid, c.relkind <> 'p' AS isleaf, d.level FROM down d "
        "JOIN pgc.pg_class c ON c.oid = d.relid ORDER BY d.level, d.relid"
    ),
    "pg_options_to_table(o)": "SELECT split_part(x, '=', 1) AS option_name, "
    "substr(x, strpos(x, '=') + 1) AS option_value FROM (SELECT unnest(o) AS x)",
}


TABLE_MACROS["pg_get_keywords()"] = keywords.keywords_body()

USER_QUERY_FUNCTIONS = frozenset({"quote_literal", "quote_nullable"})
"""Functions the user-query planner computes as well (``planner.transpile``): calling one
does not by itself make a statement a catalog query."""


def type_oid(types: dict[str, int], name: str) -> int | None:
    """The OID of the type ``name`` spells (an alias, an array, an OID), by pg_type's names."""
    text = re.sub(r"^pg_catalog\.", "", name.strip().lower()).strip('"')
    if text.isdigit():
        return int(text)
    array = text.endswith("[]")
    base = _TYPE_ALIASES.get(text.removesuffix("[]"), text.removesuffix("[]"))
    return types.get(("_" + base) if array else base)


def names() -> frozenset[str]:
    """Function names (without the prefix) the rewriter sends to these macros."""
    return frozenset(spec.split("(")[0] for spec in (*MACROS, *TABLE_MACROS))


def create_statements() -> list[str]:
    return [f"CREATE MACRO {PREFIX}{spec} AS {body}" for spec, body in MACROS.items()]


def table_macro_statements() -> list[str]:
    """The table macros (``pg_partition_tree`` ...), which read the ``pgc`` relations and so
    are made once those exist."""
    return [f"CREATE MACRO {PREFIX}{spec} AS TABLE {body}" for spec, body in TABLE_MACROS.items()]
