"""PartitionSchema: hash levels and a range level that route each row to one tablet.

As in Kudu (kudu-schema-design.txt), a table is split by zero or more hash
levels, each hashing some key columns into a fixed number of buckets, and an
optional range level over key columns whose ranges may leave gaps.  Every
combination of one bucket per hash level and one range is a ``Partition``,
stored in a tablet of its own.  A bucket is the CRC32C of the row's
key-encoded level columns (``storage.key_encoding``), modulo the bucket count:
stable across processes and versions, unlike Python's ``hash()``.  Range
bounds are encoded range keys, lower inclusive and upper exclusive, so range
comparisons are byte comparisons.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import crc32c
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog.key_hash import crc32c_many
from catalog.partition_tree import PartitionTree
from catalog.store import JsonObject
from storage.data_type import ColumnId, TabletId
from storage.key_encoding import encode_key, encode_keys, encode_keys_array
from storage.schema import Schema

# IN lists on hash columns are expanded to bucket sets up to this many value combinations.
MAX_HASH_COMBINATIONS = 4096


@dataclass(frozen=True, slots=True)
class HashLevel:
    """One hash level: ``column_ids`` hashed into ``buckets`` buckets."""

    column_ids: tuple[ColumnId, ...]
    buckets: int

    def to_json(self) -> dict[str, object]:
        return {"columns": list(self.column_ids), "buckets": self.buckets}

    @classmethod
    def from_json(cls, doc: JsonObject) -> HashLevel:
        return cls(tuple(ColumnId(int(c)) for c in doc["columns"]), int(doc["buckets"]))


@dataclass(frozen=True, slots=True)
class RangeBounds:
    """One range of the range level: ``lower <= range key < upper`` (None: unbounded).

    ``lower_text`` / ``upper_text`` spell the bounds with their operators for
    people (``1000 <=``, ``< 2000``): EXPLAIN, ``nyala_tablets``, error messages.
    """

    lower: bytes | None
    upper: bytes | None
    lower_text: str = ""
    upper_text: str = ""

    def overlaps(self, lower: bytes | None, upper: bytes | None) -> bool:
        below_upper = self.upper is None or lower is None or lower < self.upper
        above_lower = self.lower is None or upper is None or self.lower < upper
        return below_upper and above_lower

    def describe(self) -> str:
        """Impala's spelling, e.g. ``1000 <= VALUES < 2000``."""
        if self.lower is None and self.upper is None:
            return "UNBOUNDED"
        return " ".join(part for part in (self.lower_text, "VALUES", self.upper_text) if part)

    def to_json(self) -> dict[str, object]:
        return {
            "lower": None if self.lower is None else self.lower.hex(),
            "upper": None if self.upper is None else self.upper.hex(),
            "lower_text": self.lower_text,
            "upper_text": self.upper_text,
        }

    @classmethod
    def from_json(cls, doc: JsonObject) -> RangeBounds:
        lower, upper = doc["lower"], doc["upper"]
        return cls(
            None if lower is None else bytes.fromhex(str(lower)),
            None if upper is None else bytes.fromhex(str(upper)),
            str(doc.get("lower_text", "")),
            str(doc.get("upper_text", "")),
        )


@dataclass(frozen=True, slots=True)
class Partition:
    """One tablet's share of a table: a bucket per hash level and a range (if ranged).

    ``name`` is the table name a PostgreSQL-style ``PARTITION OF`` gave the range.
    """

    tablet_id: TabletId
    hash_buckets: tuple[int, ...] = ()
    range: RangeBounds | None = None
    name: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "tablet_id": self.tablet_id,
            "hash_buckets": list(self.hash_buckets),
            "range": None if self.range is None else self.range.to_json(),
            "name": self.name,
        }

    @classmethod
    def from_json(cls, doc: JsonObject) -> Partition:
        rng = doc.get("range")
        return cls(
            TabletId(int(doc["tablet_id"])),
            tuple(int(b) for b in doc.get("hash_buckets") or ()),
            None if rng is None else RangeBounds.from_json(rng),
            doc.get("name"),
        )


