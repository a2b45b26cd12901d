"""Run queries over pg_catalog and information_schema on a per-session DuckDB of catalog rows.

A statement that reads a system relation (``pg_catalog.pg_class``, ``pg_type``,
``information_schema.columns`` ...) or calls a catalog function
(``format_type``, ``pg_get_indexdef``, ``pg_sleep`` ...) is rewritten for
DuckDB (schemas renamed, reg* casts and PostgreSQL-only operators turned into
macro calls) and run on a small in-memory DuckDB whose ``pgc`` schema is
refilled from the nyala catalog whenever the catalog, the comments or the
session's settings changed since the last such statement.  User tables it
also reads (``SELECT pg_sleep(1) FROM t``, a join of ``pg_class`` with a
table) become ``ScanSource`` streams at the statement's snapshot registered
beside the catalog views, so one DuckDB query answers both.

The session reaches it all here: ``is_system_query`` (``catalog_rewrite``) tells a catalog
query, ``compile_system_query`` (``catalog_query``) compiles one, and the session's
``SystemCatalog`` refreshes its rows and runs it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from catalog.catalog import Catalog
from catalog.privileges import PrivilegeStore, database_owner
from catalog.roles import RoleStore
from sql.common.datatypes import (
    INT2VECTOR_DUCKDB,
    array_literal,
    to_wire,
    wire_oid,
)
from sql.common.duckdb_errors import translate
from sql.common.result import ResultColumn
from sql.common.time_zones import UTC_ZONE, SessionZone
from sql.execution.advisory_locks import SessionAdvisoryLocks
from sql.execution.context import DatabaseContext
from sql.execution.notifications import Listener
from sql.pg_catalog import (
    activity,
    functions,
    privilege_rows,
    reg_casts,
    statement_statistics,
    table_statistics,
)
from sql.pg_catalog.catalog_duckdb import (
    LiveRows,
    arrow_rows,
    arrow_rows_of,
    bind,
    rows_name,
    shared_database,
)
from sql.pg_catalog.catalog_query import SystemQuery as SystemQuery
from sql.pg_catalog.catalog_query import compile_system_query as compile_system_query
from sql.pg_catalog.catalog_rewrite import is_system_query as is_system_query
from sql.pg_catalog.catalog_rows import CatalogRows, catalog_rows
from sql.pg_catalog.catalog_user_tables import (
    ScanContext,
    register_user_tables,
    unregister_user_tables,
)
from sql.pg_catalog.reg_oids import RegOids
from sql.pg_catalog.relations import RELATIONS
from storage.type_oids import ARRAY_OID, TypeOid


def _expanded_names(names: list[str | None], duck_names: list[str]) -> list[str]:
    """The output names, with DuckDB's for the columns ``*`` (None in ``names``) became."""
    if not names:
        return duck_names
    if None not in names:
        return [n for n in names if n is not None]
    at = names.index(None)
    after = len(names) - at - 1
    star = duck_names[at : len(duck_names) - after]
    return (
        [n for n in names[:at] if n is not None]
        + star
        + [n for n in names[at + 1 :] if n is not None]
    )


def _pg_array_text(values: list[Any] | None) -> str | None:
    return None if values is None else array_literal(values)


def _wire_column(
    array: pa.ChunkedArray | pa.Array, duck_type: str, zone: str = "UTC", oid: int = 0
) -> tuple[Any, int]:
    if duck_type == INT2VECTOR_DUCKDB or oid == TypeOid.OIDVECTOR:
        text = [None if v is None else " ".join(map(str, v)) for v in array.to_pylist()]
        return pa.array(text, pa.string()), oid or TypeOid.INT2VECTOR
    if duck_type.endswith("[]"):
        oid = wire_oid(duck_type, catalog=True)
        return pa.array([_pg_array_text(v) for v in array.to_pylist()], pa.string()), oid
    if duck_type.startswith("STRUCT") or duck_type.startswith("MAP"):
        return pa.array([None if v is None else str(v) for v in array.to_pylist()]), TypeOid.TEXT
    if duck_type == "UINTEGER":
        return to_wire(array, TypeOid.INT8), TypeOid.OID
    oid = wire_oid(duck_type)
    return to_wire(array, oid, zone), oid


