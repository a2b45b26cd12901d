"""Foreign keys on written rows: the parents new child rows name exist, removed parents are unused.

PostgreSQL checks a foreign key once per statement, after its rows are
written (so a statement may insert a parent and its child, or a row naming
itself).  Here each check is one probe per statement and key: the child side
looks the distinct new keys up through the parent's primary key or unique
index; the parent side looks the keys an UPDATE or DELETE took away up in the
child, through an index of the child that leads with the key's columns when
there is one, else a scan of the child with the keys pushed down as IN lists
(``execution.referential``).  MATCH SIMPLE skips a child row with a NULL in
the key; MATCH FULL refuses a key that is only partly NULL.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog.catalog import Catalog
from catalog.foreign_keys import (
    CASCADE,
    MATCH_FULL,
    NO_ACTION,
    SET_DEFAULT,
    SET_NULL,
    ForeignKey,
)
from catalog.table import TableInfo
from sql.dml import deferred_constraints, referential_actions
from sql.dml.write_batches import routed
from sql.execution import referential
from storage.data_type import ColumnId
from storage.errors import FeatureNotSupported, ForeignKeyViolation
from storage.row_lock_mode import RowLockMode
from storage.transaction import Transaction


@dataclass(frozen=True, slots=True)
class References:
    """A table's foreign keys (with their parents) and the keys that reference it (with their
    children), as they were when the statement was planned."""

    table: TableInfo
    outgoing: tuple[tuple[ForeignKey, TableInfo], ...]
    incoming: tuple[tuple[ForeignKey, TableInfo], ...]
    catalog: Catalog
    """Where referential actions find the tables they reach in turn."""

    def touches_parent_key(self, changed: set[ColumnId]) -> bool:
        return any(set(k.parent_columns) & changed for k, _ in self.incoming)


def plan_references(catalog: Catalog, table: TableInfo) -> References | None:
    outgoing = tuple(
        (key, table if key.parent_id == table.table_id else catalog.table_by_id(key.parent_id))
        for key in table.foreign_keys
    )
    incoming = tuple((key, child) for child, key in catalog.referencing(table.table_id))
    if not outgoing and not incoming:
        return None
    return References(table, outgoing, incoming, catalog)


def _describe(table: TableInfo, columns: tuple[ColumnId, ...], values: list[object]) -> str:
    names = ", ".join(table.schema.column(c).name for c in columns)
    shown = ", ".join("null" if v is None else str(v) for v in values)
    return f"Key ({names})=({shown})"


def check_new_rows(
    refs: References | None, txn: Transaction, rows: pa.Table, changed: set[ColumnId] | None
) -> None:
    """23503 when a row of ``rows`` (written to ``refs.table``) names a parent that does not
    exist; ``changed`` limits an UPDATE's check to keys whose columns it set.  A deferred
    key's check is owed to COMMIT instead."""
    if refs is None or rows.num_rows == 0:
        return
    table = refs.table
    for key, parent in refs.outgoing:
        if changed is not None and not set(key.columns) & changed:
            continue
        keys = referential.values_of(table, key.columns, rows)
        full = referential.complete(keys)
        if key.match == MATCH_FULL:
            empty = np.ones(keys.num_rows, dtype=bool)
            for column in keys.columns:
                empty &= column.is_null().to_numpy(zero_copy_only=False)
            if (~full & ~empty).any():
                raise ForeignKeyViolation(
                    _child_message(table, key),
                    detail="MATCH FULL does not allow mixing of null and nonnull key values.",
                )
        wanted = keys.filter(pa.array(full)) if not full.all() else keys
        if wanted.num_rows == 0:
            continue
        if deferred_constraints.is_deferred(txn, key):
            deferred_constraints.owe(
                txn, deferred_constraints.Owed(key, table, parent, wanted, parent_side=False)
            )
            continue
        _check_parents_exist(txn, table, key, parent, wanted)


def _child_message(table: TableInfo, key: ForeignKey) -> str:
    return f'insert or update on table "{table.name}" violates foreign key constraint "{key.name}"'


