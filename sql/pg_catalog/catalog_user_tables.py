"""The user tables a catalog query reads: each pointed at a view of its own, then scanned.

A catalog query may read user tables beside the catalogs (``SELECT pg_sleep(1) FROM t``, a
join of ``pg_class`` with a table).  Each reference becomes a DuckDB view name, registered
as a ``ScanSource`` at the statement's snapshot while the query runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import duckdb
from sqlglot import exp

from catalog.catalog import Catalog
from catalog.table import TableInfo
from sql.common.names import identifier_name
from sql.execution import system_view_rows
from sql.execution.executor import ScanSource
from sql.pg_catalog import ast_nodes, system_columns
from sql.pg_catalog.catalog_rewrite import schema_of, system_table
from sql.planner import system_views
from sql.planner.transpile import scan_view_table
from storage.errors import UndefinedTable
from storage.predicate import ScanSpec
from storage.transaction import Transaction


@dataclass(frozen=True, slots=True)
class UserTable:
    """A user table (or nyala system view) a catalog query reads, under its DuckDB view name."""

    view: str
    table: TableInfo
    in_union: bool = False
    """A leaf partition read in a partitioned table's union (its rows carry their tableoid)."""


@dataclass(frozen=True, slots=True)
class ScanContext:
    """What reading user tables in a catalog query needs: the transaction and its snapshot."""

    txn: Transaction
    catalog: Catalog
    check_cancel: Callable[[], None]
    snapshot: int | None = None


def _user_table_name(node: exp.Table) -> str:
    """The catalog name of a user table reference; 42P01 for another schema's."""
    schema = schema_of(node)
    name = identifier_name(node)
    if schema not in (None, "public"):
        raise UndefinedTable(f'relation "{schema}.{name}" does not exist')
    return name


def replace_user_tables(
    ast: exp.Expr,
    find_table: Callable[[str], TableInfo],
    has_user_table: Callable[[str], bool],
    *,
    per_row_tableoid: bool | None = None,
) -> tuple[UserTable, ...]:
    """Point each user table reference at a view of its own; the name stays as the alias.
    Where the query names ``tableoid``, a partitioned table becomes the union of its leaves'
    views, each row tagged with its leaf's OID (``per_row_tableoid``: whether it names
    ``tableoid``, when the caller knows)."""
    kinds = (
        (exp.CTE, exp.Table) if per_row_tableoid is not None else (exp.CTE, exp.Table, exp.Column)
    )
    nodes = ast_nodes.nodes_of(ast, *kinds)
    if per_row_tableoid is None:
        per_row_tableoid = system_columns.any_tableoid(nodes[exp.Column])
    ctes = {cte.alias_or_name for cte in nodes[exp.CTE]}
    found: list[UserTable] = []
    for node in nodes[exp.Table]:
        if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
            continue
        if node.name in ctes and schema_of(node) is None:
            continue
        if system_table(node, has_user_table) is not None:
            continue
        name = _user_table_name(node)
        table = find_table(name)
        alias = node.args.get("alias")
        if alias is None:
            alias = exp.TableAlias(this=exp.to_identifier(name))
        leaves = system_columns.leaf_partitions(table) if per_row_tableoid else []
        if leaves:
            views = []
            for leaf in leaves:
                views.append((f"__nyala_user_{len(found)}", find_table(leaf)))
                found.append(UserTable(*views[-1], in_union=True))
            union = system_columns.partitions_union(
                node, [(v, t.oid) for v, t in views], alias.copy()
            )
            if union is not None:
                node.replace(union)
                continue
            del found[-len(leaves) :]
        view = f"__nyala_user_{len(found)}"
        found.append(UserTable(view, table))
        node.replace(scan_view_table(node, view, alias.copy()))
    if found:
        for column in ast.find_all(exp.Column):  # again: a partitions' union adds columns
            db = column.args.get("db")
            if db is not None and identifier_name(db) == "public":
                column.set("db", None)  # public.t.c: the table is known by its alias t
    return tuple(found)


def register_user_tables(
    duck: duckdb.DuckDBPyConnection,
    user_tables: Sequence[UserTable],
    catalog: Catalog,
    scan: ScanContext | None,
) -> None:
    """Register each user table the query reads: a scan at the statement's snapshot (or,
    with no transaction, just its schema, which describing needs)."""
    txn = scan.txn if scan is not None else None
    for user in user_tables:
        table = user.table
        if system_views.is_system_view(table):
            duck.register(user.view, system_view_rows.contents(table, catalog, txn))
            continue
        columns = list(table.columns)
        spec = ScanSpec(projection=tuple(c.id for c in columns))
        source = ScanSource(
            txn,
            table,
            columns,
            spec,
            scan.check_cancel if scan is not None else lambda: None,
            snapshot=scan.snapshot if scan is not None else None,
        )
        duck.register(user.view, source)


def unregister_user_tables(
    duck: duckdb.DuckDBPyConnection, user_tables: Sequence[UserTable]
) -> None:
    for user in user_tables:
        duck.unregister(user.view)
