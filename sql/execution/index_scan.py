"""Reading a table through a secondary index: which index serves a scan, and the rows it finds.

A scan whose pushed predicates hold an equality, IN list or range on the leading
columns of an index (and no bound on the primary key, which is cheaper still) reads
the index tablet's entries in that key range first, then fetches just those rows by
primary key (a point read, ``point_read``).  Both reads are at the scan's snapshot with the transaction's own
writes, so they agree: the entries are written in the same transactions as the rows
(``catalog.indexes``).  Every pushed predicate is still applied to the rows fetched,
except an equality or IN list on an indexed column whose constants the key encoding
holds exactly (an int in an integer column, a str in a text one: ``implied``), as a
point read by primary key skips its own: every entry in the ranges read has just
those values, so the row it names does too.

A partial index serves a scan only when the planner proved the query's WHERE
implies the index's (``planner.partial_index``), named in ``partial``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa

from catalog.indexes import IKEY, IndexInfo, row_key, value_columns
from catalog.table import TableInfo
from sql.execution import point_read
from storage.data_type import BINARY, ColumnId, TabletId, TypeKind
from storage.key_encoding import encode_sortable, encode_value, is_key_type, prefix_successor
from storage.predicate import ColumnPredicate, KeyRange, PredicateKind, ScanSpec
from storage.schema import ColumnSchema, Schema
from storage.transaction import Transaction

MAX_IN_VALUES = 1000
"""An IN list longer than this is read by scanning: one index range per value costs more."""
POINT_LOOKUPS = point_read.MAX_KEYS
"""Up to this many rows found are fetched by a point read; more in one bounded scan."""
SHORT_RANGE = 64
"""An index range holding at most this many entries per rowset is read as point reads."""
SHORT_RANGES = 8
"""A lookup of at most this many ranges may be short (``short_keys``)."""
_NOT_NULL = b"\x00"
_NULLS = b"\x01"
"""``encode_sortable``'s flag byte for NULL: every non-NULL value sorts below it."""


@dataclass(frozen=True, slots=True)
class IndexLookup:
    """The index a scan reads through, the ``ikey`` ranges it reads, and why."""

    index: IndexInfo
    ranges: tuple[tuple[bytes, bytes | None], ...]
    columns: tuple[str, ...]
    kinds: tuple[str, ...]
    implied: tuple[ColumnPredicate, ...] = ()
    """The scan's predicates every row found through ``ranges`` satisfies (see the module)."""

    def describe(self) -> str:
        used = ", ".join(f"{c} ({k})" for c, k in zip(self.columns, self.kinds, strict=True))
        unique = "unique " if self.index.unique else ""
        return f"Index Scan using {self.index.name} ({unique}btree) on {used}"


def choose(
    table: TableInfo,
    spec: ScanSpec,
    partial: frozenset[str] = frozenset(),
    plans: IndexPlans | None = None,
) -> IndexLookup | None:
    """The index that serves ``spec`` best, or None when a scan (by key or whole) is better;
    of the partial indexes, only those named in ``partial`` (``ScanPlan.partial_indexes``).
    Never for a time-travel read (``spec.snapshot``): an index built after that instant
    holds no entry of the rows then, which a scan still finds.  ``plans``: the
    ``PlannedIndex`` per shape of ``table``'s prepared scan (``ScanPlan.index_plans``),
    which answers an all-equality spec without judging every index again."""
    if not table.indexes or spec.snapshot is not None:
        return None
    if plans is None:
        return _choose(table, spec, partial)
    planned = _planned(table, spec, partial, plans)
    if planned is not None:
        if planned.index is None:
            return None
        found = planned.lookup(spec)
        if found is not None:
            return found
    elif _bounds_primary_key(table, spec):
        return None
    return _choose(table, spec, partial)