def _check_parents_exist(
    txn: Transaction, table: TableInfo, key: ForeignKey, parent: TableInfo, wanted: pa.Table
) -> None:
    """23503 unless every key of ``wanted`` has its parent row; the parent rows found are
    locked FOR KEY SHARE until the transaction ends, as PostgreSQL does: a concurrent
    delete (or key change) of one waits, then sees the child and fails, while other
    child inserts and updates of the parent's other columns go ahead."""
    fits = referential.fitting(wanted, parent, key.parent_columns)
    if not fits.all():
        first = int(np.flatnonzero(~fits)[0])
        values = [c[first].as_py() for c in wanted.columns]
        raise ForeignKeyViolation(
            _child_message(table, key),
            detail=f"{_describe(table, key.columns, values)} is not present in table "
            f'"{parent.name}".',
        )
    key_ids = parent.schema.key_column_ids
    projection = tuple(dict.fromkeys((*key_ids, *key.parent_columns)))
    while True:
        found = referential.matching(txn, parent, key.parent_columns, wanted, projection)
        if not _lock_rows(txn, parent, found):
            break
        # A parent row changed and committed since this snapshot: look again at the newest.
        txn.refresh_snapshot()
    at = {c: i for i, c in enumerate(projection)}
    have = referential.encoded(
        pa.table([found.column(at[c]) for c in key.parent_columns],
                 names=[str(i) for i in range(len(key.parent_columns))]),
        parent, key.parent_columns,
    )  # fmt: skip
    mine = referential.encoded(wanted, parent, key.parent_columns)
    there = np.asarray(pc.is_in(mine, value_set=have).to_numpy(zero_copy_only=False), dtype=bool)
    if not there.all():
        first = int(np.flatnonzero(~there)[0])
        values = [c[first].as_py() for c in wanted.columns]
        raise ForeignKeyViolation(
            _child_message(table, key),
            detail=f"{_describe(table, key.columns, values)} is not present in table "
            f'"{parent.name}".',
        )


def _lock_rows(txn: Transaction, table: TableInfo, rows: pa.Table) -> bool:
    """Lock ``rows`` of ``table`` FOR KEY SHARE; True when some row had changed since the
    snapshot (it is to be looked at again)."""
    if rows.num_rows == 0:
        return False
    changed = False
    for tablet_id, batch, _positions in routed(table, rows, list(table.schema.key_columns)):
        found: list[int] = []
        txn.lock(tablet_id, batch, RowLockMode.KEY_SHARE, conflicts=found, command="INSERT")
        changed = changed or bool(found)
    return changed


def _check_unreferenced(
    txn: Transaction, table: TableInfo, key: ForeignKey, child: TableInfo, gone: pa.Table
) -> None:
    gone = gone.filter(pa.array(referential.fitting(gone, child, key.columns)))
    probe = pa.table(
        [c.combine_chunks().cast(child.schema.column(i).type.arrow_type) for c, i in
         zip(gone.columns, key.columns, strict=True)],
        names=gone.column_names,
    )  # fmt: skip
    found = referential.matching(txn, child, key.columns, probe, key.columns)
    if not found.num_rows and txn.repeatable_read:
        # A child row committed after this snapshot (its insert held the parent row FOR
        # KEY SHARE until then) counts too, as PostgreSQL's check finds it.
        with txn.reading_latest():
            found = referential.matching(txn, child, key.columns, probe, key.columns)
    if found.num_rows:
        values = [c[0].as_py() for c in found.columns]
        raise ForeignKeyViolation(
            f'update or delete on table "{table.name}" violates foreign key constraint '
            f'"{key.name}" on table "{child.name}"',
            detail=f"{_describe(table, key.parent_columns, values)} is still referenced "
            f'from table "{child.name}".',
        )


def check_deferred(txn: Transaction, names: set[str] | None = None) -> None:
    """Run the checks deferred keys owe (those of ``names``, or all): at COMMIT, or when
    SET CONSTRAINTS makes them immediate.  Each is judged by the data as it is now: a child
    key no row holds any more, or a parent key a row holds again, passes."""
    owed = deferred_constraints.take_owed(txn, names)
    if not owed:
        return
    txn.begin_statement()
    for item in owed:
        key, child, parent = item.key, item.child, item.parent
        if item.parent_side:
            still = referential.present(txn, parent, key.parent_columns, item.keys)
            gone = item.keys.filter(pa.array(~still))
            if gone.num_rows:
                _check_unreferenced(txn, parent, key, child, gone)
            continue
        probe = pa.table(
            [c.combine_chunks() for c in item.keys.columns], names=item.keys.column_names
        )
        held = referential.matching(txn, child, key.columns, probe, key.columns)
        if held.num_rows:
            named = pa.table(held.columns, names=[str(i) for i in range(len(key.columns))])
            _check_parents_exist(txn, child, key, parent, named)


