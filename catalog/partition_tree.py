"""PartitionTree: PostgreSQL's declarative partitions (LIST, RANGE, HASH, DEFAULT, sub-partitions).

PostgreSQL makes every partition a relation of its own.  nyala keeps the whole
tree on the root table instead: each leaf partition is one tablet of the root
(a ``Partition`` named after the leaf), so a scan, a write and a commit of the
root see one table as with Kudu's levels, and a partition read by its own name
is the root restricted to the leaves below it.  Bounds are key-encoded
(``storage.key_encoding``) like Kudu's range bounds, so matching a row is a
byte comparison; a hash bound is the CRC32C of the key-encoded columns modulo
its modulus, as the Kudu hash levels bucket rows (PostgreSQL's own hash
functions differ, so rows land in other hash partitions than there).
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
from catalog.store import JsonObject
from storage.data_type import ColumnId, TabletId
from storage.key_encoding import encode_key, encode_keys_array
from storage.predicate import ColumnPredicate, PredicateKind, ScanSpec
from storage.schema import Schema

LIST, RANGE, HASH, DEFAULT = "list", "range", "hash", "default"

# Equality and IN values on a level's columns are expanded to keys up to this many combinations.
_MAX_POINTS = 4096


@dataclass(frozen=True, slots=True)
class PartitionKey:
    """``PARTITION BY strategy (columns)`` of the root or of a partitioned partition."""

    strategy: str
    column_ids: tuple[ColumnId, ...]

    def key_schema(self, schema: Schema) -> Schema:
        columns = tuple(schema.column(c) for c in self.column_ids)
        return Schema(columns, len(columns))

    def to_json(self) -> dict[str, object]:
        return {"strategy": self.strategy, "columns": list(self.column_ids)}

    @classmethod
    def from_json(cls, doc: JsonObject) -> PartitionKey:
        return cls(str(doc["strategy"]), tuple(ColumnId(int(c)) for c in doc["columns"]))


@dataclass(frozen=True, slots=True)
class PartitionBound:
    """``FOR VALUES`` of one partition, its values key-encoded over its parent's key.

    ``text`` is PostgreSQL's spelling (``pg_get_expr(relpartbound)``), e.g.
    ``FOR VALUES IN (1, 2)`` or ``DEFAULT``.  A range bound of None is
    MINVALUE (lower) or MAXVALUE (upper).
    """

    strategy: str
    text: str
    values: tuple[bytes, ...] = ()
    lower: bytes | None = None
    upper: bytes | None = None
    modulus: int = 0
    remainder: int = 0

    @property
    def is_default(self) -> bool:
        return self.strategy == DEFAULT

    def overlaps(self, other: PartitionBound) -> bool:
        if self.is_default or other.is_default:
            return self.is_default and other.is_default
        if self.strategy == LIST:
            return bool(set(self.values) & set(other.values))
        if self.strategy == RANGE:
            below = self.upper is None or other.lower is None or other.lower < self.upper
            above = other.upper is None or self.lower is None or self.lower < other.upper
            return below and above
        smaller = min(self.modulus, other.modulus)
        return self.remainder % smaller == other.remainder % smaller

    def matches(self, keys: pa.Array, hashes: np.ndarray) -> np.ndarray:
        """Which rows (by their encoded keys and key hashes) this bound holds."""
        if self.strategy == LIST:
            found = pc.is_in(keys, value_set=pa.array(list(self.values), pa.binary()))
            return np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)
        if self.strategy == HASH:
            return np.asarray(hashes % np.uint64(self.modulus) == self.remainder, dtype=bool)
        mask = np.ones(len(keys), dtype=bool)
        if self.lower is not None:
            lower = pc.greater_equal(keys, pa.scalar(self.lower, pa.binary()))
            mask &= np.asarray(lower.to_numpy(zero_copy_only=False), dtype=bool)
        if self.upper is not None:
            upper = pc.less(keys, pa.scalar(self.upper, pa.binary()))
            mask &= np.asarray(upper.to_numpy(zero_copy_only=False), dtype=bool)
        return mask

    def to_json(self) -> dict[str, object]:
        return {
            "strategy": self.strategy,
            "text": self.text,
            "values": [v.hex() for v in self.values],
            "lower": None if self.lower is None else self.lower.hex(),
            "upper": None if self.upper is None else self.upper.hex(),
            "modulus": self.modulus,
            "remainder": self.remainder,
        }

    @classmethod
    def from_json(cls, doc: JsonObject) -> PartitionBound:
        lower, upper = doc.get("lower"), doc.get("upper")
        return cls(
            str(doc["strategy"]),
            str(doc["text"]),
            tuple(bytes.fromhex(str(v)) for v in doc.get("values") or ()),
            None if lower is None else bytes.fromhex(str(lower)),
            None if upper is None else bytes.fromhex(str(upper)),
            int(doc.get("modulus") or 0),
            int(doc.get("remainder") or 0),
        )


@dataclass(frozen=True, slots=True)
class PartitionNode:
    """One partition: a leaf on its own tablet, or (with ``key``) partitioned further.

    ``parent`` names the partition above it (None: the root table); ``relation_id``
    comes from the catalog's table IDs, so the partition's OID is no other relation's.
    """

    name: str
    relation_id: int
    parent: str | None
    bound: PartitionBound
    key: PartitionKey | None = None
    tablet_id: TabletId | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "relation_id": self.relation_id,
            "parent": self.parent,
            "bound": self.bound.to_json(),
            "key": None if self.key is None else self.key.to_json(),
            "tablet_id": self.tablet_id,
        }

    @classmethod
    def from_json(cls, doc: JsonObject) -> PartitionNode:
        key, tablet = doc.get("key"), doc.get("tablet_id")
        return cls(
            str(doc["name"]),
            int(doc["relation_id"]),
            None if doc.get("parent") is None else str(doc["parent"]),
            PartitionBound.from_json(doc["bound"]),
            None if key is None else PartitionKey.from_json(key),
            None if tablet is None else TabletId(int(tablet)),
        )


@dataclass(frozen=True, slots=True)
class PartitionTree:
    """The root's partition key and every partition below it, parents before children."""

    key: PartitionKey
    nodes: tuple[PartitionNode, ...] = ()

    def find(self, name: str) -> PartitionNode | None:
        for node in self.nodes:
            if node.name == name:
                return node
        return None

    def children(self, parent: str | None) -> list[PartitionNode]:
        return [n for n in self.nodes if n.parent == parent]

    def key_of(self, parent: str | None) -> PartitionKey | None:
        if parent is None:
            return self.key
        node = self.find(parent)
        return None if node is None else node.key

    def subtree(self, name: str) -> list[PartitionNode]:
        """``name``'s node and every node below it."""
        found = [n for n in self.nodes if n.name == name]
        for node in self.nodes:
            if node.parent is not None and any(node.parent == f.name for f in found):
                found.append(node)
        return found

    def leaf_tablets(self, name: str | None) -> list[TabletId]:
        """The tablets of the leaves at or below ``name`` (None: the whole tree)."""
        nodes = self.nodes if name is None else tuple(self.subtree(name))
        return [n.tablet_id for n in nodes if n.tablet_id is not None]

    def path(self, node: PartitionNode) -> list[PartitionNode]:
        """The nodes from the root's child down to ``node``."""
        chain = [node]
        while chain[0].parent is not None:
            parent = self.find(chain[0].parent)
            assert parent is not None, "a node's parent is in the tree"
            chain.insert(0, parent)
        return chain

    def column_ids(self) -> set[ColumnId]:
        """Every column some level of the tree partitions by."""
        ids = set(self.key.column_ids)
        for node in self.nodes:
            if node.key is not None:
                ids.update(node.key.column_ids)
        return ids

    def with_node(self, node: PartitionNode) -> PartitionTree:
        return PartitionTree(self.key, (*self.nodes, node))

    def without(self, names: set[str]) -> PartitionTree:
        return PartitionTree(self.key, tuple(n for n in self.nodes if n.name not in names))

    def route(
        self, schema: Schema, tablets: Sequence[TabletId], columns: dict[ColumnId, pa.Array]
    ) -> np.ndarray:
        """Index into ``tablets`` of the leaf each row belongs to; -1 where none does (or
        where its leaf is not among ``tablets``, as for a write through a partition's name)."""
        num_rows = len(next(iter(columns.values())))
        out = np.full(num_rows, -1, dtype=np.int64)
        position = {t: i for i, t in enumerate(tablets)}
        encoded: dict[PartitionKey, tuple[pa.Array, np.ndarray]] = {}

        def keys_of(key: PartitionKey) -> tuple[pa.Array, np.ndarray]:
            if key not in encoded:
                encoded[key] = _encoded(schema, key, columns)
            return encoded[key]

        def place(node: PartitionNode, mask: np.ndarray) -> None:
            if node.tablet_id is not None:
                out[mask] = position.get(node.tablet_id, -1)
            elif mask.any():
                walk(node.name, mask)

        def walk(parent: str | None, mask: np.ndarray) -> None:
            key = self.key_of(parent)
            assert key is not None, "only a partitioned node has children"
            keys, hashes = keys_of(key)
            taken = np.zeros(num_rows, dtype=bool)
            default = None
            for child in self.children(parent):
                if child.bound.is_default:
                    default = child
                    continue
                held = mask & child.bound.matches(keys, hashes)
                taken |= held
                place(child, held)
            if default is not None:
                place(default, mask & ~taken)

        walk(None, np.ones(num_rows, dtype=bool))
        return out

    @staticmethod
    def holds(
        schema: Schema, key: PartitionKey, bound: PartitionBound, columns: dict[ColumnId, pa.Array]
    ) -> np.ndarray:
        """Which rows (given ``key``'s columns) ``bound`` holds."""
        return bound.matches(*_encoded(schema, key, columns))

    def prune(self, schema: Schema, predicates: Sequence[ColumnPredicate]) -> set[TabletId]:
        """The leaf tablets a scan with ``predicates`` may need."""
        kept: set[TabletId] = set()

        def visit(parent: str | None) -> None:
            key = self.key_of(parent)
            assert key is not None, "only a partitioned node has children"
            children = self.children(parent)
            admitted = _Admission(schema, key, predicates)
            for child in children:
                if child.bound.is_default:
                    siblings = [c.bound for c in children if not c.bound.is_default]
                    if not admitted.all_covered(siblings):
                        descend(child)
                elif admitted.may_hold(child.bound):
                    descend(child)

        def descend(node: PartitionNode) -> None:
            if node.tablet_id is not None:
                kept.add(node.tablet_id)
            else:
                visit(node.name)

        visit(None)
        return kept

    def to_json(self) -> dict[str, object]:
        return {"key": self.key.to_json(), "nodes": [n.to_json() for n in self.nodes]}

    @classmethod
    def from_json(cls, doc: JsonObject) -> PartitionTree:
        return cls(
            PartitionKey.from_json(doc["key"]),
            tuple(PartitionNode.from_json(n) for n in doc.get("nodes") or ()),
        )


