"""Finding rows by the values of some of their columns, a batch of values in one probe.

Foreign keys ask this in both directions: do the parent rows a batch of child
rows name exist (through the parent's primary key or the unique index the key
references), and which child rows name a batch of parent keys that are going
away (through a child index that leads with the foreign key's columns when
there is one, else a scan of the child with the values pushed down as IN-list
predicates, which the tablets evaluate on encoded data).  The values go in as
IN lists of up to ``MAX_IN_VALUES`` distinct tuples per probe; a primary-key
probe of a few keys becomes point lookups, as ``index_scan`` does.  Reads are
at the transaction's snapshot with its own writes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog.table import TableInfo
from sql.execution import index_scan
from storage.data_type import ColumnId
from storage.key_encoding import encode_sortable
from storage.predicate import ColumnPredicate, ScanSpec
from storage.transaction import Transaction

MAX_IN_VALUES = index_scan.MAX_IN_VALUES


def values_of(table: TableInfo, columns: Sequence[ColumnId], rows: pa.Table) -> pa.Table:
    """The ``columns`` of ``rows`` (named as ``table``'s columns), cast to their types and named
    by position, for ``present`` and ``matching``."""
    arrays = []
    for column_id in columns:
        column = table.schema.column(column_id)
        arrays.append(rows.column(column.name).combine_chunks().cast(column.type.arrow_type))
    return pa.table(arrays, names=[str(i) for i in range(len(columns))])


def complete(keys: pa.Table) -> np.ndarray:
    """Which rows of ``keys`` have no NULL (MATCH SIMPLE: only those are checked)."""
    mask = np.ones(keys.num_rows, dtype=bool)
    for column in keys.columns:
        mask &= ~column.is_null().to_numpy(zero_copy_only=False)
    return mask


def fitting(keys: pa.Table, table: TableInfo, columns: Sequence[ColumnId]) -> np.ndarray:
    """Which rows of ``keys`` ``table``'s ``columns`` can hold (a bigint key naming an integer
    column may be out of its range: no row has it, and it must not wrap when cast)."""
    mask = np.ones(keys.num_rows, dtype=bool)
    for array, column_id in zip(keys.columns, columns, strict=True):
        target = table.schema.column(column_id).type.arrow_type
        if not (pa.types.is_integer(target) and pa.types.is_integer(array.type)):
            continue
        limits = np.iinfo(target.to_pandas_dtype())
        inside = pc.and_(
            pc.greater_equal(array, pa.scalar(int(limits.min), array.type))
            if np.iinfo(array.type.to_pandas_dtype()).min < limits.min
            else pc.is_valid(array),
            pc.less_equal(array, pa.scalar(int(limits.max), array.type))
            if np.iinfo(array.type.to_pandas_dtype()).max > limits.max
            else pc.is_valid(array),
        )
        mask &= np.asarray(pc.fill_null(inside, True).to_numpy(zero_copy_only=False), dtype=bool)
    return mask


def encoded(keys: pa.Table, table: TableInfo, columns: Sequence[ColumnId]) -> pa.Array:
    """One order-preserving byte string per row of ``keys``: equal tuples, equal bytes."""
    types = [table.schema.column(c).type for c in columns]
    arrays = [
        c.combine_chunks().cast(t.arrow_type) for c, t in zip(keys.columns, types, strict=True)
    ]
    return encode_sortable(arrays, types)


def matching(
    txn: Transaction,
    table: TableInfo,
    columns: Sequence[ColumnId],
    keys: pa.Table,
    projection: Sequence[ColumnId],
) -> pa.Table:
    """The rows of ``table`` (``projection``, named by column name) whose ``columns`` equal one
    of the rows of ``keys`` (NULL-free, one column per entry of ``columns``)."""
    names = [table.schema.column(c).name for c in projection]
    wanted = pc.unique(encoded(keys, table, columns)) if keys.num_rows else None
    batches: list[pa.RecordBatch] = []
    whole = False
    if wanted is not None and len(wanted):
        distinct = keys.group_by([str(i) for i in range(len(columns))]).aggregate([])
        distinct = distinct.select([str(i) for i in range(len(columns))])
        whole = distinct.num_rows > MAX_IN_VALUES and not _has_access_path(table, columns)
        if whole:
            # Many keys and no index to look them up by: one scan beats one per chunk.
            spec = ScanSpec(projection=tuple(projection))
            batches = [b for t in table.tablet_ids for b in txn.scan(t, spec) if b.num_rows]
        for start in range(0, 0 if whole else distinct.num_rows, MAX_IN_VALUES):
            chunk = distinct.slice(start, MAX_IN_VALUES)
            batches.extend(_probe(txn, table, columns, chunk, tuple(projection)))
    arrays = [
        pa.chunked_array(
            [b.column(i) for b in batches], type=table.schema.column(c).type.arrow_type
        )
        for i, c in enumerate(projection)
    ]
    found = pa.table(arrays, names=names)
    if (len(columns) == 1 and not whole) or found.num_rows == 0:
        return found
    at = {c: i for i, c in enumerate(projection)}
    found_keys = pa.table([found.column(at[c]) for c in columns], names=list(map(str, columns)))
    exact = pc.is_in(encoded(found_keys, table, columns), value_set=wanted)
    return found.filter(exact)


def _has_access_path(table: TableInfo, columns: Sequence[ColumnId]) -> bool:
    """Whether rows of ``table`` can be found by ``columns`` without a scan: the columns
    hold the primary key's first column, or lead an index."""
    if table.schema.key_column_ids[0] in columns:
        return True
    return any(i.valid and i.predicate is None and i.columns[0] in columns for i in table.indexes)


