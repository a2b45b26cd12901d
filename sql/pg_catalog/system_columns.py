"""System columns: ``tableoid`` as PostgreSQL gives every relation, catalogs and tables.

pg_dump reads ``x.tableoid`` beside each catalog row (to key its dumpable
objects by catalog and OID), and ORMs and psql's ``\\d+`` read
``tableoid::regclass`` beside a table's rows.  Neither holds such a column, so a
reference to one is replaced by the OID of the relation it names, as a
constant: ``SELECT *`` stays without it, as in PostgreSQL.  A query naming
``tableoid`` is a catalog query (``is_system_query``), which gives it the type oid.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from sqlglot import exp

from catalog.partition_views import tree_of
from catalog.table import TableInfo
from sql.common.names import identifier_name
from sql.pg_catalog.relations import RELATIONS, relation_oid
from storage.errors import FeatureNotSupported

_OID = exp.DataType.build("UINTEGER", dialect="duckdb")  # the emulated catalogs' oid type
TABLEOID = "tableoid"


def names_tableoid(ast: exp.Expr) -> bool:
    """Whether ``ast`` names a column ``tableoid`` (no table may have one of its own)."""
    return any_tableoid(ast.find_all(exp.Column))


def any_tableoid(columns: Iterable[exp.Expr]) -> bool:
    """Whether one of ``columns`` (exp.Column nodes) is a column ``tableoid``."""
    return any(
        column.name.lower() == "tableoid" and isinstance(column.this, exp.Identifier)
        for column in columns
    )


def leaf_partitions(table: TableInfo) -> list[str]:
    """The leaf partitions whose rows ``table`` reads, when they are others than itself (a
    partitioned table, or a partition partitioned further): each row's ``tableoid``."""
    tree = tree_of(table)
    if tree is None:
        return []
    parent = table.name if tree.find(table.name) is not None else None
    if not tree.children(parent):
        return []
    below = tree.subtree(parent) if parent is not None else list(tree.nodes)
    return [n.name for n in below if not tree.children(n.name)]


def table_oid(table: TableInfo) -> int:
    """The ``tableoid`` of every row of ``table``, one that is no partitioned table."""
    if leaf_partitions(table):
        raise FeatureNotSupported(
            f'tableoid of "{table.name}", whose rows lie in its partitions, is not supported'
        )
    return table.oid


def partitions_union(
    node: exp.Table, leaves: list[tuple[str, int]], alias: exp.TableAlias
) -> exp.Expr | None:
    """A partitioned table read with its rows' ``tableoid``: the UNION ALL of its leaves'
    scan views (``leaves``: view name and partition OID), each row tagged with its leaf's
    OID as the column ``tableoid``.  None where the reference carries joins of its own."""
    if any(node.args.get(arg) for arg in ("joins", "laterals", "sample")):
        return None
    parts = [
        exp.select(exp.Star(), exp.alias_(exp.cast(exp.Literal.number(oid), _OID), TABLEOID)).from_(
            exp.Table(this=exp.to_identifier(view, quoted=True))
        )
        for view, oid in leaves
    ]
    union: exp.Query = parts[0]
    for part in parts[1:]:
        union = exp.union(union, part, distinct=False)
    subquery = exp.Subquery(this=union, alias=alias)
    subquery.meta[TABLEOID] = True
    return subquery


def hide_tableoid_from_stars(ast: exp.Expr) -> None:
    """``*`` and ``t.*`` leave out the ``tableoid`` a partitions union adds, as PostgreSQL's
    ``*`` leaves out system columns."""
    for select in ast.find_all(exp.Select):
        for projection in select.expressions:
            star = projection.this if isinstance(projection, exp.Column) else projection
            if isinstance(star, exp.Star) and _reads_union(select):
                star.set("except_", [exp.column(TABLEOID)])


def _reads_union(select: exp.Select) -> bool:
    sources = [select.args.get("from_") or select.args.get("from")]
    sources += list(select.args.get("joins") or [])
    return any(
        source is not None
        and isinstance(source.this, exp.Subquery)
        and source.this.meta.get(TABLEOID) is True
        for source in sources
    )


def replace_tableoid(
    ast: exp.Expr,
    is_catalog: Callable[[exp.Table], bool],
    user_tables: Mapping[str, TableInfo] | None = None,
) -> None:
    """Replace ``[alias.]tableoid`` over a catalog relation of ``ast``, or over a user table
    read through a scan view (``user_tables`` by view name), by that relation's OID."""
    tables = user_tables or {}

    def relation_of(table: exp.Table) -> int | TableInfo | None:
        if not isinstance(table.this, exp.Identifier):
            return None
        name = identifier_name(table)
        if name in tables:
            return tables[name]
        return relation_oid(name) if name in RELATIONS and is_catalog(table) else None

    by_alias: dict[str, int | TableInfo] = {}
    for table in ast.find_all(exp.Table):
        relation = relation_of(table)
        if relation is not None:
            by_alias[table.alias_or_name] = relation
    if not by_alias:
        return
    only = next(iter(by_alias.values())) if len(by_alias) == 1 else None
    for column in list(ast.find_all(exp.Column)):
        if column.name.lower() != "tableoid" or not isinstance(column.this, exp.Identifier):
            continue
        if column.table:
            relation = by_alias.get(column.table)
        else:
            relation = only if only is not None else _in_scope(column, relation_of)
        if relation is not None:
            oid = relation if isinstance(relation, int) else table_oid(relation)
            column.replace(exp.cast(exp.Literal.number(oid), _OID))


def _in_scope(
    column: exp.Column, relation_of: Callable[[exp.Table], int | TableInfo | None]
) -> int | TableInfo | None:
    """The one relation the SELECT around an unqualified ``tableoid`` reads from (its FROM
    and JOINs, not its subqueries)."""
    select = column.find_ancestor(exp.Select)
    if select is None:
        return None
    sources = [select.args.get("from_") or select.args.get("from")]
    sources += list(select.args.get("joins") or [])
    found = []
    for source in sources:
        table = source.this if source is not None else None
        if isinstance(table, exp.Table):
            relation = relation_of(table)
            if relation is not None:
                found.append(relation)
    return found[0] if len(found) == 1 else None