def _encoded(
    schema: Schema, key: PartitionKey, columns: dict[ColumnId, pa.Array]
) -> tuple[pa.Array, np.ndarray]:
    """The rows' encoded keys over ``key``'s columns, and their hashes for a HASH key."""
    types = [schema.column(c).type for c in key.column_ids]
    raw = encode_keys_array([columns[c] for c in key.column_ids], types)
    hashes = crc32c_many(raw) if key.strategy == HASH else np.zeros(0, dtype=np.uint64)
    return raw, hashes


class _Admission:
    """What one level's predicates allow: the encoded values an equality or IN list on
    its (single) column names, and the key range comparisons on its columns bound."""

    def __init__(
        self, schema: Schema, key: PartitionKey, predicates: Sequence[ColumnPredicate]
    ) -> None:
        self.points: list[bytes] | None = None
        self.lower: bytes | None = None
        self.upper: bytes | None = None
        self.empty = False
        key_schema = key.key_schema(schema)
        types = [c.type for c in key_schema.columns]
        if key.strategy != HASH:
            relevant = [p for p in predicates if p.column_id in key.column_ids]
            key_range = ScanSpec(projection=(), predicates=tuple(relevant)).key_range(key_schema)
            self.empty = key_range.is_empty
            self.lower, self.upper = key_range.lower, key_range.upper
        choices: list[tuple[object, ...]] = []
        for column_id in key.column_ids:
            values: tuple[object, ...] | None = None
            for predicate in predicates:
                if predicate.column_id != column_id:
                    continue
                if predicate.kind is PredicateKind.EQUALITY:
                    values = (predicate.value,)
                elif predicate.kind is PredicateKind.IN_LIST and values is None:
                    values = predicate.values
            if values is None:
                return
            choices.append(values)
        total = 1
        for values in choices:
            total *= len(values)
        if total > _MAX_POINTS:
            return
        try:
            self.points = [encode_key(list(c), types) for c in itertools.product(*choices)]
        except (ValueError, OverflowError):
            self.points = None

    def may_hold(self, bound: PartitionBound) -> bool:
        if self.empty:
            return False
        if bound.strategy == HASH:
            if self.points is None:
                return True
            return any(crc32c.crc32c(p) % bound.modulus == bound.remainder for p in self.points)
        if self.points is not None:
            keys = pa.array(self.points, pa.binary())
            return bool(bound.matches(keys, np.zeros(0, dtype=np.uint64)).any())
        if bound.strategy == LIST:
            return any(
                (self.lower is None or v >= self.lower) and (self.upper is None or v < self.upper)
                for v in bound.values
            )
        below = self.upper is None or bound.lower is None or bound.lower < self.upper
        above = bound.upper is None or self.lower is None or self.lower < bound.upper
        return below and above

    def all_covered(self, siblings: list[PartitionBound]) -> bool:
        """Whether every value the predicates allow belongs to one of ``siblings``
        (so the DEFAULT partition holds none of them)."""
        if self.empty:
            return True
        if self.points is None:
            return False
        keys = pa.array(self.points, pa.binary())
        covered = np.zeros(len(keys), dtype=bool)
        hashes = np.fromiter(
            (crc32c.crc32c(p) for p in self.points), dtype=np.uint64, count=len(self.points)
        )
        for bound in siblings:
            covered |= bound.matches(keys, hashes)
        return bool(covered.all())
