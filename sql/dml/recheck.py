"""Re-checking rows a concurrent transaction changed: PostgreSQL's EvalPlanQual for nyala.

A write finds, per row, whether another transaction committed a change to it
after the statement's snapshot (storage/transaction.py).  Under READ
COMMITTED, UPDATE and DELETE then read just those rows again at a fresh
snapshot, re-evaluating WHERE and SET against the newest versions, and write
what still matches; INSERT ... ON CONFLICT runs again at a fresh snapshot.
Under REPEATABLE READ the storage transaction fails with 40001 instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sql.dml import conflict
from sql.dml.checks import enforce
from sql.dml.referential_checks import check_new_rows, check_removed_keys
from sql.dml.write_batches import (
    OLD_KEY,
    by_tablet,
    check_constraints,
    insert_rows,
    routed,
    storage_batch,
)
from sql.dml.write_plan import SourceRows, WritePlan
from sql.execution import index_writes
from storage.errors import SerializationFailure, UniqueViolation
from storage.row_lock_mode import RowLockMode
from storage.transaction import Transaction


def modify(
    plan: WritePlan,
    runner: SourceRows,
    txn: Transaction,
    params: list[Any],
    now: Any,
    rows: pa.Table,
) -> tuple[int, pa.Table | None]:
    """UPDATE or DELETE ``rows``, re-reading the rows a concurrent transaction changed.

    Rows changed and committed by another transaction after this statement's
    snapshot (found while writing, after waiting for their lock if need be) are
    not written.  As PostgreSQL's READ COMMITTED does, the statement then reads
    just those rows again at a fresh snapshot, re-evaluating its WHERE and SET
    against their newest versions, and writes what still matches.  Under
    REPEATABLE READ the storage transaction fails with 40001 instead.
    """
    key_names = (
        [f"{OLD_KEY}{i}" for i in range(len(plan.table.schema.key_columns))]
        if plan.changes_key
        else [c.name for c in plan.table.schema.key_columns]
    )
    names = [c.name for c in plan.table.schema.columns]
    count = 0
    written: list[pa.Table] = []
    replaced: list[pa.Table] = []
    keys = set(plan.table.schema.key_column_ids)
    # An UPDATE writes the key columns beside the ones it sets; only a key change sets them.
    changed = (
        {c.id for c in plan.written if plan.changes_key or c.id not in keys}
        if plan.kind == "UPDATE"
        else None
    )
    refs = plan.references
    parent_side = (
        refs is not None
        and bool(refs.incoming)
        and (changed is None or refs.touches_parent_key(changed))
    )
    while True:
        if plan.kind == "UPDATE":
            enforce(plan.table, plan.checks, runner, txn, rows, now)
        before = _before(plan, txn, rows, key_names) if parent_side else None
        if plan.changes_key:
            done, conflicts = move_rows(plan, txn, rows)
        else:
            done, conflicts = _apply_rows(plan, txn, rows)
        count += done
        keep = np.ones(rows.num_rows, dtype=bool)
        keep[conflicts] = False
        written.append(rows.filter(pa.array(keep)) if conflicts else rows)
        if before is not None:
            replaced.append(before.filter(pa.array(keep)) if conflicts else before)
        if not conflicts:
            break
        retry = rows.take(pa.array(conflicts)).select(key_names)
        txn.refresh_snapshot()
        again = runner.run_to_table(plan.source, txn, params, now)
        if again is None:
            break
        again = again.rename_columns(names + again.column_names[len(names) :])
        rows = _rows_with_keys(again, retry, key_names)
        if rows.num_rows == 0:
            break
    if plan.changes_key:
        written = [t.select(names) for t in written]
    out = pa.concat_tables(written) if len(written) > 1 else written[0]
    if refs is not None:
        if changed is not None:
            check_new_rows(refs, txn, out, changed)
        if replaced:
            old = pa.concat_tables(replaced)
            check_removed_keys(refs, txn, old, out if changed is not None else None, changed)
    return count, out


def _before(plan: WritePlan, txn: Transaction, rows: pa.Table, key_names: list[str]) -> pa.Table:
    """The rows an UPDATE or DELETE is about to replace, as they are now (a DELETE's source
    rows are already that)."""
    if plan.kind == "DELETE":
        return rows
    keys = rows.select(key_names).rename_columns([c.name for c in plan.table.schema.key_columns])
    return index_writes.current_rows(plan.table, txn, keys)


def _apply_rows(plan: WritePlan, txn: Transaction, rows: pa.Table) -> tuple[int, list[int]]:
    """Write an UPDATE's new images or a DELETE's keys; return the count and the positions
    in ``rows`` of the rows left unwritten because of a concurrent change."""
    table = plan.table
    if plan.lock_mode is not None:
        return _lock_rows(plan, plan.lock_mode, txn, rows)
    if plan.kind == "UPDATE":
        rows = check_constraints(table, rows, plan.written)
    old = index_writes.current_rows(table, txn, rows) if table.indexes else None
    count = 0
    conflicts: list[int] = []
    for tablet_id, batch, positions in routed(table, rows, plan.written):
        found: list[int] = []
        if plan.kind == "UPDATE":
            count += txn.update(tablet_id, batch, conflicts=found, key_update=plan.key_update)
        else:
            count += txn.delete(tablet_id, batch, conflicts=found)
        conflicts.extend(positions[found].tolist())
    conflicts.sort()
    if old is not None:
        _keep_indexes_in_step(plan, txn, old, rows, conflicts)
    return count, conflicts


def _lock_rows(
    plan: WritePlan, mode: RowLockMode, txn: Transaction, rows: pa.Table
) -> tuple[int, list[int]]:
    """A ``SELECT ... FOR <mode>``'s locks on ``rows``, as ``_apply_rows`` returns."""
    keys = list(plan.table.schema.key_columns)
    command = f"SELECT FOR {mode.name.replace('_', ' ')}"
    count = 0
    conflicts: list[int] = []
    for tablet_id, batch, positions in routed(plan.table, rows, keys):
        found: list[int] = []
        count += txn.lock(tablet_id, batch, mode, conflicts=found, command=command)
        conflicts.extend(positions[found].tolist())
    return count, sorted(conflicts)


