"""Keeping a table's secondary indexes in step with its rows, in the writer's transaction.

Every write path calls in here after writing base rows: new rows add entries, deleted
rows remove theirs, an updated row whose indexed or INCLUDE columns changed swaps its
old entry for a new one.  The entries go through the same storage ``Transaction`` as the
rows (``catalog.indexes`` says what an entry is), so they commit, roll back and roll
back to a savepoint with them; a unique index's duplicate is the index tablet's 23505,
raised here under the index's name with PostgreSQL's detail.

An UPDATE or DELETE reads the rows' current values by key just before writing them
(``current_rows``), at the statement's snapshot: a row the write then finds changed by
a later commit is handed back as a conflict and not written, so for every row written
those values are the ones being replaced.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from catalog.indexes import IKEY, SUFFIX, IndexInfo, entries, entry_keys
from catalog.table import TableInfo
from sql.common.duckdb_errors import translate
from sql.common.names import identifier_name
from storage.data_type import ColumnId
from storage.errors import FeatureNotSupported, UndefinedColumn, UniqueViolation
from storage.predicate import ColumnPredicate, ScanSpec
from storage.transaction import Transaction


def _column_getter(table: TableInfo, rows: pa.Table) -> Callable[[ColumnId], pa.Array]:
    def column(column_id: ColumnId) -> pa.Array:
        schema_column = table.schema.column(column_id)
        return rows.column(schema_column.name).combine_chunks().cast(schema_column.type.arrow_type)

    return column


def _covered(index: IndexInfo, rows: pa.Table) -> pa.Table:
    """The rows a partial index holds: those its WHERE is true for (DuckDB evaluates it)."""
    if index.predicate is None or rows.num_rows == 0:
        return rows
    mask = _predicate_mask(index.predicate, rows)
    return rows.filter(mask)


def _predicate_mask(predicate: str, rows: pa.Table) -> pa.Array:
    parsed: exp.Expr = exp.maybe_parse(predicate, dialect="postgres")
    condition = parsed.sql(dialect="duckdb")
    connection = duckdb.connect()
    try:
        connection.register("__nyala_rows", rows)
        try:
            result = connection.sql(
                f"SELECT coalesce(({condition}), false) FROM __nyala_rows"
            ).to_arrow_table()
        except duckdb.Error as exc:
            raise translate(exc) from None
    finally:
        connection.close()
    assert result is not None, "a SELECT returns a table"
    return result.column(0).combine_chunks()


def check_predicate(table: TableInfo, predicate: str) -> None:
    """Refuse a partial index's WHERE that reads anything but the table's columns."""
    node: exp.Expr = exp.maybe_parse(predicate, dialect="postgres")
    if node.find(exp.Subquery, exp.Select, exp.AggFunc, exp.Parameter):
        raise FeatureNotSupported("index predicates must be plain expressions over the table")
    for column in node.find_all(exp.Column):
        if table.schema.find(identifier_name(column)) is None:
            raise UndefinedColumn(f'column "{identifier_name(column)}" does not exist')
    empty = (
        table.schema.arrow_schema()
        .empty_table()
        .rename_columns([c.name for c in table.schema.columns])
    )
    _predicate_mask(predicate, empty)


def add_entries(table: TableInfo, txn: Transaction, rows: pa.Table) -> None:
    """Insert the entries of new ``rows`` (columns named as the table's) into every index."""
    for index in table.indexes:
        kept = _covered(index, rows)
        if kept.num_rows == 0:
            continue
        batch = entries(table.schema, index, _column_getter(table, kept))
        try:
            txn.insert(index.tablet_id, batch, constraint_name=index.name)
        except UniqueViolation:
            raise _violation(table, index, txn, kept, batch) from None


def add_missing_entries(table: TableInfo, txn: Transaction, rows: pa.Table) -> None:
    """``add_entries``, less the entries the indexes already hold exactly (a concurrent
    writer wrote them while CREATE INDEX CONCURRENTLY filled the index); one that differs
    is written and collides (23505 in a unique index)."""
    for index in table.indexes:
        kept = _covered(index, rows)
        if kept.num_rows == 0:
            continue
        batch = entries(table.schema, index, _column_getter(table, kept))
        spec = ScanSpec(
            projection=tuple(ColumnId(int(name)) for name in batch.schema.names),
            predicates=(
                ColumnPredicate.in_list(IKEY, tuple(pc.unique(batch.column(0)).to_pylist())),
            ),
        )
        held = {
            row
            for found in txn.scan(index.tablet_id, spec)
            for row in zip(*(c.to_pylist() for c in found.columns))
        }
        if held:
            # Per-row Python over the few keys a writer indexed during the build.
            fresh = [row not in held for row in zip(*(c.to_pylist() for c in batch.columns))]
            batch = batch.filter(pa.array(fresh, pa.bool_()))
            kept = kept.filter(pa.array(fresh, pa.bool_()))
        if batch.num_rows == 0:
            continue
        try:
            txn.insert(index.tablet_id, batch, constraint_name=index.name)
        except UniqueViolation:
            raise _violation(table, index, txn, kept, batch) from None


def without_unique_conflicts(table: TableInfo, txn: Transaction, rows: pa.Table) -> pa.Table:
    """``rows`` less those whose values a live row, or an earlier one of ``rows``, already
    holds in a unique index (``ON CONFLICT DO NOTHING`` without a target skips them)."""
    probes: list[tuple[np.ndarray, list[tuple[bytes, bytes]], set[tuple[bytes, bytes]]]] = []
    for index in table.indexes:
        if not index.unique:
            continue
        covered = np.ones(rows.num_rows, dtype=bool)
        if index.predicate is not None:
            mask = _predicate_mask(index.predicate, rows)
            covered = mask.to_numpy(zero_copy_only=False).astype(bool)
        batch = entries(table.schema, index, _column_getter(table, rows))
        pairs = list(zip(batch.column(0).to_pylist(), batch.column(1).to_pylist()))
        spec = ScanSpec(
            projection=(IKEY, SUFFIX),
            predicates=(ColumnPredicate.in_list(IKEY, tuple({k for k, _ in pairs})),),
        )
        taken = {
            pair
            for b in txn.scan(index.tablet_id, spec)
            for pair in zip(b.column(0).to_pylist(), b.column(1).to_pylist())
        }
        probes.append((covered, pairs, taken))
    keep = np.ones(rows.num_rows, dtype=bool)
    # Per-row Python over the statement's proposed rows, in order, as PostgreSQL decides.
    for position in range(rows.num_rows):
        mine = [(p[position], t) for c, p, t in probes if c[position]]
        if any(pair in taken for pair, taken in mine):
            keep[position] = False
            continue
        for pair, taken in mine:
            taken.add(pair)
    return rows if keep.all() else rows.filter(pa.array(keep))


def remove_entries(table: TableInfo, txn: Transaction, rows: pa.Table) -> None:
    """Delete the entries of ``rows`` (their values before the write) from every index."""
    for index in table.indexes:
        kept = _covered(index, rows)
        if kept.num_rows:
            batch = entries(table.schema, index, _column_getter(table, kept))
            txn.delete(index.tablet_id, entry_keys(batch))


def replace_entries(
    table: TableInfo,
    txn: Transaction,
    old: pa.Table,
    new: pa.Table,
) -> None:
    """Swap the entries of rows updated from ``old`` to ``new`` (row i of each is one row,
    same key) in the indexes whose columns the update changed."""
    for index in table.indexes:
        changed = _changed(table, index, old, new)
        if changed is None:
            continue
        mask = pa.array(changed)
        one = dataclasses.replace(table, indexes=(index,))
        remove_entries(one, txn, old.filter(mask))
        add_entries(one, txn, new.filter(mask))


def _changed(table: TableInfo, index: IndexInfo, old: pa.Table, new: pa.Table) -> np.ndarray | None:
    """Which rows' entry in ``index`` the update changes (None: none of them)."""
    names = [table.schema.column(c).name for c in sorted(index.reads())]
    if index.predicate is not None:
        names = [c.name for c in table.columns]
    mask = np.zeros(old.num_rows, dtype=bool)
    for name in names:
        if name not in new.column_names:
            continue
        before, after = old.column(name), new.column(name)
        differs = pc.fill_null(pc.not_equal(before, after), True)
        both_null = pc.and_(pc.is_null(before), pc.is_null(after))
        differs = pc.and_(differs, pc.invert(both_null))
        mask |= differs.to_numpy(zero_copy_only=False)
    return mask if mask.any() else None


def current_rows(table: TableInfo, txn: Transaction, keys: pa.Table) -> pa.Table:
    """The rows (every column, named as the table's) whose key values ``keys`` holds, in
    ``keys``' order, as this transaction now sees them."""
    key_columns = table.schema.key_columns
    predicates = tuple(
        ColumnPredicate.in_list(c.id, tuple(pc.unique(keys.column(c.name)).to_pylist()))
        for c in key_columns
    )
    spec = ScanSpec(projection=table.schema.column_ids, predicates=predicates)
    batches = [b for tablet_id in table.tablet_ids for b in txn.scan(tablet_id, spec)]
    names = [c.name for c in table.schema.columns]
    if batches:
        found = pa.Table.from_batches(batches).rename_columns(names)
    else:
        found = table.schema.arrow_schema().empty_table().rename_columns(names)
    wanted = pa.table(
        {c.name: keys.column(c.name).cast(c.type.arrow_type) for c in key_columns}
    ).append_column("__nyala_order", pa.array(np.arange(keys.num_rows)))
    joined = wanted.join(found, [c.name for c in key_columns], join_type="left outer")
    return joined.sort_by("__nyala_order").select(names)


def truncate(table: TableInfo, txn: Transaction) -> None:
    """Remove every entry of every index of ``table`` (TRUNCATE)."""
    spec = ScanSpec(projection=(IKEY, SUFFIX))
    for index in table.indexes:
        batches = [b for b in txn.scan(index.tablet_id, spec) if b.num_rows]
        if batches:
            keys = pa.Table.from_batches(batches).combine_chunks().to_batches()[0]
            txn.delete(index.tablet_id, keys)


def _violation(
    table: TableInfo, index: IndexInfo, txn: Transaction, rows: pa.Table, batch: pa.RecordBatch
) -> UniqueViolation:
    """23505 naming the index and, as PostgreSQL's detail does, the first duplicate values."""
    names = [table.schema.column(c).name for c in index.columns]
    pairs = list(zip(batch.column(0).to_pylist(), batch.column(1).to_pylist()))
    spec = ScanSpec(
        projection=(IKEY, SUFFIX),
        predicates=(ColumnPredicate.in_list(IKEY, tuple({k for k, _ in pairs})),),
    )
    taken = {
        pair
        for b in txn.scan(index.tablet_id, spec)
        for pair in zip(b.column(0).to_pylist(), b.column(1).to_pylist())
    }
    row = 0
    for position, pair in enumerate(pairs):
        if pair in taken:
            row = position
            break
        taken.add(pair)
    values = ", ".join(_text(rows.column(n)[row].as_py()) for n in names)
    error = UniqueViolation(
        f'duplicate key value violates unique constraint "{index.name}"',
        detail=f"Key ({', '.join(names)})=({values}) already exists.",
    )
    error.index_name = index.name
    return error


def _text(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "t" if value else "f"
    return str(value)
