"""Rekeying: the definition of a table with the hidden key once it gets a primary key of its own.

``ALTER TABLE ... ADD PRIMARY KEY`` on a table created without one (how
pg_dump and pgbench write keys) cannot change a Kudu tablet's key in place:
the table is rewritten into new tablets keyed by the named columns.  The
hidden ``auto_incrementing_id`` column stays, as a plain hidden column, so
no column's ID or attnum changes (see ``TableInfo.attnum``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from catalog.partition import Partition, PartitionSchema
from catalog.table import TableInfo
from storage.data_type import ColumnId, TabletId
from storage.errors import FeatureNotSupported, InvalidTableDefinition, UndefinedColumn
from storage.schema import Schema


def has_hidden_key(table: TableInfo) -> bool:
    """Whether the table was created without a primary key and has not been given one (its
    key is the hidden column, followed by the partition columns for a PARTITION BY root)."""
    hidden = {c.id for c in table.hidden_columns}
    return any(c.id in hidden for c in table.schema.key_columns)


def rekeyed(
    table: TableInfo,
    key: Sequence[str],
    tablet_ids: Sequence[TabletId],
    key_name: str,
    partitioning: tuple[PartitionSchema, Sequence[Partition]] | None = None,
) -> TableInfo:
    """``table`` keyed by the visible columns ``key``, stored in ``tablet_ids`` (one per
    partition of ``partitioning`` when given)."""
    if not has_hidden_key(table):
        raise InvalidTableDefinition(
            f'multiple primary keys for table "{table.name}" are not allowed'
        )
    if table.partition_schema is not None:
        raise FeatureNotSupported("adding a primary key to a partitioned table is not supported")
    by_name = {c.name: c for c in table.columns}
    missing = [name for name in key if name not in by_name]
    if missing:
        raise UndefinedColumn(f'column "{missing[0]}" of relation "{table.name}" does not exist')
    key_columns = [dataclasses.replace(by_name[name], nullable=False) for name in key]
    key_ids = {c.id for c in key_columns}
    rest = [c for c in table.schema.columns if c.id not in key_ids]
    return dataclasses.replace(
        table,
        schema=Schema(tuple(key_columns + rest), len(key_columns)),
        tablet_ids=tuple(tablet_ids),
        partition_schema=None if partitioning is None else partitioning[0],
        partitions=() if partitioning is None else tuple(partitioning[1]),
        primary_key_name=key_name,
        pending_partitioning="",
    )


def rekeyed_tree(
    table: TableInfo, key: Sequence[str], new_tablets: dict[TabletId, TabletId], key_name: str
) -> TableInfo:
    """A table partitioned by PARTITION BY (a partition tree) keyed by ``key``, each leaf in
    its new tablet (``new_tablets`` by the old); the partition columns must be key columns
    (0A000, PostgreSQL's rule for a partitioned table's unique constraints)."""
    layout = table.partition_schema
    assert layout is not None and layout.tree is not None, "a partition tree"
    plain = dataclasses.replace(table, partition_schema=None, partitions=())
    base = rekeyed(plain, key, (), key_name)
    key_ids = set(base.schema.key_column_ids)
    for column_id in sorted(layout.tree.column_ids()):
        if column_id not in key_ids:
            name = base.schema.column(column_id).name
            raise FeatureNotSupported(
                "unique constraint on partitioned table must include all partitioning columns",
                detail=f'PRIMARY KEY constraint on table "{table.name}" lacks column "{name}" '
                "which is part of the partition key.",
            )
    keyed = dataclasses.replace(base, partition_schema=layout, partitions=table.partitions)
    return with_leaf_tablets(keyed, new_tablets)


def with_leaf_tablets(table: TableInfo, new_tablets: dict[TabletId, TabletId]) -> TableInfo:
    """``table`` (partitioned by PARTITION BY) with each leaf in its new tablet."""
    layout = table.partition_schema
    assert layout is not None and layout.tree is not None, "a partition tree"
    nodes = tuple(
        n if n.tablet_id is None else dataclasses.replace(n, tablet_id=new_tablets[n.tablet_id])
        for n in layout.tree.nodes
    )
    tree = dataclasses.replace(layout.tree, nodes=nodes)
    partitions = tuple(
        dataclasses.replace(p, tablet_id=new_tablets[p.tablet_id]) for p in table.partitions
    )
    return dataclasses.replace(
        table,
        partition_schema=dataclasses.replace(layout, tree=tree),
        partitions=partitions,
        tablet_ids=tuple(p.tablet_id for p in partitions),
    )


def with_key_columns(table: TableInfo, extra: Sequence[ColumnId]) -> TableInfo:
    """``table`` with the hidden key followed by ``extra`` columns too (NOT NULL): a
    partition column of a table without a primary key is a key column."""
    schema = table.schema
    key = [
        *schema.key_columns,
        *(dataclasses.replace(schema.column(c), nullable=False) for c in extra),
    ]
    ids = {c.id for c in key}
    rest = [c for c in schema.columns if c.id not in ids]
    return dataclasses.replace(table, schema=Schema(tuple(key + rest), len(key)))


def rekeyed_schema(table: TableInfo, key: Sequence[str]) -> Schema:
    """The storage schema ``rekeyed`` gives ``table`` (to build its partitioning from)."""
    return rekeyed(table, key, (), "").schema