@dataclass(frozen=True, slots=True)
class PartitionSchema:
    """How a table's rows are split: hash levels, then an optional range level; or, for
    PostgreSQL's declarative partitioning, a ``PartitionTree`` whose leaves are the tablets."""

    hash_levels: tuple[HashLevel, ...] = ()
    range_column_ids: tuple[ColumnId, ...] | None = None
    tree: PartitionTree | None = None

    @property
    def is_ranged(self) -> bool:
        return self.range_column_ids is not None

    def bucket_combinations(self) -> list[tuple[int, ...]]:
        return list(itertools.product(*(range(level.buckets) for level in self.hash_levels)))

    def range_schema(self, schema: Schema) -> Schema:
        """The range columns as a schema whose key they are (to encode and bound range keys)."""
        assert self.range_column_ids is not None, "only a ranged table has range keys"
        columns = tuple(schema.column(c) for c in self.range_column_ids)
        return Schema(columns, len(columns))

    def encode_range_key(self, schema: Schema, values: Sequence[object]) -> bytes:
        """The range key of one row given the range columns' values (ValueError if unfit)."""
        types = [c.type for c in self.range_schema(schema).columns]
        return encode_key(list(values), types)

    def route(
        self, schema: Schema, partitions: Sequence[Partition], columns: dict[ColumnId, pa.Array]
    ) -> np.ndarray:
        """Index into ``partitions`` of the partition each row belongs to; -1 where none does."""
        if self.tree is not None:
            return self.tree.route(schema, [p.tablet_id for p in partitions], columns)
        num_rows = len(next(iter(columns.values())))
        code = np.zeros(num_rows, dtype=np.int64)
        for level in self.hash_levels:
            code = code * level.buckets + self._buckets(schema, level, columns)
        ranges: list[RangeBounds] = []
        if self.range_column_ids is not None:
            ranges = sorted(
                {p.range for p in partitions if p.range is not None},
                key=lambda r: r.lower or b"",
            )
            code = code * max(len(ranges), 1) + self._range_index(schema, ranges, columns)
        by_code = {}
        range_index = {r: i for i, r in enumerate(ranges)}
        for index, partition in enumerate(partitions):
            key = 0
            for level, bucket in zip(self.hash_levels, partition.hash_buckets, strict=True):
                key = key * level.buckets + bucket
            if self.range_column_ids is not None:
                assert partition.range is not None, "a ranged table's partitions have ranges"
                key = key * max(len(ranges), 1) + range_index[partition.range]
            by_code[key] = index
        size = 1
        for level in self.hash_levels:
            size *= level.buckets
        size *= max(len(ranges), 1)
        lookup = np.full(size + 1, -1, dtype=np.int64)
        for key, index in by_code.items():
            lookup[key] = index
        code = np.where(code < 0, size, code)
        return lookup[code]

    def _buckets(
        self, schema: Schema, level: HashLevel, columns: dict[ColumnId, pa.Array]
    ) -> np.ndarray:
        types = [schema.column(c).type for c in level.column_ids]
        encoded = encode_keys_array([columns[c] for c in level.column_ids], types)
        hashes = crc32c_many(encoded)
        return (hashes % np.uint64(level.buckets)).astype(np.int64)

    def _range_index(
        self, schema: Schema, ranges: list[RangeBounds], columns: dict[ColumnId, pa.Array]
    ) -> np.ndarray:
        assert self.range_column_ids is not None, "only a ranged table routes by range"
        types = [schema.column(c).type for c in self.range_column_ids]
        keys = pa.array(
            encode_keys([columns[c] for c in self.range_column_ids], types), pa.binary()
        )
        index = np.full(len(keys), -(1 << 40), dtype=np.int64)
        for position, bounds in enumerate(ranges):
            mask = None
            if bounds.lower is not None:
                mask = pc.greater_equal(keys, pa.scalar(bounds.lower, pa.binary()))
            if bounds.upper is not None:
                upper = pc.less(keys, pa.scalar(bounds.upper, pa.binary()))
                mask = upper if mask is None else pc.and_(mask, upper)
            if mask is None:
                index[:] = position
            else:
                index[mask.to_numpy(zero_copy_only=False)] = position
        return index

    def bucket_of(self, schema: Schema, level: HashLevel, values: Sequence[object]) -> int:
        """The bucket of one combination of values of ``level``'s columns."""
        types = [schema.column(c).type for c in level.column_ids]
        return crc32c.crc32c(encode_key(list(values), types)) % level.buckets

    def to_json(self) -> dict[str, object]:
        return {
            "hash_levels": [level.to_json() for level in self.hash_levels],
            "range_columns": None if self.range_column_ids is None else list(self.range_column_ids),
            **({"tree": self.tree.to_json()} if self.tree is not None else {}),
        }

    @classmethod
    def from_json(cls, doc: JsonObject) -> PartitionSchema:
        rng, tree = doc.get("range_columns"), doc.get("tree")
        return cls(
            tuple(HashLevel.from_json(d) for d in doc.get("hash_levels") or ()),
            None if rng is None else tuple(ColumnId(int(c)) for c in rng),
            None if tree is None else PartitionTree.from_json(tree),
        )