class SystemCatalog:
    """One session's in-memory DuckDB holding the emulated catalogs."""

    def __init__(
        self,
        is_cancelled: Callable[[], bool] = lambda: False,
        set_config: Callable[[str, str, bool], str] | None = None,
        advisory: SessionAdvisoryLocks | None = None,
        listener: Listener | None = None,
        backends: activity.Activity | None = None,
        statements: statement_statistics.StatementStatistics | None = None,
        tables: table_statistics.TableStatistics | None = None,
    ) -> None:
        self._duck: duckdb.DuckDBPyConnection | None = None
        self._registered: dict[str, pa.Table] = {}
        self._key: object = None
        self._functions = functions.CatalogFunctions(is_cancelled, set_config, advisory, listener)
        self._reg_oids = RegOids(self._functions)
        self.activity = backends
        self.statements = statements
        self.tables = tables
        self._privileges = privilege_rows.PrivilegeLookup()
        self.zone = UTC_ZONE
        """The session's TimeZone: casts, ``date_trunc`` and timestamptz output follow it."""
        self._zone_set: SessionZone | None = None

    def use_temp_schema(self, schema: str) -> None:
        """The session's ``pg_temp_<n>``, where its temporary tables' names are found."""
        self._functions.temp_schema = schema

    def _connection(self) -> duckdb.DuckDBPyConnection:
        if self._duck is None:
            self._duck = shared_database().cursor()
            self._zone_set = None  # a new cursor starts in the machine's zone
        if not self._registered:
            self._register({name: arrow_rows_of(name, []) for name in RELATIONS})
        bind(self._functions, self.activity, self.statements, self.tables, self._privileges)
        if self.zone != self._zone_set:
            self._duck.execute(f"SET TimeZone = '{self.zone.duckdb}'")
            self._zone_set = self.zone
        return self._duck

    def refresh(self, key: object, build: Callable[[], CatalogRows]) -> None:
        """Swap in fresh rows when ``key`` (catalog version, settings ...) has changed.

        Each relation is a view over an Arrow table registered on the connection,
        so a refresh only registers new Arrow tables.
        """
        if key == self._key:
            self._connection()
            return
        if self._duck is None:
            self._duck = shared_database().cursor()
            self._zone_set = None  # a new cursor starts in the machine's zone
        rows = build()
        self._functions.load(rows)
        self._reg_oids.forget()
        if self.activity is not None:
            role_columns = [c for c, _ in RELATIONS["pg_roles"]]
            name_at, oid_at = role_columns.index("rolname"), role_columns.index("oid")
            self.activity.role_oids = {r[name_at]: r[oid_at] for r in rows.rows.get("pg_roles", [])}
        self._register({name: arrow_rows_of(name, rows.rows.get(name, [])) for name in RELATIONS})
        self._connection()
        self._key = key

    def _register(self, tables: dict[str, pa.Table]) -> None:
        """Register each relation's table on this session's cursor, skipping those already
        registered as that very table (a refresh after DDL changes a few)."""
        assert self._duck is not None
        for name, table in tables.items():
            if self._registered.get(name) is not table:
                self._duck.register(rows_name(name), table)
                self._registered[name] = table

    def refresh_for(
        self,
        db: DatabaseContext,
        user: str,
        settings: Sequence[tuple[str, str, str, str, str, str]],
        cursors: tuple[tuple[str, str, bool], ...],
        prepared: tuple[tuple[int, str, dt.datetime, str, str], ...] = (),
        catalog: Catalog | None = None,
        statements: tuple[tuple[str, str, dt.datetime, tuple[str, ...], bool], ...] = (),
        access: tuple[RoleStore | None, PrivilegeStore] | None = None,
        custom_setting: Callable[[str], str | None] | None = None,
    ) -> None:
        """Refresh from the database's catalog (or ``catalog``, a transaction's own view of
        it), roles and privileges (or ``access``, a transaction's own copies) and comments,
        the session's state (``custom_setting`` gives its custom ``a.b`` settings) and the
        prepared transactions."""
        catalog = catalog if catalog is not None else db.catalog
        self._functions.custom_setting = custom_setting or (lambda name: None)
        role_store, privilege_store = access if access is not None else (db.roles, db.privileges)
        self._functions.sequence_state = catalog.sequence_state_of
        settings = tuple(settings)
        comments = db.comments
        roles = tuple(role_store.all()) if role_store is not None else ()
        memberships = role_store.memberships() if role_store is not None else []
        acls = privilege_store.all()
        key = (
            db.catalog_version, comments.version, user, settings, cursors, roles, prepared,
            privilege_store, privilege_store.version, tuple(memberships), catalog, statements,
        )  # fmt: skip

        def build() -> CatalogRows:
            rows = catalog_rows(
                catalog.tables(), db.name, user, settings, catalog.comments(comments.all()),
                cursors, roles, prepared, catalog.views(), memberships, statements,
                catalog.standalone_sequences(),
            )  # fmt: skip
            owner = database_owner(role_store, user)
            privilege_rows.with_privileges(rows, acls, owner)
            self._privileges.load(acls, list(roles), owner, user, rows, role_store)
            return rows

        self.refresh(key, build)

    def _register_live(self, duck: duckdb.DuckDBPyConnection, query: SystemQuery) -> None:
        for name in query.live:
            source: activity.Activity | LiveRows | None = self.activity
            if name in statement_statistics.RELATIONS:
                source = self.statements
            elif name in table_statistics.RELATIONS:
                source = self.tables
            data = source.rows(name) if source is not None else []
            duck.register(rows_name(name), arrow_rows(RELATIONS[name], data))

    def describe(self, query: SystemQuery, catalog: Catalog) -> tuple[ResultColumn, ...]:
        if query.columns is None:
            duck = self._connection()
            register_user_tables(duck, query.user_tables, catalog, None)
            try:
                relation = duck.sql(query.sql(None))
                types = [str(t) for t in relation.types] if relation is not None else []
                duck_names = list(relation.columns) if relation is not None else []
            except duckdb.Error as exc:
                raise translate(exc) from exc
            finally:
                unregister_user_tables(duck, query.user_tables)
            query.columns = self._columns(query, types, duck_names)
        return query.columns

    def _columns(
        self, query: SystemQuery, types: list[str], duck_names: list[str]
    ) -> tuple[ResultColumn, ...]:
        out = []
        names = _expanded_names(query.names, duck_names)
        for i, duck_type in enumerate(types):
            name = names[i] if i < len(names) else "?column?"
            if duck_type == "VARCHAR[]" and name.endswith("acl"):
                oid = ARRAY_OID[TypeOid.ACLITEM]  # relacl, nspacl, ...: aclitem[], as pg_catalog's
            elif duck_type == "UINTEGER[]" and name in reg_casts.OIDVECTOR_COLUMNS:
                oid = TypeOid.OIDVECTOR
            elif duck_type.endswith("[]") or duck_type == "UINTEGER":
                oid = wire_oid(duck_type, catalog=True)
            elif duck_type.startswith(("STRUCT", "MAP")):
                oid = TypeOid.TEXT
            elif duck_type == "JSON":
                oid = TypeOid.JSON
            else:
                oid = wire_oid(duck_type)
            if duck_type == "VARCHAR" and i in query.reg_columns:
                oid = query.reg_columns[i]
            out.append(ResultColumn(name, oid))
        return tuple(out)

    def run(
        self, query: SystemQuery, params: list[Any] | None, scan: ScanContext | None = None
    ) -> tuple[tuple[ResultColumn, ...], Iterator[pa.RecordBatch]]:
        """Run the query to completion (user tables it reads at ``scan``'s snapshot)."""
        duck = self._connection()
        if query.user_tables:
            assert scan is not None, "a query reading user tables runs in a transaction"
            register_user_tables(duck, query.user_tables, scan.catalog, scan)
        self._register_live(duck, query)
        try:
            relation = duck.sql(query.sql(params or []))
            table = relation.to_arrow_table() if relation is not None else pa.table({})
            types = [str(t) for t in relation.types] if relation is not None else []
        except duckdb.Error as exc:
            raise translate(exc) from exc
        finally:
            unregister_user_tables(duck, query.user_tables)
        columns = self._columns(query, types, table.column_names)
        query.columns = columns
        zone = self.zone.arrow
        arrays = [
            _wire_column(table.column(i), t, zone, columns[i].type_oid)[0]
            for i, t in enumerate(types)
        ]
        arrays = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrays]
        fields = [
            self._reg_oids.field(pa.field(c.name, a.type), a, c.type_oid)
            for c, a in zip(columns, arrays, strict=True)
        ]
        batch = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
        return columns, iter([batch])

    def close(self) -> None:
        if self._duck is not None:
            self._duck.close()
            self._duck = None
            self._registered.clear()
            self._key = None
