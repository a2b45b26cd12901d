"""SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE: lock the rows a query reads.

Locking the rows a one-table SELECT matches is planned as ``UPDATE t SET c = c
WHERE <its WHERE>`` run just before the query, but writing nothing: each row
it finds is locked in the clause's mode (storage's row lock table, with
PostgreSQL's conflicts between the four modes), after waiting in the row's
line for conflicting holders; under READ COMMITTED a row changed meanwhile is
re-checked against the WHERE at its newest version (as PostgreSQL's
EvalPlanQual does), and the locks last until the transaction ends.  The query
then reads the locked rows' newest versions.  ``NOWAIT`` waits for no one
(55P03).  Differences from PostgreSQL: ``LIMIT`` locks every matching row,
not only those returned; ``SKIP LOCKED`` and queries over joins or groups are
refused (0A000).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from sql.common.names import identifier_name
from storage.errors import FeatureNotSupported
from storage.row_lock_mode import RowLockMode


@dataclass(frozen=True, slots=True)
class RowLocking:
    """The UPDATE that finds a query's rows, the mode it locks them in, and whether it may
    wait for them."""

    update: exp.Update
    nowait: bool
    mode: RowLockMode


def _mode(lock: exp.Lock) -> RowLockMode:
    if lock.args.get("update"):
        return RowLockMode.NO_KEY_UPDATE if lock.args.get("key") else RowLockMode.UPDATE
    return RowLockMode.KEY_SHARE if lock.args.get("key") else RowLockMode.SHARE


def locking_update(select: exp.Expr, non_key_column: str | None) -> RowLocking | None:
    """The locks a query's locking clauses take (the strongest of them), or None (no
    locking clause).  ``non_key_column`` names a column the UPDATE may set to itself
    (None: the table has only key columns)."""
    locks = select.args.get("locks") if isinstance(select, exp.Select) else None
    if not locks:
        return None
    if any(lock.args.get("wait") is False for lock in locks):
        raise FeatureNotSupported("SELECT ... SKIP LOCKED is not supported")
    assert isinstance(select, exp.Select)
    source = select.args.get("from_")
    table = source.this if source is not None else None
    shape_ok = (
        isinstance(table, exp.Table)
        and not select.args.get("joins")
        and not select.args.get("group")
        and not select.args.get("having")
        and not select.args.get("distinct")
        and not select.args.get("with_")
        and not any(e.find(exp.AggFunc, exp.Window) for e in select.expressions)
    )
    if not shape_ok or non_key_column is None:
        raise FeatureNotSupported(
            "SELECT ... FOR UPDATE/SHARE is supported on one table with a non-key column, "
            "without joins, grouping or aggregates"
        )
    assert isinstance(table, exp.Table)
    column = exp.column(non_key_column, quoted=True)
    where = select.args.get("where")
    update = exp.Update(
        this=table.copy(),
        expressions=[exp.EQ(this=column, expression=column.copy())],
        where=where.copy() if where is not None else None,
    )
    nowait = any(lock.args.get("wait") is True for lock in locks)
    return RowLocking(update, nowait, max(_mode(lock) for lock in locks))


def locked_tables(select: exp.Expr) -> tuple[str, ...]:
    """The tables a locking clause (``FOR UPDATE``, ``FOR SHARE`` ... ``[OF t]``) names, or
    every table the query's FROM reads: each needs UPDATE, shared locks too."""
    locks = select.args.get("locks") if isinstance(select, exp.Select) else None
    if not locks:
        return ()
    source = select.args.get("from_")
    read = [source.this] if source is not None else []
    read += [join.this for join in select.args.get("joins") or []]
    tables = {t.alias_or_name: identifier_name(t) for t in read if isinstance(t, exp.Table)}
    named = [
        identifier_name(e) for lock in locks for e in lock.args.get("expressions") or []
    ]  # fmt: skip
    return tuple(tables.get(name, name) for name in named) if named else tuple(tables.values())
