from __future__ import annotations

import crc32c
import pyarrow as pa

from catalog.partition import HashLevel, Partition, PartitionSchema, RangeBounds
from storage import data_type as t
from storage.data_type import ColumnId, TabletId
from storage.key_encoding import encode_key
from storage.schema import ColumnSchema, Schema

SCHEMA = Schema(
    (
        ColumnSchema(ColumnId(0), "host", t.STRING, nullable=False),
        ColumnSchema(ColumnId(1), "ts", t.INT64, nullable=False),
        ColumnSchema(ColumnId(2), "v", t.DOUBLE),
    ),
    2,
)


def _ranged() -> tuple[PartitionSchema, list[Partition]]:
    partitioning = PartitionSchema((HashLevel((ColumnId(0),), 3),), (ColumnId(1),))
    low = RangeBounds(None, encode_key([100], [t.INT64]), "", "100")
    high = RangeBounds(encode_key([100], [t.INT64]), encode_key([200], [t.INT64]), "100", "200")
    partitions = [
        Partition(TabletId(10 * r + b), (b,), bounds)
        for r, bounds in enumerate((low, high))
        for b in range(3)
    ]
    return partitioning, partitions


def test_buckets_are_a_stable_crc32c_of_the_key_encoded_columns():
    partitioning, _ = _ranged()
    level = partitioning.hash_levels[0]
    expected = crc32c.crc32c(encode_key(["web01"], [t.STRING])) % 3
    assert partitioning.bucket_of(SCHEMA, level, ["web01"]) == expected


def test_rows_route_to_their_bucket_and_range_and_outside_rows_to_minus_one():
    partitioning, partitions = _ranged()
    hosts = ["a", "b", "c", "a", "zz"]
    columns = {
        ColumnId(0): pa.array(hosts),
        ColumnId(1): pa.array([5, 150, 99, 100, 200], pa.int64()),
    }
    index = partitioning.route(SCHEMA, partitions, columns)
    level = partitioning.hash_levels[0]
    for row, host in enumerate(hosts[:4]):
        partition = partitions[index[row]]
        assert partition.hash_buckets == (partitioning.bucket_of(SCHEMA, level, [host]),)
        assert partition.range.overlaps(
            encode_key([columns[ColumnId(1)][row].as_py()], [t.INT64]),
            encode_key([columns[ColumnId(1)][row].as_py() + 1], [t.INT64]),
        )
    assert index[4] == -1


def test_partition_schema_round_trips_through_json():
    partitioning, partitions = _ranged()
    assert PartitionSchema.from_json(partitioning.to_json()) == partitioning
    assert [Partition.from_json(p.to_json()) for p in partitions] == partitions
