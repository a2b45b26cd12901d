"""The catalog's partitions: range partitions and partition trees added, attached, detached."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from catalog.catalog_base import CatalogBase
from catalog.partition import Partition, PartitionSchema, RangeBounds
from catalog.partition_tree import PartitionNode
from catalog.partition_views import add_node, partition_view, remove_nodes
from catalog.rekey import with_key_columns, with_leaf_tablets
from catalog.table import TableId, TableInfo
from storage.data_type import ColumnId, TabletId
from storage.errors import (
    DuplicateTable,
    FeatureNotSupported,
    InvalidObjectDefinition,
    ObjectNotInPrerequisiteState,
    UndefinedObject,
    UndefinedTable,
)


class CatalogPartitions(CatalogBase):
    """Partitions of tables: each a tablet created before the catalog names it."""

    def _new_partitions(
        self,
        partitioning: PartitionSchema | None,
        ranges: Sequence[RangeBounds | tuple[RangeBounds, str | None]],
    ) -> list[Partition]:
        """One partition (with a fresh tablet ID) per bucket combination and range."""
        if partitioning is not None and partitioning.tree is not None:
            return []  # a partition tree's leaves come with CREATE TABLE ... PARTITION OF
        combos = partitioning.bucket_combinations() if partitioning is not None else [()]
        named: list[tuple[RangeBounds | None, str | None]] = [
            r if isinstance(r, tuple) else (r, None) for r in ranges
        ]
        if partitioning is None or not partitioning.is_ranged:
            named = [(None, None)]
        partitions = []
        for bounds, range_name in named:
            for combo in combos:
                tablet_id = TabletId(self._ids.tablet)
                self._ids.tablet += 1
                partitions.append(Partition(tablet_id, combo, bounds, range_name))
        return partitions

    def alter_ranges(
        self,
        name: str,
        add: Sequence[tuple[RangeBounds, str | None]],
        drop: Sequence[RangeBounds],
    ) -> TableInfo:
        """Add and drop whole ranges of a range-partitioned table in one catalog change.

        Dropped ranges must exist exactly; added ones must not overlap the ranges
        that remain (42P17).  New tablets are created before the catalog names
        them; dropped ones are removed after it stops naming them.
        """
        self.lock_relations([name])
        with self._lock:
            table = self.get_table(name)
            partitioning = table.partition_schema
            if partitioning is None or not partitioning.is_ranged:
                raise FeatureNotSupported(f'table "{name}" is not range partitioned')
            ranges = {p.range for p in table.partitions}
            for bounds in drop:
                if bounds not in ranges:
                    raise UndefinedObject(f"no range partition {bounds.describe()} in {name}")
            kept = [p for p in table.partitions if p.range not in set(drop)]
            remaining = {p.range for p in kept}
            for bounds, range_name in add:
                for other in remaining:
                    if other is not None and other.overlaps(bounds.lower, bounds.upper):
                        what = f'partition "{range_name}"' if range_name else "range partition"
                        raise InvalidObjectDefinition(
                            f"{what} {bounds.describe()} would overlap {other.describe()}"
                        )
                remaining.add(bounds)
            added = self._new_partitions(partitioning, add)
            for partition in added:
                self._create_tablet(partition.tablet_id, table.schema)
            partitions = tuple(kept + added)
            new = dataclasses.replace(
                table, partitions=partitions, tablet_ids=tuple(p.tablet_id for p in partitions)
            )
            self._tables[name] = new
            self._save()
            for partition in table.partitions:
                if partition.range in set(drop):
                    self._drop_tablet(partition.tablet_id)
            return new

    def partition_owner(self, partition_name: str) -> TableInfo | None:
        """The table that has a partition (a named range or a tree node) ``partition_name``."""
        for table in self._tables.values():
            if any(p.name == partition_name for p in table.partitions):
                return table
            tree = table.partition_schema.tree if table.partition_schema else None
            if tree is not None and tree.find(partition_name) is not None:
                return table
        return None

    def partition_view(self, name: str) -> TableInfo | None:
        """A PostgreSQL-style partition read by its own name: its root table restricted to
        the leaves below it (None when ``name`` is no partition)."""
        owner = self.partition_owner(name)
        return None if owner is None else partition_view(owner, name)

    def table_or_partition(self, name: str) -> TableInfo:
        """The table, or the partition read by its own name, called ``name`` (42P01)."""
        return self.find_table(name) or self.partition_view(name) or self.get_table(name)

    def add_partition(self, root: str, node: PartitionNode) -> TableInfo:
        """Add ``node`` to the root's partition tree: it gets a relation ID, and a leaf its
        tablet, created before the catalog names it; overlapping siblings are 42P17."""
        self.lock_relations([root, node.name])
        with self._lock:
            table = self.get_table(root)
            if node.name in self._relation_names() or self.partition_owner(node.name):
                raise DuplicateTable(f'relation "{node.name}" already exists')
            node = dataclasses.replace(node, relation_id=self._ids.table)
            self._ids.table += 1
            if node.key is None:
                node = dataclasses.replace(node, tablet_id=TabletId(self._ids.tablet))
                self._ids.tablet += 1
                self._create_tablet(TabletId(self._ids.tablet - 1), table.schema)
            new = add_node(table, node)
            self._tables[root] = new
            self._save()
            return new

    def attach_partition(self, root: str, table: TableInfo, node: PartitionNode) -> TableInfo:
        """Make ``table`` (one tablet, the root's schema) the leaf ``node`` of the root's tree,
        keeping its tablet, rows and relation ID (ATTACH PARTITION)."""
        self.lock_relations([root, table.name])
        with self._lock:
            current = self.get_table(table.name)
            if current is not table:
                raise ObjectNotInPrerequisiteState(
                    f'relation "{table.name}" was changed by another statement; try again'
                )
            node = dataclasses.replace(
                node, relation_id=int(table.table_id), tablet_id=table.tablet_ids[0]
            )
            new = add_node(self.get_table(root), node)
            del self._tables[table.name]
            self._tables[root] = new
            self._save()
            return new

    def attach_empty_partition(self, root: str, table: TableInfo, node: PartitionNode) -> TableInfo:
        """Make the empty ``table``, whose tablet is keyed otherwise than the root's (a plain
        table pg_dump made), the leaf ``node`` on a new tablet of the root's schema, keeping
        its relation ID; its own tablet goes at COMMIT (ATTACH PARTITION)."""
        self.lock_relations([root, table.name])
        with self._lock:
            current = self.get_table(table.name)
            if current is not table:
                raise ObjectNotInPrerequisiteState(
                    f'relation "{table.name}" was changed by another statement; try again'
                )
            parent = self.get_table(root)
            tablet_id = TabletId(self._ids.tablet)
            self._ids.tablet += 1
            self._create_tablet(tablet_id, parent.schema)
            node = dataclasses.replace(node, relation_id=int(table.table_id), tablet_id=tablet_id)
            new = add_node(parent, node)
            del self._tables[table.name]
            self._tables[root] = new
            self._save()
            for old in table.tablet_ids:
                self._drop_tablet(old)
            self._drop_counters([table.counter_key(i) for i in table.sequences])
            return new

    def graft_partitions(
        self,
        root: str,
        table: TableInfo,
        nodes: Sequence[PartitionNode],
        key_columns: Sequence[ColumnId] = (),
    ) -> TableInfo:
        """Make the empty partitioned ``table`` part of the root's tree as ``nodes`` (its own
        node first, then its partitions), each leaf on a new tablet of the root's schema,
        keeping their relation IDs; its own tablets go at COMMIT (ATTACH PARTITION of a
        partitioned table).  ``key_columns`` extend the key of an empty root without a
        primary key (its partitions are partitioned by them): its leaves move to new
        tablets so keyed."""
        self.lock_relations([root, table.name, *(n.name for n in nodes)])
        with self._lock:
            if self.get_table(table.name) is not table:
                raise ObjectNotInPrerequisiteState(
                    f'relation "{table.name}" was changed by another statement; try again'
                )
            new = self.get_table(root)
            replaced: list[TabletId] = []
            if key_columns:
                new = with_key_columns(new, key_columns)
                fresh = {}
                for old_tablet in new.tablet_ids:
                    fresh[old_tablet] = TabletId(self._ids.tablet)
                    self._ids.tablet += 1
                    self._create_tablet(fresh[old_tablet], new.schema)
                replaced = list(new.tablet_ids)
                new = with_leaf_tablets(new, fresh)
            for node in nodes:
                if node.key is None:
                    tablet_id = TabletId(self._ids.tablet)
                    self._ids.tablet += 1
                    self._create_tablet(tablet_id, new.schema)
                    node = dataclasses.replace(node, tablet_id=tablet_id)
                new = add_node(new, node)
            del self._tables[table.name]
            self._tables[root] = new
            self._save()
            for old in (*table.tablet_ids, *replaced):
                self._drop_tablet(old)
            self._drop_counters([table.counter_key(i) for i in table.sequences])
            return new

    def drop_partition(self, name: str) -> TableInfo | None:
        """Drop a tree partition and everything below it, with its tablets (DROP TABLE)."""
        owner = self.partition_owner(name)
        if owner is None or owner.partition_schema is None or owner.partition_schema.tree is None:
            return None
        self.lock_relations([owner.name, name])
        with self._lock:
            table = self.get_table(owner.name)
            new, dropped = remove_nodes(table, name)
            self._tables[owner.name] = new
            self._save()
            for tablet_id in dropped:
                self._drop_tablet(tablet_id)
            return new

    def detach_partition(self, name: str, partition_name: str) -> TableInfo:
        """Make a named range partition a table of its own, keeping its rows (DETACH)."""
        self.lock_relations([name, partition_name])
        with self._lock:
            table = self.get_table(name)
            moving = [p for p in table.partitions if p.name == partition_name]
            if not moving:
                raise UndefinedTable(f'relation "{partition_name}" is not a partition of "{name}"')
            if partition_name in self._tables:
                raise DuplicateTable(f'relation "{partition_name}" already exists')
            if len(moving) != 1:
                raise FeatureNotSupported("detaching a hash-partitioned range is not supported")
            tree = table.partition_schema.tree if table.partition_schema else None
            if tree is not None:
                node = tree.find(partition_name)
                if node is None or node.parent is not None:
                    raise UndefinedTable(
                        f'relation "{partition_name}" is not a partition of relation "{name}"'
                    )
                self._tables[name] = remove_nodes(table, partition_name)[0]
            else:
                kept = tuple(p for p in table.partitions if p.name != partition_name)
                self._tables[name] = dataclasses.replace(
                    table, partitions=kept, tablet_ids=tuple(p.tablet_id for p in kept)
                )
            detached = TableInfo(
                table_id=TableId(self._ids.table),
                name=partition_name,
                schema=table.schema,
                tablet_ids=(moving[0].tablet_id,),
                next_column_id=table.next_column_id,
                column_order=table.column_order,
            )
            self._ids.table += 1
            self._tables[partition_name] = detached
            self._save()
            return detached