def _keep_indexes_in_step(
    plan: WritePlan, txn: Transaction, old: pa.Table, rows: pa.Table, conflicts: list[int]
) -> None:
    """Swap (UPDATE) or remove (DELETE) the index entries of the rows just written; ``old``
    holds their values before the write, read by key in ``rows``' order."""
    keep = np.ones(rows.num_rows, dtype=bool)
    keep[conflicts] = False
    done = rows.filter(pa.array(keep))
    before = old.filter(pa.array(keep)) if conflicts else old
    if plan.kind == "UPDATE":
        index_writes.replace_entries(plan.table, txn, before, done)
    else:
        index_writes.remove_entries(plan.table, txn, before)


def _rows_with_keys(rows: pa.Table, keys: pa.Table, key_names: list[str]) -> pa.Table:
    """The rows of ``rows`` whose ``key_names`` values are one of ``keys``' rows."""
    mask = None
    for name in key_names:
        column_mask = pc.is_in(rows.column(name), value_set=keys.column(name).combine_chunks())
        mask = column_mask if mask is None else pc.and_(mask, column_mask)
    candidates = rows.filter(mask)
    if len(key_names) == 1 or candidates.num_rows == 0:
        return candidates
    # Per-row Python over the few candidates that matched every key column on its own.
    wanted = set(zip(*(keys.column(n).to_pylist() for n in key_names)))
    exact = [
        tuple(values) in wanted
        for values in zip(*(candidates.column(n).to_pylist() for n in key_names))
    ]
    return candidates.filter(pa.array(exact, pa.bool_()))


class _ConcurrentChange(Exception):
    """A row this statement read changed in a transaction that committed after its snapshot."""


_RETRY_SAVEPOINT = "__nyala_on_conflict"


