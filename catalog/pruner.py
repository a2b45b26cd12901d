"""PartitionPruner: the tablets of a table that may hold rows matching a ScanSpec.

Each level prunes on its own (kudu-scan-optimization-partition-pruning): a
hash level keeps only the buckets of its columns' values when every one of
its columns has an equality or IN predicate; the range level keeps the
ranges that overlap the range-key bounds the predicates imply (or hold
one of the values of an IN list on a single range column).  A tablet is
scanned when its bucket of every level and its range survive.
"""

from __future__ import annotations

import itertools

from catalog.partition import MAX_HASH_COMBINATIONS, HashLevel, PartitionSchema
from catalog.table import TableInfo
from storage.data_type import TabletId
from storage.predicate import ColumnPredicate, PredicateKind, ScanSpec
from storage.schema import Schema


def prune(table: TableInfo, spec: ScanSpec) -> tuple[TabletId, ...]:
    """The tablets of ``table`` a scan with ``spec`` must read, in partition order."""
    partitioning = table.partition_schema
    if partitioning is None or not spec.predicates:
        return table.tablet_ids
    schema = table.schema
    if partitioning.tree is not None:
        leaves = partitioning.tree.prune(schema, spec.predicates)
        return tuple(t for t in table.tablet_ids if t in leaves)
    by_column: dict[int, list[ColumnPredicate]] = {}
    for predicate in spec.predicates:
        by_column.setdefault(predicate.column_id, []).append(predicate)
    allowed = [
        _buckets(partitioning, schema, level, by_column) for level in partitioning.hash_levels
    ]
    lower = upper = None
    points: list[bytes] | None = None
    if partitioning.range_column_ids is not None:
        key_range = ScanSpec(projection=(), predicates=spec.predicates).key_range(
            partitioning.range_schema(schema)
        )
        if key_range.is_empty:
            return ()
        lower, upper = key_range.lower, key_range.upper
        points = _range_points(partitioning, schema, by_column)
    kept = []
    for partition in table.partitions:
        if any(
            buckets is not None and bucket not in buckets
            for buckets, bucket in zip(allowed, partition.hash_buckets, strict=True)
        ):
            continue
        if partition.range is not None and not partition.range.overlaps(lower, upper):
            continue
        if (
            partition.range is not None
            and points is not None
            and not any(partition.range.overlaps(p, p + b"\x00") for p in points)
        ):
            continue
        kept.append(partition.tablet_id)
    return tuple(kept)


def _range_points(
    partitioning: PartitionSchema, schema: Schema, by_column: dict[int, list[ColumnPredicate]]
) -> list[bytes] | None:
    """The range keys an IN list on a single range column allows (None: no such list)."""
    range_ids = partitioning.range_column_ids
    if range_ids is None or len(range_ids) != 1:
        return None
    for predicate in by_column.get(range_ids[0], []):
        if predicate.kind is PredicateKind.IN_LIST:
            try:
                return [partitioning.encode_range_key(schema, [v]) for v in predicate.values]
            except (ValueError, OverflowError):
                return None
    return None


def _buckets(
    partitioning: PartitionSchema,
    schema: Schema,
    level: HashLevel,
    by_column: dict[int, list[ColumnPredicate]],
) -> set[int] | None:
    """The buckets of ``level`` that can match, or None when every bucket can."""
    choices: list[tuple[object, ...]] = []
    for column_id in level.column_ids:
        values: tuple[object, ...] | None = None
        for predicate in by_column.get(column_id, []):
            if predicate.kind is PredicateKind.EQUALITY:
                values = (predicate.value,)
            elif predicate.kind is PredicateKind.IN_LIST and values is None:
                values = predicate.values
        if values is None:
            return None
        choices.append(values)
    total = 1
    for values in choices:
        total *= len(values)
    if total > MAX_HASH_COMBINATIONS:
        return None
    buckets = set()
    for combination in itertools.product(*choices):
        try:
            buckets.add(partitioning.bucket_of(schema, level, combination))
        except (ValueError, OverflowError):
            return None
    return buckets
