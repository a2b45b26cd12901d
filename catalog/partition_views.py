"""A root table's partition tree as tables: adding and removing partitions, and a partition
seen by its own name (the root restricted to the leaves below it)."""

from __future__ import annotations

import dataclasses

from catalog.partition import Partition
from catalog.partition_tree import HASH, PartitionNode, PartitionTree
from catalog.table import TableId, TableInfo
from storage.data_type import TabletId
from storage.errors import InvalidObjectDefinition


def tree_of(table: TableInfo) -> PartitionTree | None:
    return table.partition_schema.tree if table.partition_schema is not None else None


def add_node(table: TableInfo, node: PartitionNode) -> TableInfo:
    """``table`` with ``node`` in its tree, once its bound is checked against its siblings."""
    tree = tree_of(table)
    assert tree is not None and table.partition_schema is not None, "a tree to add to"
    for sibling in tree.children(node.parent):
        if sibling.bound.is_default and node.bound.is_default:
            raise InvalidObjectDefinition(
                f'partition "{node.name}" conflicts with existing default partition '
                f'"{sibling.name}"'
            )
        if node.bound.strategy == HASH and sibling.bound.strategy == HASH:
            big, small = (
                max(node.bound.modulus, sibling.bound.modulus),
                min(node.bound.modulus, sibling.bound.modulus),
            )
            if big % small:
                raise InvalidObjectDefinition(
                    "every hash partition modulus must be a factor of the next larger modulus"
                )
        if sibling.bound.overlaps(node.bound):
            raise InvalidObjectDefinition(
                f'partition "{node.name}" would overlap partition "{sibling.name}"'
            )
    partitioning = dataclasses.replace(table.partition_schema, tree=tree.with_node(node))
    partitions = table.partitions
    if node.tablet_id is not None:
        partitions = (*partitions, Partition(node.tablet_id, name=node.name))
    return dataclasses.replace(
        table,
        partition_schema=partitioning,
        partitions=partitions,
        tablet_ids=tuple(p.tablet_id for p in partitions),
    )


def remove_nodes(table: TableInfo, name: str) -> tuple[TableInfo, list[TabletId]]:
    """``table`` without partition ``name`` and what is below it, and their tablets."""
    tree = tree_of(table)
    assert tree is not None and table.partition_schema is not None, "a tree to remove from"
    gone = tree.subtree(name)
    tablets = [n.tablet_id for n in gone if n.tablet_id is not None]
    partitioning = dataclasses.replace(
        table.partition_schema, tree=tree.without({n.name for n in gone})
    )
    partitions = tuple(p for p in table.partitions if p.tablet_id not in set(tablets))
    new = dataclasses.replace(
        table,
        partition_schema=partitioning,
        partitions=partitions,
        tablet_ids=tuple(p.tablet_id for p in partitions),
    )
    return new, tablets


def partition_view(root: TableInfo, name: str) -> TableInfo | None:
    """Partition ``name`` of ``root`` as a table: the root's columns over its leaves' tablets,
    under its own name and OID; writes through it are routed as the root's and refused
    (23514) where a row belongs to no leaf below it."""
    tree = tree_of(root)
    node = tree.find(name) if tree is not None else None
    if node is None:
        return None
    leaves = set(tree.leaf_tablets(name)) if tree is not None else set()
    partitions = tuple(p for p in root.partitions if p.tablet_id in leaves)
    return dataclasses.replace(
        root,
        table_id=TableId(node.relation_id),
        name=name,
        partitions=partitions,
        tablet_ids=tuple(p.tablet_id for p in partitions),
    )