def check_removed_keys(
    refs: References | None,
    txn: Transaction,
    old: pa.Table,
    new: pa.Table | None,
    changed: set[ColumnId] | None = None,
) -> None:
    """Keep the keys that reference ``refs.table`` when rows ``old`` lost their key (deleted,
    or updated to ``new``, row for row, setting columns ``changed``): NO ACTION and RESTRICT
    refuse (23503) while a child row still names a key taken away; CASCADE, SET NULL and
    SET DEFAULT change those child rows (``dml.referential_actions``)."""
    if refs is None or old.num_rows == 0:
        return
    table = refs.table
    touched = changed is None or refs.touches_parent_key(changed)
    if refs.incoming and touched and not txn.repeatable_read:
        # As PostgreSQL's checks do under READ COMMITTED: see the rows committed while this
        # statement waited for their inserters' FOR KEY SHARE locks on the rows it wrote.
        txn.refresh_snapshot()
    for key, child in refs.incoming:
        if changed is not None and not set(key.parent_columns) & changed:
            continue
        before = referential.values_of(table, key.parent_columns, old)
        mask = referential.complete(before)
        after = None
        if new is not None:
            after = referential.values_of(table, key.parent_columns, new)
            kept = referential.encoded(after, table, key.parent_columns)
            mine = referential.encoded(before, table, key.parent_columns)
            mask &= ~np.asarray(
                pc.is_in(mine, value_set=kept).to_numpy(zero_copy_only=False), dtype=bool
            )
        action = key.on_delete if new is None else key.on_update
        if mask.any() and action == NO_ACTION:
            # NO ACTION: a key another row still holds at the statement's end is not gone.
            positions = np.flatnonzero(mask)
            still = referential.present(txn, table, key.parent_columns, before.take(positions))
            mask[positions[still]] = False
        if not mask.any():
            continue
        gone = before.filter(pa.array(mask))
        if action in (CASCADE, SET_NULL, SET_DEFAULT):
            replacement = after.filter(pa.array(mask)) if after is not None else None
            referential_actions.apply(
                txn, table, child, key, action, gone, replacement,
                functools.partial(_follow, refs.catalog, txn),
            )  # fmt: skip
            continue
        if action == NO_ACTION and deferred_constraints.is_deferred(txn, key):
            deferred_constraints.owe(
                txn, deferred_constraints.Owed(key, child, table, gone, parent_side=True)
            )
            continue
        _check_unreferenced(txn, table, key, child, gone)


def _follow(
    catalog: Catalog,
    txn: Transaction,
    child: TableInfo,
    old: pa.Table,
    new: pa.Table | None,
    changed: set[ColumnId],
) -> None:
    """A referential action changed rows of ``child``: its own keys are kept in turn."""
    refs = plan_references(catalog, catalog.get_table(child.name))
    if new is not None:
        check_new_rows(refs, txn, new, changed)
    check_removed_keys(refs, txn, old, new, changed if new is not None else None)


def truncated_with_referencing(
    catalog: Catalog, tables: list[TableInfo], *, cascade: bool
) -> list[TableInfo]:
    """The tables a TRUNCATE empties: ``tables`` and, with CASCADE, every table referencing
    one of them, recursively; without CASCADE a referencing table not among them is 0A000,
    as in PostgreSQL."""
    out = list(tables)
    at = 0
    while at < len(out):
        parent = out[at]
        at += 1
        for child, _key in catalog.referencing(parent.table_id):
            if any(t.table_id == child.table_id for t in out):
                continue
            if not cascade:
                raise FeatureNotSupported(
                    "cannot truncate a table referenced in a foreign key constraint",
                    detail=f'Table "{child.name}" references "{parent.name}".',
                    hint=f'Truncate table "{child.name}" at the same time, or use TRUNCATE '
                    "... CASCADE.",
                )
            out.append(child)
    return out
