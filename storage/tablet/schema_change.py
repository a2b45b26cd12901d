"""Schema changes on a tablet: columns by ID, nothing on disk rewritten.

ALTER TABLE gives a tablet a new Schema (kudu-schema-changes.txt).  Column
files and delta files name their columns by ID, so on disk nothing changes:
a DiskRowSet reads a column it has no file for as the column's read default,
a dropped column's file is simply never read again (and removed at the next
open), and a renamed column keeps its ID.  What is rebuilt are the in-memory
row tuples, which hold values by schema position: the MemRowSet's rows and
mutation chains and each DeltaMemStore's, as fresh copies, so a scan that
started before the change keeps reading the version it began with.

Writes arriving with the other schema (a statement planned before the
change, or a WAL record written before it) are conformed: a column the
tablet no longer has is ignored, a column the write lacks gets its read
default.
"""

from __future__ import annotations

import pyarrow as pa

from storage.errors import InternalError
from storage.row_change import ColumnChanges, Mutation, MutationKind, Row, from_storage_values
from storage.schema import Schema


class RowMapper:
    """Rewrites row tuples and mutations from one schema's positions to another's."""

    def __init__(self, old: Schema, new: Schema) -> None:
        old_index = {c.id: i for i, c in enumerate(old.columns)}
        self._sources = [old_index.get(c.id) for c in new.columns]
        self._defaults = [c.read_default for c in new.columns]
        self._positions = {
            old_index[c.id]: i for i, c in enumerate(new.columns) if c.id in old_index
        }

    def row(self, values: Row) -> Row:
        return tuple(
            values[source] if source is not None else default
            for source, default in zip(self._sources, self._defaults, strict=True)
        )

    def mutation(self, mutation: Mutation) -> Mutation:
        change = mutation.change
        if mutation.kind is MutationKind.UPDATE:
            assert change is not None, "an UPDATE carries its changes"
            changes: ColumnChanges = change  # type: ignore[assignment]  # an UPDATE's change is ColumnChanges
            change = tuple(
                (self._positions[idx], value) for idx, value in changes if idx in self._positions
            )
        elif mutation.kind is MutationKind.REINSERT:
            assert change is not None, "a REINSERT carries the whole row"
            change = self.row(change)
        return Mutation(mutation.kind, mutation.txn, change)


def conform_batch(batch: pa.RecordBatch, schema: Schema, *, fill: bool) -> pa.RecordBatch:
    """``batch`` (fields named by column ID) with fields ``schema`` lacks dropped and, with
    ``fill``, every missing non-key column added as its read default."""
    names = batch.schema.names
    if not all(n.isdigit() for n in names):
        raise InternalError(f"a write batch names its columns by ID, not {names}")
    known = {str(c.id) for c in schema.columns}
    if all(n in known for n in names) and (not fill or len(names) == len(known)):
        return batch
    arrays, fields = [], []
    keys = set(schema.key_column_ids)
    for column in schema.columns if fill else [schema.column(int(n)) for n in names if n in known]:
        name = str(column.id)
        if name in names:
            arrays.append(batch.column(names.index(name)))
        elif column.id in keys:
            continue  # a key is never defaulted: the write is refused as malformed
        else:
            arrays.append(from_storage_values([column.read_default] * batch.num_rows, column.type))
        fields.append(name)
    return pa.RecordBatch.from_arrays(arrays, names=fields)
