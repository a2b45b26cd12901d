"""Reading a few rows by primary key: a point read, not a scan.

A scan with an equality (or a short IN list) on every primary-key column names its
rows' keys outright, as does an index lookup once the index has given them.  Those
keys are encoded and read with ``Transaction.read_keys`` (Kudu's point read: bloom
filter, key index, the cached block's row), which skips a scan's key ranges, block
walks and masks.  Every pushed predicate is applied to the rows read, so a key that
does not encode exactly (``1.5`` for an integer key) finds nothing a scan would not;
but the equalities and IN lists that named the keys (``pinning``) are not: the key
encoding is exact and one-to-one (a value that does not encode names no key), so a row
read by such a key holds those values, and a prepared point select needs no Arrow kernel.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from catalog.table import TableInfo
from storage.data_type import ColumnId, TabletId
from storage.key_encoding import encode_key, encode_keys
from storage.predicate import ColumnPredicate, PredicateKind, ScanSpec
from storage.transaction import Transaction

MAX_KEYS = 64
"""Up to this many keys are read one by one; more are cheaper as one bounded scan."""
_PYTHON_ENCODED = 8


def keys_of(table: TableInfo, spec: ScanSpec) -> list[bytes] | None:
    """The encoded primary keys ``spec`` pins with equalities and IN lists on every key
    column, or None when it does not (or they would be more than ``MAX_KEYS``)."""
    if not table.schema.key_columns:
        return None
    key = _one_key(table, spec)
    if key is not None:
        return key
    choices: list[Sequence[object]] = []
    total = 1
    for column in table.schema.key_columns:
        values = _pinned(spec.predicates, column.id)
        if values is None:
            return None
        total *= len(values)
        if total > MAX_KEYS:
            return None
        choices.append(values)
    types = [c.type for c in table.schema.key_columns]
    keys: set[bytes] = set()
    for combination in itertools.product(*choices):
        try:
            keys.add(encode_key(combination, types))
        except (ValueError, OverflowError, TypeError, ArithmeticError):
            continue  # not a value of the key's type: no row has it
    return sorted(keys)


def _one_key(table: TableInfo, spec: ScanSpec) -> list[bytes] | None:
    """``keys_of`` when an equality pins each key column (a prepared point select): its one
    key, or no key when a value is not of its column's type; None for any other spec."""
    values = []
    for column in table.schema.key_columns:
        predicate = _pinning(spec.predicates, column.id)
        if predicate is None or predicate.kind is not PredicateKind.EQUALITY:
            return None
        values.append(predicate.value)
    try:
        return [encode_key(values, [c.type for c in table.schema.key_columns])]
    except (ValueError, OverflowError, TypeError, ArithmeticError):
        return []


def pinning(table: TableInfo, spec: ScanSpec) -> tuple[ColumnPredicate, ...]:
    """The predicates ``keys_of`` names its keys by (one per key column): every row read by
    those keys satisfies them, so ``read`` need not apply them again."""
    found = (_pinning(spec.predicates, c.id) for c in table.schema.key_columns)
    return tuple(p for p in found if p is not None)


def _pinning(
    predicates: tuple[ColumnPredicate, ...], column_id: ColumnId
) -> ColumnPredicate | None:
    for predicate in predicates:
        if predicate.column_id != column_id:
            continue
        if predicate.kind is PredicateKind.EQUALITY and predicate.value is not None:
            return predicate
        if predicate.kind is PredicateKind.IN_LIST:
            return predicate
    return None


def _pinned(predicates: tuple[ColumnPredicate, ...], column_id: ColumnId) -> list[object] | None:
    predicate = _pinning(predicates, column_id)
    if predicate is None:
        return None
    if predicate.kind is PredicateKind.EQUALITY:
        return [predicate.value]
    return [v for v in predicate.values if v is not None]


def encoded(table: TableInfo, keys: pa.Table) -> list[bytes]:
    """The encoded primary keys of ``keys`` (the key columns' values, in key order)."""
    key_columns = table.schema.key_columns
    types = [c.type for c in key_columns]
    if keys.num_rows <= _PYTHON_ENCODED:
        # A few keys: Python's encoder, as a key lookup does (Arrow kernels cost more).
        rows = zip(*(keys.column(i).to_pylist() for i in range(len(key_columns))), strict=True)
        return [encode_key(row, types) for row in rows]
    arrays = [
        keys.column(i).combine_chunks().cast(c.type.arrow_type) for i, c in enumerate(key_columns)
    ]
    return encode_keys(arrays, types)


def read(
    txn: Transaction,
    keys: list[bytes],
    spec: ScanSpec,
    tablet_ids: tuple[TabletId, ...],
    implied: tuple[ColumnPredicate, ...] = (),
) -> list[tuple[TabletId, pa.RecordBatch]]:
    """The rows of ``keys`` matching ``spec`` (its projection), from each of ``tablet_ids``
    that holds any; ``implied``: predicates of ``spec`` every row of those keys satisfies
    (``pinning``).  A list: a few rows read by key never wait, so no generator pulls them."""
    out: list[tuple[TabletId, pa.RecordBatch]] = []
    if not keys:
        return out
    skipped = {id(q) for q in implied}
    predicates = [p for p in spec.predicates if id(p) not in skipped]
    needed = tuple(dict.fromkeys((*spec.projection, *(p.column_id for p in predicates))))
    remaining = spec.limit
    for tablet_id in tablet_ids:
        batch = txn.read_keys(tablet_id, keys, needed, snapshot=spec.snapshot)
        if not batch.num_rows:
            continue
        if predicates:
            batch = matching(batch, needed, predicates)
        if needed != spec.projection:
            batch = batch.select([needed.index(c) for c in spec.projection])
        if remaining is not None:
            batch = batch.slice(0, remaining)
            remaining -= batch.num_rows
        if batch.num_rows:
            out.append((tablet_id, batch))
        if remaining == 0:
            break
    return out


def matching(
    batch: pa.RecordBatch, columns: tuple[ColumnId, ...], predicates: Sequence[ColumnPredicate]
) -> pa.RecordBatch:
    """The rows of ``batch`` (``columns`` in order) that satisfy every one of ``predicates``."""
    masks = [p.evaluate(batch.column(columns.index(p.column_id))) for p in predicates]
    return batch.filter(functools.reduce(pc.and_, masks))
