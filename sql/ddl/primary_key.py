"""ALTER TABLE ... ADD [CONSTRAINT name] PRIMARY KEY (cols) on a table created without a key.

pg_dump and ``pgbench -i`` create tables bare, load them, then add the key.
A Kudu tablet's key is fixed, so the rows are copied (``rewrite``) into new
tablets keyed by those columns, which ``Catalog.rekey_table`` swaps in only
once that has committed.  A table partitioned by PARTITION BY is rekeyed
whole, every leaf into a new tablet; its partitions share its key, so the key
pg_dump adds to each partition (before or after the root's) keys the root,
and the same key again changes nothing.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.catalog import Catalog
from catalog.rekey import has_hidden_key
from catalog.table import TableInfo
from sql.common.names import identifier_name
from sql.ddl import indexes, rewrite, security_labels
from sql.ddl.partitions import Evaluator
from sql.ddl.tables import KEY_FORBIDDEN
from storage.errors import (
    DuplicateColumn,
    FeatureNotSupported,
    InvalidTableDefinition,
)


def add_primary_key(
    table: TableInfo,
    key: exp.PrimaryKey,
    constraint_name: str | None,
    catalog: Catalog,
    evaluate: Evaluator,
    *,
    in_block: bool,
) -> None:
    """Rewrite ``table`` keyed by the columns ``key`` names (all or nothing), partitioned as
    its nyala security label says if it has one (``security_labels``)."""
    if in_block:
        raise FeatureNotSupported(
            "ALTER TABLE ... ADD PRIMARY KEY inside a transaction block is not supported",
            hint="Run it on its own: the table is rewritten and committed at once.",
        )
    names = [
        identifier_name(node.this if isinstance(node, exp.Ordered) else node)
        for node in key.expressions
    ]
    if len(set(names)) != len(names):
        raise DuplicateColumn("column appears twice in primary key constraint")
    for column in table.columns:
        if column.name in names and column.type.kind in KEY_FORBIDDEN:
            raise InvalidTableDefinition(
                f'column "{column.name}" of type {column.type.pg_name()} cannot be part of a '
                "primary key"
            )
    tree = table.partition_schema.tree if table.partition_schema is not None else None
    keyed = tree is not None and not has_hidden_key(table)
    if keyed and [c.name for c in table.schema.key_columns] == names:
        return  # a partition's key came first (pg_dump's order) and keyed the whole tree
    name = constraint_name or f"{table.name}_pkey"
    if tree is not None and name == f"{table.name}_pkey":
        name = ""  # the default, so each partition shows its own <partition>_pkey
    catalog.rekey_table(
        table, names, name, lambda new: rewrite.copy_rows(catalog, table, new),
        security_labels.pending_partitioning(table, evaluate),
    )  # fmt: skip
    indexes.rebuild_all(catalog, table.name)


def add_partition_primary_key(
    root: TableInfo,
    key: exp.PrimaryKey,
    catalog: Catalog,
    evaluate: Evaluator,
    *,
    in_block: bool,
) -> None:
    """ADD PRIMARY KEY on a partition of ``root``'s tree: the partitions share the root's
    key, so this keys the root (or checks it is that key already: 42P16 else)."""
    add_primary_key(root, key, None, catalog, evaluate, in_block=in_block)