def _choose(table: TableInfo, spec: ScanSpec, partial: frozenset[str]) -> IndexLookup | None:
    """``choose`` by judging every index against ``spec``'s values."""
    if _bounds_primary_key(table, spec):
        return None
    by_column: dict[ColumnId, list[ColumnPredicate]] = {}
    for predicate in spec.predicates:
        by_column.setdefault(predicate.column_id, []).append(predicate)
    best: tuple[tuple[int, int, int], IndexLookup] | None = None
    for index in table.indexes:
        if not index.valid or (index.predicate is not None and index.name not in partial):
            continue
        lookup = _lookup(table, index, by_column)
        if lookup is None:
            continue
        equalities = sum(1 for k in lookup.kinds if k != "range")
        score = (equalities, len(lookup.columns), int(index.unique))
        if best is None or score > best[0]:
            best = (score, lookup)
    return best[1] if best is not None else None


@dataclass(frozen=True, slots=True)
class PlannedIndex:
    """The index an all-equality ``spec`` of one shape (its columns in order) reads through
    if its values encode, worked out once per table, partial indexes and shape: the first
    index whose leading columns those equalities cover most, as ``_choose`` scores them
    when no value fails to encode (a failure only lowers an index's score, and then
    ``_choose`` judges this execution's values; so the answer is ``_choose``'s).  None
    for ``index``: no index serves the shape, whatever the values."""

    index: IndexInfo | None
    columns: tuple[ColumnSchema, ...]
    positions: tuple[int, ...]
    """Which of ``spec.predicates`` (the first on its column) gives each column's value."""
    exact: tuple[type | None, ...] = ()
    """Per column, the value type whose key encoding is exact (``_exactly_encoded``) by
    the Python encoder ``_encoded`` uses: int in an integer column, str in a text one."""
    names: tuple[str, ...] = ()

    def lookup(self, spec: ScanSpec) -> IndexLookup | None:
        """``_lookup``'s answer for ``spec``'s values; None when one fails to encode."""
        assert self.index is not None, "only a planned index looks up"
        prefix = b""
        implied = []
        predicates = spec.predicates
        for column, position, exact in zip(self.columns, self.positions, self.exact, strict=True):
            predicate = predicates[position]
            value = predicate.value
            if exact is not None and type(value) is exact:
                # ``_encoded``'s Python encoder, and ``_exactly_encoded`` holds.
                try:
                    prefix += _NOT_NULL + encode_value(value, column.type, is_last=False)
                except (ValueError, OverflowError, TypeError):
                    return None
                implied.append(predicate)
                continue
            values = [value]
            encoded = _encoded(values, column)
            if encoded is None:
                return None
            prefix += encoded[0]
            if _exactly_encoded(values, column):
                implied.append(predicate)
        return IndexLookup(self.index, ((prefix, prefix_successor(prefix)),), self.names,
                           ("=",) * len(self.names), tuple(implied))  # fmt: skip


IndexPlans = dict[tuple[frozenset[str], tuple[ColumnId, ...]], object]
"""A prepared scan's ``PlannedIndex`` per partial indexes and shape (``choose``)."""


def _planned(
    table: TableInfo, spec: ScanSpec, partial: frozenset[str], plans: IndexPlans
) -> PlannedIndex | None:
    """``spec``'s ``PlannedIndex`` when its predicates are all single equalities (the shape a
    prepared lookup by value has), kept in ``plans``, which belong to one prepared scan of
    ``table`` (immutable: DDL makes a new table and plan, so DROP, CREATE and ALTER INDEX
    and ALTER TABLE make new plans); else None."""
    shape = []
    for predicate in spec.predicates:
        if predicate.kind is not PredicateKind.EQUALITY:
            return None
        shape.append(predicate.column_id)
    key = (partial, tuple(shape))
    cached = plans.get(key)
    if isinstance(cached, PlannedIndex):
        return cached
    planned = plans[key] = _plan(table, key[1], partial)
    return planned


def plan_index(
    table: TableInfo, shape: tuple[ColumnId, ...], partial: frozenset[str]
) -> PlannedIndex:
    """The ``PlannedIndex`` of a spec of single equalities on ``shape``'s columns, in order
    (a prepared lookup keeps its own: ``read_plan``)."""
    return _plan(table, shape, partial)


