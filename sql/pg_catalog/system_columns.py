"""System columns of the emulated catalogs: ``tableoid`` as PostgreSQL gives every relation.

pg_dump reads ``x.tableoid`` beside each catalog row (to key its dumpable
objects by catalog and OID).  The emulated relations hold no such column, so
a reference to one is replaced by the OID of the catalog it names, as a
constant: ``SELECT *`` stays without it, as in PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from sql.common.names import identifier_name
from sql.pg_catalog.relations import RELATIONS, relation_oid

_OID = exp.DataType.build("UINTEGER", dialect="duckdb")  # the emulated catalogs' oid type


def replace_tableoid(ast: exp.Expr, is_catalog: Callable[[exp.Table], bool]) -> None:
    """Replace ``[alias.]tableoid`` over a catalog relation of ``ast`` by its OID."""
    by_alias: dict[str, int] = {}
    for table in ast.find_all(exp.Table):
        name = identifier_name(table) if isinstance(table.this, exp.Identifier) else ""
        if name in RELATIONS and is_catalog(table):
            by_alias[table.alias_or_name] = relation_oid(name)
    if not by_alias:
        return
    only = next(iter(by_alias.values())) if len(by_alias) == 1 else None
    for column in list(ast.find_all(exp.Column)):
        if column.name.lower() != "tableoid" or not isinstance(column.this, exp.Identifier):
            continue
        oid = by_alias.get(column.table) if column.table else only or _in_scope(column, is_catalog)
        if oid is not None:
            column.replace(exp.cast(exp.Literal.number(oid), _OID))


def _in_scope(column: exp.Column, is_catalog: Callable[[exp.Table], bool]) -> int | None:
    """The OID of the one catalog the SELECT around an unqualified ``tableoid`` reads from
    (its FROM and JOINs, not its subqueries)."""
    select = column.find_ancestor(exp.Select)
    if select is None:
        return None
    sources = [select.args.get("from_") or select.args.get("from")]
    sources += list(select.args.get("joins") or [])
    found = set()
    for source in sources:
        table = source.this if source is not None else None
        if isinstance(table, exp.Table) and isinstance(table.this, exp.Identifier):
            name = identifier_name(table)
            if name in RELATIONS and is_catalog(table):
                found.add(relation_oid(name))
    return found.pop() if len(found) == 1 else None
