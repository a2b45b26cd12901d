from __future__ import annotations

from catalog.partition import HashLevel, Partition, PartitionSchema, RangeBounds
from catalog.pruner import prune
from catalog.table import TableId, TableInfo
from storage import data_type as t
from storage.data_type import ColumnId, TabletId
from storage.key_encoding import encode_key
from storage.predicate import ColumnPredicate, ScanSpec
from storage.schema import ColumnSchema, Schema

SCHEMA = Schema(
    (
        ColumnSchema(ColumnId(0), "host", t.STRING, nullable=False),
        ColumnSchema(ColumnId(1), "ts", t.INT64, nullable=False),
    ),
    2,
)


def _table() -> TableInfo:
    partitioning = PartitionSchema((HashLevel((ColumnId(0),), 4),), (ColumnId(1),))
    bounds = [
        RangeBounds(None, encode_key([100], [t.INT64])),
        RangeBounds(encode_key([100], [t.INT64]), encode_key([200], [t.INT64])),
        RangeBounds(encode_key([300], [t.INT64]), None),
    ]
    partitions = tuple(
        Partition(TabletId(1 + 4 * r + b), (b,), rng)
        for r, rng in enumerate(bounds)
        for b in range(4)
    )
    return TableInfo(
        TableId(1),
        "m",
        SCHEMA,
        tuple(p.tablet_id for p in partitions),
        2,
        (0, 1),
        partitioning,
        partitions,
    )


def _spec(*predicates):
    return ScanSpec(projection=(ColumnId(0),), predicates=predicates)


def test_no_predicates_scan_every_tablet():
    table = _table()
    assert prune(table, _spec()) == table.tablet_ids


def test_hash_and_range_levels_prune_independently():
    table = _table()
    bucket = table.partition_schema.bucket_of(SCHEMA, table.partition_schema.hash_levels[0], ["h"])
    by_hash = prune(table, _spec(ColumnPredicate.equality(ColumnId(0), "h")))
    assert by_hash == tuple(TabletId(1 + 4 * r + bucket) for r in range(3))
    by_range = prune(table, _spec(ColumnPredicate.range(ColumnId(1), 150, 160)))
    assert by_range == tuple(TabletId(5 + b) for b in range(4))
    both = prune(
        table,
        _spec(
            ColumnPredicate.equality(ColumnId(0), "h"), ColumnPredicate.equality(ColumnId(1), 250)
        ),
    )
    assert both == ()


def test_in_lists_prune_to_the_union_of_their_buckets():
    table = _table()
    level = table.partition_schema.hash_levels[0]
    buckets = {table.partition_schema.bucket_of(SCHEMA, level, [h]) for h in ("a", "b")}
    kept = prune(table, _spec(ColumnPredicate.in_list(ColumnId(0), ["a", "b"])))
    assert {p.hash_buckets[0] for p in table.partitions if p.tablet_id in kept} == buckets


def test_an_in_list_on_the_range_column_keeps_the_ranges_holding_its_values():
    table = _table()
    kept = prune(table, _spec(ColumnPredicate.in_list(ColumnId(1), [5, 350])))
    ranges = {
        table.partitions[[p.tablet_id for p in table.partitions].index(k)].range for k in kept
    }
    assert ranges == {table.partitions[0].range, table.partitions[8].range}
