"""The one in-memory DuckDB the sessions share for catalog queries, and the rows it reads.

It holds the catalog views, macros and functions; each session works on a cursor of it with
its own rows registered as Arrow tables under the names the views read.  Its functions run
on the calling session's thread and find that session's lookups through ``bind``.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Sequence
from typing import Any, Protocol

import duckdb
import pyarrow as pa

from sql.execution import clock_functions, number_formatting, numeric_arithmetic
from sql.pg_catalog import (
    activity,
    array_output,
    functions,
    privilege_rows,
    sequences,
    statement_statistics,
    table_statistics,
)
from sql.pg_catalog.catalog_rewrite import INFO_SCHEMA, SYSTEM_SCHEMA
from sql.pg_catalog.catalog_views import VIEWS as CATALOG_VIEWS
from sql.pg_catalog.information_schema import VIEWS as INFORMATION_SCHEMA_VIEWS
from sql.pg_catalog.relations import RELATIONS
from sql.planner.array_dimensions import macro_statements as array_macro_statements
from storage.errors import FeatureNotSupported

_ARROW_TYPES = {
    "UINTEGER": pa.uint32(),
    "VARCHAR": pa.string(),
    "INTEGER": pa.int32(),
    "SMALLINT": pa.int16(),
    "USMALLINT": pa.uint16(),
    "BIGINT": pa.int64(),
    "BOOLEAN": pa.bool_(),
    "REAL": pa.float32(),
    "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"),
    "DOUBLE": pa.float64(),
    "DECIMAL(38,0)": pa.decimal128(38, 0),
}


class LiveRows(Protocol):
    """What fills a relation built afresh at each query that reads it."""

    def rows(self, relation: str) -> list[tuple[Any, ...]]: ...


def rows_name(relation: str) -> str:
    return f"__nyala_{relation}_rows"


_ARROW_MADE: dict[str, tuple[list[tuple[Any, ...]], pa.Table]] = {}
"""The Arrow table last made for each relation, with its rows: sessions whose rows are the
same (the system relations' own, and most catalogs between DDL) share it."""


def arrow_rows_of(relation: str, data: list[tuple[Any, ...]]) -> pa.Table:
    """``relation``'s rows as an Arrow table, made again only when they differ."""
    made = _ARROW_MADE.get(relation)
    if made is not None and made[0] == data:
        return made[1]
    table = arrow_rows(RELATIONS[relation], data)
    _ARROW_MADE[relation] = (list(data), table)
    return table


def arrow_rows(columns: Sequence[tuple[str, str]], data: list[tuple[Any, ...]]) -> pa.Table:
    return pa.table(
        {
            col: pa.array([r[i] for r in data], _arrow_type(dtype))
            for i, (col, dtype) in enumerate(columns)
        }
    )


def _arrow_type(duck_type: str) -> pa.DataType:
    if duck_type.endswith("[]"):
        return pa.list_(_arrow_type(duck_type[:-2]))
    return _ARROW_TYPES[duck_type]


_CURRENT = threading.local()
_SHARED_LOCK = threading.Lock()
_SHARED: list[duckdb.DuckDBPyConnection] = []


def bind(
    functions_: functions.CatalogFunctions,
    backends: activity.Activity | None,
    statements: statement_statistics.StatementStatistics | None,
    tables: table_statistics.TableStatistics | None,
    privileges: privilege_rows.PrivilegeLookup,
) -> None:
    """Point the catalog functions run on this thread at one session's lookups."""
    _CURRENT.functions = functions_
    _CURRENT.activity = backends
    _CURRENT.statements = statements
    _CURRENT.tables = tables
    _CURRENT.privileges = privileges


def _current_functions() -> functions.CatalogFunctions:
    current: functions.CatalogFunctions = _CURRENT.functions
    return current


def _current_privileges() -> privilege_rows.PrivilegeLookup:
    current: privilege_rows.PrivilegeLookup = _CURRENT.privileges
    return current


def _bound(part: str, missing: str) -> Any:
    """The calling session's ``part`` (see ``bind``); 0A000 when it keeps none."""
    current = getattr(_CURRENT, part, None)
    if current is None:
        raise FeatureNotSupported(missing)
    return current


def shared_database() -> duckdb.DuckDBPyConnection:
    """The one in-memory DuckDB holding the catalog views, macros and functions.

    Each session works on a cursor of it with its own rows registered under
    the names the views read, so a session's first catalog query costs a
    cursor, not a database.  It runs on one thread, so the catalog functions
    run on the calling session's thread and find its lookups in ``_CURRENT``.
    """
    with _SHARED_LOCK:
        if not _SHARED:
            # integer_division: int / int truncates, as in PostgreSQL (user columns meet here).
            duck = duckdb.connect(
                config={"enable_external_access": False, "threads": 1, "integer_division": True}
            )
            ddl = [
                "SET TimeZone = 'UTC'",
                f"CREATE SCHEMA {SYSTEM_SCHEMA}",
                f"CREATE SCHEMA {INFO_SCHEMA}",
            ]
            for name, columns in RELATIONS.items():
                duck.register(rows_name(name), arrow_rows(columns, []))
                selected = sequences.LIVE_COLUMNS.get(name, "*")
                ddl.append(
                    f"CREATE VIEW {SYSTEM_SCHEMA}.{name} AS "
                    f"SELECT {selected} FROM {rows_name(name)}"
                )
            ddl += [
                f"CREATE VIEW {INFO_SCHEMA}.{name} AS {body}"
                for name, body in INFORMATION_SCHEMA_VIEWS.items()
            ]
            late = [
                f"CREATE VIEW {SYSTEM_SCHEMA}.{name} AS {body}"
                for name, body in CATALOG_VIEWS.items()
            ]
            functions.register(duck, _current_functions)
            array_output.register(duck)
            number_formatting.register(duck)
            numeric_arithmetic.register(duck)
            clock_functions.register(duck)
            activity.register(
                duck, lambda: _bound("activity", "this session has no backend to report")
            )
            statement_statistics.register(
                duck, lambda: _bound("statements", "this session keeps no statement statistics")
            )
            table_statistics.register(
                duck, lambda: _bound("tables", "this session keeps no table statistics")
            )
            privilege_rows.register(duck, _current_privileges)
            duck.execute(";\n".join(ddl + array_macro_statements()))
            duck.execute(";\n".join(functions.table_macro_statements()))
            duck.execute(";\n".join(late))  # they call the pgf_* macros
            _SHARED.append(duck)
            atexit.register(duck.close)
        return _SHARED[0]