def _plan(table: TableInfo, shape: tuple[ColumnId, ...], partial: frozenset[str]) -> PlannedIndex:
    none = PlannedIndex(None, (), ())
    if table.schema.key_columns[0].id in shape:
        return none  # a bound on the primary key: a key read is cheaper
    first: dict[ColumnId, int] = {}
    for position, column_id in enumerate(shape):
        first.setdefault(column_id, position)
    best: tuple[tuple[int, int, int], PlannedIndex] | None = None
    for index in table.indexes:
        if not index.valid or (index.predicate is not None and index.name not in partial):
            continue
        covered = []
        for column_id in index.columns:
            if column_id not in first:
                break
            covered.append(column_id)
        if not covered:
            continue
        score = (len(covered), len(covered), int(index.unique))
        if best is None or score > best[0]:
            columns = tuple(table.schema.column(c) for c in covered)
            positions = tuple(first[c] for c in covered)
            exact = tuple(_exact_type(c) for c in columns)
            names = tuple(c.name for c in columns)
            best = (score, PlannedIndex(index, columns, positions, exact, names))
    return best[1] if best is not None else none


def _exact_type(column: ColumnSchema) -> type | None:
    """The value type ``_exactly_encoded`` accepts for ``column`` when ``_encoded`` takes
    its Python encoder for it (a key type), if any."""
    data_type = column.type
    if not is_key_type(data_type):
        return None
    if data_type.is_integer:
        return int
    if data_type.kind in (TypeKind.STRING, TypeKind.VARCHAR) and not data_type.blank_padded:
        return str
    return None


def _bounds_primary_key(table: TableInfo, spec: ScanSpec) -> bool:
    first = table.schema.key_columns[0].id
    return any(
        p.column_id == first and p.kind in (PredicateKind.EQUALITY, PredicateKind.RANGE)
        for p in spec.predicates
    )


def _lookup(
    table: TableInfo, index: IndexInfo, by_column: dict[ColumnId, list[ColumnPredicate]]
) -> IndexLookup | None:
    prefixes = [b""]
    columns: list[str] = []
    kinds: list[str] = []
    implied: list[ColumnPredicate] = []
    for column_id in index.columns:
        on_column = by_column.get(column_id)
        if on_column is None:
            break
        column = table.schema.column(column_id)
        equality: ColumnPredicate | None = None
        listed: ColumnPredicate | None = None
        ranged: ColumnPredicate | None = None
        for p in reversed(on_column):  # the first of each kind wins
            kind = p.kind
            if kind is PredicateKind.EQUALITY:
                equality = p
            elif kind is PredicateKind.IN_LIST:
                listed = p
            elif kind is PredicateKind.RANGE:
                ranged = p
        if equality is not None or listed is not None:
            values = [equality.value] if equality is not None else list(_values(listed))
            if len(values) * len(prefixes) > MAX_IN_VALUES:
                break
            encoded = _encoded(values, column)
            if encoded is None:
                break
            if len(encoded) > 1:
                encoded = sorted(set(encoded))
            prefixes = [p + e for p in prefixes for e in encoded]
            predicate = equality if equality is not None else listed
            if predicate is not None and _exactly_encoded(values, column):
                implied.append(predicate)
            columns.append(column.name)
            kinds.append("=" if equality is not None else "IN")
            continue
        if ranged is not None:
            ranges = [_range(p, ranged, column) for p in prefixes]
            if any(r is None for r in ranges):
                break
            columns.append(column.name)
            kinds.append("range")
            return IndexLookup(index, tuple(r for r in ranges if r is not None), tuple(columns),
                               tuple(kinds), tuple(implied))  # fmt: skip
        break
    if not columns:
        return None
    bounds = tuple([(p, prefix_successor(p)) for p in prefixes])
    return IndexLookup(index, bounds, tuple(columns), tuple(kinds), tuple(implied))


def _exactly_encoded(values: list[object], column: ColumnSchema) -> bool:
    """Whether equality with each of ``values`` is equality of key encodings: ints in an
    integer column, strs in a text or varchar one (no rounding, conversion or padding)."""
    data_type = column.type
    kinds = {type(v) for v in values}
    if kinds <= _INTS:
        return data_type.is_integer
    return (
        kinds <= _STRS
        and data_type.kind in (TypeKind.STRING, TypeKind.VARCHAR)
        and not data_type.blank_padded
    )