def write_with_conflicts(
    plan: WritePlan,
    runner: SourceRows,
    txn: Transaction,
    params: list[Any],
    now: Any,
    rows: pa.Table,
    action: conflict.ConflictAction,
) -> tuple[int, pa.Table | None]:
    """INSERT ... ON CONFLICT / UPSERT, safe against concurrent writers of the same keys.

    A key another transaction inserted, changed or deleted after this statement's
    snapshot shows up as a 23505 on insert or as a write conflict on update.  Under
    READ COMMITTED the statement's writes are then undone (an internal savepoint)
    and it runs again at a fresh snapshot, where that row is visible, so concurrent
    upserts of one key neither fail nor lose an update, as in PostgreSQL.  Under
    REPEATABLE READ that is 40001.
    """
    names = [c.name for c in plan.table.schema.columns]
    while True:
        txn.savepoint(_RETRY_SAVEPOINT)
        try:
            result = _apply_conflict_rows(
                plan, txn, rows, action, lambda images: enforce(
                    plan.table, plan.checks, runner, txn, images, now
                ),
            )  # fmt: skip
        except (UniqueViolation, _ConcurrentChange) as exc:
            if (
                isinstance(exc, UniqueViolation)
                and exc.index_name not in (None, action.arbiter)
                and not action.any_unique
            ):
                # Not the arbiter's key: as in PostgreSQL, the statement fails.
                txn.rollback_to(_RETRY_SAVEPOINT)
                txn.release(_RETRY_SAVEPOINT)
                raise
            txn.rollback_to(_RETRY_SAVEPOINT)
            txn.release(_RETRY_SAVEPOINT)
            if txn.repeatable_read:
                raise SerializationFailure(
                    "could not serialize access due to concurrent update"
                ) from exc
            txn.refresh_snapshot()
            again = runner.run_to_table(plan.source, txn, params, now)
            if again is None:
                return 0, None
            rows = again.rename_columns(names + again.column_names[len(names) :])
            continue
        except BaseException:
            if txn.is_active:
                txn.release(_RETRY_SAVEPOINT)
            raise
        txn.release(_RETRY_SAVEPOINT)
        return result


def _apply_conflict_rows(
    plan: WritePlan,
    txn: Transaction,
    rows: pa.Table,
    action: conflict.ConflictAction,
    check: Callable[[pa.Table], None],
) -> tuple[int, pa.Table | None]:
    table = plan.table
    # As PostgreSQL, every proposed row meets the CHECKs before it is known to conflict.
    check(rows)
    inserts, updates = conflict.split(table, rows, action)
    if action.any_unique and inserts.num_rows:
        inserts = index_writes.without_unique_conflicts(table, txn, inserts)
    count = insert_rows(table, txn, inserts) if inserts.num_rows else 0
    written = [inserts]
    if updates is not None and updates.num_rows:
        columns = list(table.schema.columns)
        updates = check_constraints(table, updates, columns)
        check(updates)
        refs = plan.references
        parent_side = refs is not None and bool(refs.incoming)
        old = (
            index_writes.current_rows(table, txn, updates) if table.indexes or parent_side else None
        )
        for tablet_id, batch in by_tablet(table, storage_batch(updates, columns)):
            conflicts: list[int] = []
            count += txn.update(tablet_id, batch, conflicts=conflicts)
            if conflicts:
                raise _ConcurrentChange
        if old is not None and table.indexes:
            index_writes.replace_entries(table, txn, old, updates)
        if old is not None and parent_side:
            changed = {c.id for c in table.schema.columns}
            check_removed_keys(refs, txn, old, updates, changed)
        written.append(updates)
    out = pa.concat_tables(written)
    check_new_rows(plan.references, txn, out, None)
    return count, out if out.num_rows else None


def move_rows(plan: WritePlan, txn: Transaction, rows: pa.Table) -> tuple[int, list[int]]:
    """An UPDATE that changes key columns: delete the old keys, insert the new rows (23505 on a
    collision), as PostgreSQL allows and Kudu does not.  Returns the count and the positions
    of rows a concurrent change kept from being moved (see ``_modify``)."""
    table = plan.table
    keys = table.schema.key_columns
    old = rows.select([f"{OLD_KEY}{i}" for i in range(len(keys))]).rename_columns(
        [c.name for c in keys]
    )
    before = index_writes.current_rows(table, txn, old) if table.indexes else None
    count = 0
    conflicts: list[int] = []
    for tablet_id, batch, positions in routed(table, old, list(keys)):
        found: list[int] = []
        count += txn.delete(tablet_id, batch, conflicts=found)
        conflicts.extend(positions[found].tolist())
    images = rows.select([c.name for c in table.schema.columns])
    keep = np.ones(rows.num_rows, dtype=bool)
    keep[conflicts] = False
    if conflicts:
        images = images.filter(pa.array(keep))
    if before is not None:
        index_writes.remove_entries(table, txn, before.filter(pa.array(keep)))
    insert_rows(table, txn, images)
    return count, sorted(conflicts)