def present(
    txn: Transaction, table: TableInfo, columns: Sequence[ColumnId], keys: pa.Table
) -> np.ndarray:
    """Which rows of ``keys`` (NULL-free) ``table`` has a row for, in ``columns``."""
    if keys.num_rows == 0:
        return np.zeros(0, dtype=bool)
    fits = fitting(keys, table, columns)
    if not fits.all():
        out = np.zeros(keys.num_rows, dtype=bool)
        out[fits] = present(txn, table, columns, keys.filter(pa.array(fits)))
        return out
    found = matching(txn, table, columns, keys, columns)
    have = encoded(
        pa.table(found.columns, names=[str(i) for i in range(len(columns))]), table, columns
    )
    mask = pc.is_in(encoded(keys, table, columns), value_set=have)
    return np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)


def _probe(
    txn: Transaction,
    table: TableInfo,
    columns: Sequence[ColumnId],
    chunk: pa.Table,
    projection: tuple[ColumnId, ...],
) -> Iterator[pa.RecordBatch]:
    key_ids = table.schema.key_column_ids
    if set(columns) == set(key_ids) and chunk.num_rows <= index_scan.POINT_LOOKUPS:
        rows = zip(*(c.to_pylist() for c in chunk.columns))
        specs = [
            ScanSpec(
                projection=projection,
                predicates=tuple(
                    ColumnPredicate.equality(c, v) for c, v in zip(columns, row, strict=True)
                ),
            )
            for row in rows
        ]
    else:
        predicates = [
            ColumnPredicate.in_list(c, tuple(pc.unique(chunk.column(i)).to_pylist()))
            for i, c in enumerate(columns)
        ]
        first = key_ids[0]
        if first in columns:
            values = chunk.column(list(columns).index(first))
            low, high = pc.min(values).as_py(), pc.max(values).as_py()
            predicates.append(ColumnPredicate.range(first, low, high, upper_inclusive=True))
        specs = [ScanSpec(projection=projection, predicates=tuple(predicates))]
    for spec in specs:
        lookup = index_scan.choose(table, spec)
        if lookup is not None:
            for _tablet, batch in index_scan.scan(txn, table, lookup, spec, table.tablet_ids):
                yield batch
            continue
        for tablet_id in table.tablet_ids:
            for batch in txn.scan(tablet_id, spec):
                if batch.num_rows:
                    yield batch