_INTS = {int}
_STRS = {str}


def _values(predicate: ColumnPredicate | None) -> tuple[object, ...]:
    return predicate.values if predicate is not None else ()


def _encoded(values: list[object], column: ColumnSchema) -> list[bytes] | None:
    data_type = column.type
    if is_key_type(data_type) and None not in values:
        # A few constants: Python's encoder, as a key lookup does (Arrow kernels cost more).
        try:
            return [_NOT_NULL + encode_value(v, data_type, is_last=False) for v in values]
        except (ValueError, OverflowError, TypeError):
            return None
    try:
        array = pa.array(values, data_type.arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return None
    if array.null_count:
        return None
    encoded: list[bytes] = encode_sortable([array], [data_type]).to_pylist()
    return encoded


def _range(
    prefix: bytes, predicate: ColumnPredicate, column: ColumnSchema
) -> tuple[bytes, bytes | None] | None:
    lower = prefix + b"\x00"
    upper: bytes | None = prefix + _NULLS
    if predicate.lower is not None:
        found = _encoded([predicate.lower], column)
        if found is None:
            return None
        lower = prefix + found[0]
        if not predicate.lower_inclusive:
            lower = prefix_successor(lower) or lower
    if predicate.upper is not None:
        found = _encoded([predicate.upper], column)
        if found is None:
            return None
        upper = prefix + found[0]
        if predicate.upper_inclusive:
            upper = prefix_successor(upper)
    return lower, upper


def short_keys(
    txn: Transaction, table: TableInfo, lookup: IndexLookup, spec: ScanSpec
) -> list[bytes] | None:
    """The encoded primary keys ``lookup`` finds when reading them is short
    (``keys_in_ranges``); else None (a long read)."""
    return keys_in_ranges(txn, table, lookup.index, lookup.ranges, spec.snapshot)


def keys_in_ranges(
    txn: Transaction,
    table: TableInfo,
    index: IndexInfo,
    ranges: tuple[tuple[bytes, bytes | None], ...],
    snapshot: int | None,
) -> list[bytes] | None:
    """The encoded primary keys ``index`` holds in ``ranges`` of ``ikey`` when reading them
    is short: a few ranges, each read as point reads, naming at most ``POINT_LOOKUPS`` rows;
    else None (a long read).  A non-unique index's entries hold their row's key in their
    own (``row_key``), so only the index's key index is read; a unique one's are in the
    copied columns."""
    if len(ranges) > SHORT_RANGES:
        return None
    if index.unique:
        found = _primary_keys(txn, table, index, ranges, snapshot, short_only=True)
        if found is None or found.num_rows > POINT_LOOKUPS:
            return None
        return point_read.encoded(table, found)
    entries: list[bytes] = []
    for lower, upper in ranges:
        key_range = _entry_range(lower, upper)
        if key_range.is_empty:
            continue
        keys = txn.keys_in_range(index.tablet_id, key_range, SHORT_RANGE, snapshot=snapshot)
        if keys is None:
            return None
        entries += keys
        if len(entries) > POINT_LOOKUPS:
            return None
    key_types = [c.type for c in table.schema.key_columns]
    out = []
    for entry in entries:
        key = row_key(key_types, entry)
        assert key is not None, "a non-unique index's entry ends with its row's key"
        out.append(key)
    return out


def scan(
    txn: Transaction,
    table: TableInfo,
    lookup: IndexLookup,
    spec: ScanSpec,
    tablet_ids: tuple[TabletId, ...],
    keys: list[bytes] | None = None,
) -> Iterator[tuple[TabletId, pa.RecordBatch]]:
    """The rows of ``table`` matching ``spec``, found through ``lookup``'s index (whose
    encoded primary keys ``short_keys`` may have found already)."""
    if keys is None:
        found = _primary_keys(txn, table, lookup.index, lookup.ranges, spec.snapshot)
        assert found is not None, "a read that may be long always finds its keys"
        if found.num_rows > POINT_LOOKUPS:
            yield from _probe(txn, table, spec, tablet_ids, found)
            return
        keys = point_read.encoded(table, found)
    yield from point_read.read(txn, keys, spec, tablet_ids, lookup.implied)


def _probe(
    txn: Transaction,
    table: TableInfo,
    spec: ScanSpec,
    tablet_ids: tuple[TabletId, ...],
    keys: pa.Table,
) -> Iterator[tuple[TabletId, pa.RecordBatch]]:
    """The rows of many ``keys`` (key columns in order), by one scan bounded by the first
    key column's smallest and largest values and holding just those values."""
    key_columns = table.schema.key_columns
    values = tuple(keys.column(0).to_pylist())
    probe = dataclasses.replace(
        spec,
        predicates=(
            *spec.predicates,
            ColumnPredicate.range(
                key_columns[0].id, min(values), max(values), upper_inclusive=True
            ),
            ColumnPredicate.in_list(key_columns[0].id, values),
        ),  # fmt: skip
    )
    remaining = spec.limit
    for tablet_id in tablet_ids:
        for batch in txn.scan(tablet_id, probe):
            if not batch.num_rows:
                continue
            if remaining is not None:
                batch = batch.slice(0, remaining)
                remaining -= batch.num_rows
            yield tablet_id, batch
            if remaining == 0:
                return


_KEY_PROJECTIONS: dict[tuple[int, int], tuple[Schema, IndexInfo, tuple[ColumnId, ...]]] = {}
_KEY_PROJECTION_ENTRIES = 256


def _key_projection(schema: Schema, index: IndexInfo) -> tuple[ColumnId, ...]:
    """The index tablet's columns that copy the primary key, in key order; made once per
    table schema and index (both immutable: DDL makes new ones), not per lookup."""
    key = (id(schema), id(index))
    found = _KEY_PROJECTIONS.get(key)
    if found is not None and found[0] is schema and found[1] is index:
        return found[2]
    copies = dict(value_columns(schema, index))
    projection = tuple(copies[c.id] for c in schema.key_columns)
    if len(_KEY_PROJECTIONS) >= _KEY_PROJECTION_ENTRIES:
        _KEY_PROJECTIONS.clear()
    _KEY_PROJECTIONS[key] = (schema, index, projection)
    return projection


def _primary_keys(
    txn: Transaction,
    table: TableInfo,
    index: IndexInfo,
    ranges: tuple[tuple[bytes, bytes | None], ...],
    snapshot: int | None,
    short_only: bool = False,
) -> pa.Table | None:
    """The primary keys ``index`` holds in ``ranges`` (key columns in order);
    ``short_only``: None as soon as a range is too long to read as point reads."""
    projection = _key_projection(table.schema, index)
    batches: list[pa.RecordBatch] = []
    for lower, upper in ranges:
        key_range = _entry_range(lower, upper)
        if key_range.is_empty:
            continue
        short = txn.read_key_range(
            index.tablet_id, key_range, projection, SHORT_RANGE, snapshot=snapshot
        )
        if short is not None:
            batches.append(short)
            continue
        if short_only:
            return None
        index_spec = ScanSpec(
            projection=projection,
            predicates=(
                ColumnPredicate.range(IKEY, lower, upper)
                if upper is not None
                else ColumnPredicate.range(IKEY, lower),
            ),
            snapshot=snapshot,
        )
        batches.extend(b for b in txn.scan(index.tablet_id, index_spec) if b.num_rows)
    if not batches:
        return pa.table({str(c): pa.array([], pa.null()) for c in projection})
    return pa.Table.from_batches(batches)


def _entry_range(lower: bytes, upper: bytes | None) -> KeyRange:
    """The index tablet's encoded key range of the entries whose ``ikey`` is in
    ``[lower, upper)``: ``ikey`` leads a two-column key (``index_schema``), so each bound is
    its non-last encoding, as ``ScanSpec.key_range`` derives it from a range on ``ikey``."""
    return KeyRange(
        encode_value(lower, BINARY, is_last=False),
        None if upper is None else encode_value(upper, BINARY, is_last=False),
    )
