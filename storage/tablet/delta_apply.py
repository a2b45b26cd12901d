"""Applying delta records to base data: per column, a scatter by rowid (Kudu's "direct addressing").

For rows ``rowids`` (ascending) with base values and base liveness, a reader
at snapshot S takes, per row and per column independently:

- the newest REDO record at or below S that sets it (REDO records are
  after-images of changes newer than the base), else
- the oldest UNDO record above S that sets it (UNDO records are before-images
  of changes the base already holds), else
- the base value.

Liveness follows the same rule over the records that change it.  Each
choice is a lexsort and a "last (or first) of each run" over numpy arrays,
and each column's result is one Arrow ``take`` over base plus chosen values:
no Python runs per row or per cell.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from storage.schema import ColumnSchema
from storage.tablet.delta_records import KEEP, LIVE, DeltaRecords


def _choose(
    records: DeltaRecords, mask: np.ndarray, rowids: np.ndarray, *, newest: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(positions in ``rowids``, record indices) of each row's newest (or oldest) record
    among those ``mask`` admits; ``records`` are sorted by (rowid, ts)."""
    idx = np.flatnonzero(mask)
    if not len(idx):
        return idx, idx
    r = records.rowid[idx]
    boundary = r[1:] != r[:-1]
    keep = np.append(boundary, True) if newest else np.insert(boundary, 0, True)
    idx = idx[keep]
    return np.searchsorted(rowids, records.rowid[idx]), idx


def scatter(base: pa.Array, positions: np.ndarray, values: pa.Array) -> pa.Array:
    """``base`` with the values at ``positions`` replaced by ``values``."""
    if not len(positions):
        return base
    n = len(base)
    indices = np.arange(n, dtype=np.int64)
    indices[positions] = n + np.arange(len(positions), dtype=np.int64)
    combined = pa.concat_arrays([base, values.cast(base.type)])
    return combined.take(pa.array(indices))


def resolve_live(
    rowids: np.ndarray, base_live: np.ndarray, redo: DeltaRecords, undo: DeltaRecords
) -> np.ndarray:
    """Whether each of ``rowids`` is present: ``redo`` holds the REDO records at or below
    the snapshot, ``undo`` the UNDO records above it, each sorted by (rowid, ts)."""
    live = base_live.copy()
    for records, newest in ((undo, False), (redo, True)):
        positions, idx = _choose(records, records.live != KEEP, rowids, newest=newest)
        live[positions] = records.live[idx] == LIVE
    return live


def resolve_column(
    rowids: np.ndarray,
    base: pa.Array,
    column: ColumnSchema,
    redo: DeltaRecords,
    undo: DeltaRecords,
) -> pa.Array:
    """Column ``column`` of ``rowids`` at the snapshot, from its ``base`` values."""
    out = base
    for records, newest in ((undo, False), (redo, True)):
        if not len(records):
            continue
        delta = records.column(column)
        positions, idx = _choose(records, delta.is_set, rowids, newest=newest)
        if len(idx):
            out = scatter(out, positions, delta.values.take(pa.array(idx)))
    return out
