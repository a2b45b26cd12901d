"""Row changes: Kudu's vocabulary for a row's values and the mutations applied to them.

A row is a tuple of Python values in schema order (``Row``); each later change
to it is a ``Mutation`` (UPDATE, DELETE or REINSERT) tagged with the
transaction that made it.  The MemRowSet keeps them as REDO chains, the
DeltaMemStore and delta files keep them by rowid, a flush replays them, and a
schema change remaps them: all of those share this module, and it depends on
nothing above the vocabulary.

Values are held in their storage form (``storage_arrow_type``): dates and
timestamps as plain ints, which are cheaper to hold than date/datetime objects.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import pyarrow as pa

from storage.data_type import DataType, TypeKind
from storage.mvcc import TxnState

Row = tuple[object, ...]
ColumnChanges = tuple[tuple[int, object], ...]
"""An UPDATE's change: (column index, new value) for each column it sets."""


class MutationKind(enum.Enum):
    UPDATE = "update"
    DELETE = "delete"
    REINSERT = "reinsert"


class Mutation:
    """One entry in a row's REDO chain; ``change`` is an UPDATE's ``ColumnChanges``, a
    REINSERT's full ``Row``, or None for a DELETE."""

    __slots__ = ("kind", "txn", "change")

    def __init__(self, kind: MutationKind, txn: TxnState, change: Row | None) -> None:
        self.kind = kind
        self.txn = txn
        self.change = change


def apply_mutation(values: Row | None, mutation: Mutation) -> Row | None:
    """The row after ``mutation`` (None when it deletes the row)."""
    kind = mutation.kind
    if kind is MutationKind.UPDATE:
        assert values is not None, "an UPDATE follows a live version"
        updated = list(values)
        change: ColumnChanges = mutation.change  # type: ignore[assignment]  # an UPDATE's change is ColumnChanges
        for column_idx, value in change:
            updated[column_idx] = value
        return tuple(updated)
    if kind is MutationKind.DELETE:
        return None
    return mutation.change


def storage_arrow_type(data_type: DataType) -> pa.DataType:
    """The Arrow type whose Python values a row holds for a column (dates and
    timestamps as plain ints)."""
    if data_type.kind is TypeKind.DATE:
        return pa.int32()
    if data_type.kind is TypeKind.TIMESTAMP:
        return pa.int64()
    return data_type.arrow_type


def to_storage_values(array: pa.Array, data_type: DataType) -> list[object]:
    """Convert one batch column to the Python values a row holds."""
    storage_type = storage_arrow_type(data_type)
    if array.type != storage_type:
        array = array.cast(storage_type)
    values: list[object] = array.to_pylist()
    return values


def from_storage_values(values: Sequence[object], data_type: DataType) -> pa.Array:
    """Build a column of ``data_type`` from rows' values."""
    storage_type = storage_arrow_type(data_type)
    array = pa.array(values, type=storage_type)
    arrow_type = data_type.arrow_type
    # A cast to the same type is a compute call that costs more than a one-row array.
    return (
        array
        if storage_type is arrow_type or storage_type == arrow_type
        else array.cast(arrow_type)
    )
