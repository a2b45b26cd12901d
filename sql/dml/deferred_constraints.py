"""Deferred foreign-key checks: which keys a transaction defers, and the checks it owes at COMMIT.

A DEFERRABLE key is checked at the end of each statement unless it is
INITIALLY DEFERRED or ``SET CONSTRAINTS`` deferred it in this transaction;
then the statement records what it would have checked (the child keys it
wrote, or the parent keys it took away) and the transaction checks those
against the data as it is at COMMIT (``referential_checks.check_deferred``).
The state lives beside the storage transaction, keyed weakly by it, so it ends
with the transaction whichever way that goes.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import pyarrow as pa

from catalog.foreign_keys import ForeignKey
from catalog.table import TableInfo
from storage.transaction import Transaction


@dataclass(frozen=True, slots=True)
class Owed:
    """A check a statement deferred: ``keys`` (the key's values, NULL-free) of ``key``
    between ``child`` and ``parent``; ``parent_side`` when they are keys a write took away."""

    key: ForeignKey
    child: TableInfo
    parent: TableInfo
    keys: pa.Table
    parent_side: bool


@dataclass(slots=True)
class ConstraintModes:
    """One transaction's SET CONSTRAINTS and the checks it owes."""

    every: bool | None = None
    """SET CONSTRAINTS ALL: True deferred, False immediate, None not said."""
    named: dict[str, bool] = field(default_factory=dict)
    owed: list[Owed] = field(default_factory=list)


_MODES: weakref.WeakKeyDictionary[Transaction, ConstraintModes] = weakref.WeakKeyDictionary()


def modes(txn: Transaction) -> ConstraintModes:
    found = _MODES.get(txn)
    if found is None:
        found = _MODES[txn] = ConstraintModes()
    return found


def is_deferred(txn: Transaction, key: ForeignKey) -> bool:
    if not key.deferrable:
        return False
    state = _MODES.get(txn)
    if state is None:
        return key.deferred
    if key.name in state.named:
        return state.named[key.name]
    return key.deferred if state.every is None else state.every


def owe(txn: Transaction, owed: Owed) -> None:
    modes(txn).owed.append(owed)


def take_owed(txn: Transaction, names: set[str] | None = None) -> list[Owed]:
    """The checks owed (those of the keys ``names``, or all), no longer owed."""
    state = _MODES.get(txn)
    if state is None:
        return []
    taken = [o for o in state.owed if names is None or o.key.name in names]
    gone = {id(o) for o in taken}
    state.owed = [o for o in state.owed if id(o) not in gone]
    return taken
