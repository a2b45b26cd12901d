"""Delta stores of a DiskRowSet: UNDO and REDO delta files, and the DeltaMemStore.

A DiskRowSet's base data is each row as it stood at the flush timestamp.
History lives beside it:

- **UNDO delta files**, written when a MemRowSet flushes: for each change a
  row went through, the row's *before-image* at that change's timestamp
  (absent, for an insert).  A reader at snapshot T older than the flush takes,
  per row, the UNDO with the smallest timestamp above T.
- the **DeltaMemStore**: changes after the flush, as ``rowid -> [Mutation]``,
  the same REDO chains (UPDATE, DELETE, REINSERT tagged with TxnStates) the
  MemRowSet keeps, so provisional writes, visibility and rollback work alike.
- **REDO delta files**, written when a DeltaMemStore flushes: for each
  committed change, the row's *after-image*.  A reader at T takes the newest
  one at or below T, then applies the DeltaMemStore's visible mutations.

Kudu stores per-column changes; nyala stores whole-row images, which makes a
lookup one search instead of a chain walk, at the cost of bytes per change.
A delta file is an Arrow IPC file with columns ``rowid`` (u32), ``ts`` (i64),
``live`` (bool) and one column per schema column, sorted by (rowid, ts); its
buffers are LZ4-compressed (Arrow IPC body compression); its
timestamp range is kept in the tablet metadata so a scan that needs no
history never opens it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from storage.errors import DataCorrupted
from storage.row_change import Mutation, Row, from_storage_values, storage_arrow_type
from storage.schema import ColumnSchema, Schema
from storage.tablet.schema_change import RowMapper
from storage.timestamp import Timestamp


@dataclass(frozen=True, slots=True)
class DeltaImage:
    """One delta record: a row's image (None = absent/deleted) at timestamp ``ts``."""

    rowid: int
    ts: int
    values: Row | None


def write_delta_file(path: Path, schema: Schema, images: list[DeltaImage], *, fsync: bool) -> int:
    """Write ``images`` (any order) as a delta file; return its size in bytes."""
    images = sorted(images, key=lambda d: (d.rowid, d.ts))
    columns = [
        pa.array([d.rowid for d in images], pa.uint32()),
        pa.array([d.ts for d in images], pa.int64()),
        pa.array([d.values is not None for d in images], pa.bool_()),
    ]
    for idx, column in enumerate(schema.columns):
        values = [None if d.values is None else d.values[idx] for d in images]
        columns.append(from_storage_values(values, column.type))
    names = ["rowid", "ts", "live", *(str(c.id) for c in schema.columns)]
    table = pa.Table.from_arrays(columns, names=names)
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    with (
        pa.OSFile(str(path), "wb") as sink,
        pa.ipc.new_file(sink, table.schema, options=options) as writer,
    ):
        writer.write_table(table)
    if fsync:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return path.stat().st_size


class _Contents:
    """A delta file's records, read on first use: a scan that needs no history never opens
    the UNDO files, so a flushed rowset's history costs no memory until someone asks."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._loaded: tuple[pa.Table, np.ndarray, np.ndarray] | None = None
        self._lock = threading.Lock()
        try:
            pa.ipc.open_file(pa.memory_map(str(path), "r"))  # the footer only: fail early
        except (OSError, pa.ArrowInvalid) as exc:
            raise DataCorrupted(f"delta file {path} is unreadable: {exc}") from exc

    def load(self) -> tuple[pa.Table, np.ndarray, np.ndarray]:
        with self._lock:
            if self._loaded is None:
                try:
                    table = pa.ipc.open_file(pa.memory_map(str(self._path), "r")).read_all()
                except (OSError, pa.ArrowInvalid) as exc:
                    raise DataCorrupted(f"delta file {self._path} is unreadable: {exc}") from exc
                self._loaded = (
                    table,
                    table.column("rowid").to_numpy(),
                    table.column("ts").to_numpy(),
                )
            return self._loaded


class DeltaFile:
    """An opened, memory-mapped delta file and its timestamp range."""

    def __init__(self, path: Path, schema: Schema, min_ts: int, max_ts: int) -> None:
        self.path = path
        self.min_ts = min_ts
        self.max_ts = max_ts
        self._contents = _Contents(path)
        self._schema = schema

    @property
    def _table(self) -> pa.Table:
        return self._contents.load()[0]

    @property
    def _rowids(self) -> np.ndarray:
        return self._contents.load()[1]

    @property
    def _ts(self) -> np.ndarray:
        return self._contents.load()[2]

    @property
    def size_bytes(self) -> int:
        return self.path.stat().st_size

    def __len__(self) -> int:
        return len(self._rowids)

    def with_schema(self, schema: Schema) -> DeltaFile:
        """The same file read as ``schema``'s rows: a column it has no data for reads as its
        read default (schema_change.py)."""
        copy = object.__new__(DeltaFile)
        copy.__dict__.update(self.__dict__)
        copy._schema = schema
        return copy

    def rowids_where(
        self, *, after: int | None = None, at_or_before: int | None = None
    ) -> np.ndarray:
        """Rowids with a record whose timestamp is > ``after`` or <= ``at_or_before``."""
        if after is not None:
            mask = self._ts > np.int64(after)
        else:
            assert at_or_before is not None, "one bound is given"
            mask = self._ts <= np.int64(at_or_before)
        return np.unique(self._rowids[mask])

    def _entries(self, rowid: int) -> tuple[int, int]:
        lo = int(np.searchsorted(self._rowids, rowid, "left"))
        hi = int(np.searchsorted(self._rowids, rowid, "right"))
        return lo, hi

    def first_after(self, rowid: int, ts: int) -> tuple[int, Row | None] | None:
        """The (ts, image) of ``rowid``'s oldest record newer than ``ts`` (UNDO lookups)."""
        lo, hi = self._entries(rowid)
        idx = lo + int(np.searchsorted(self._ts[lo:hi], np.int64(ts), "right"))
        return None if idx >= hi else (int(self._ts[idx]), self._image(idx))

    def last_at_or_before(self, rowid: int, ts: int) -> tuple[int, Row | None] | None:
        """The (ts, image) of ``rowid``'s newest record at or before ``ts`` (REDO lookups)."""
        lo, hi = self._entries(rowid)
        idx = lo + int(np.searchsorted(self._ts[lo:hi], np.int64(ts), "right")) - 1
        return None if idx < lo else (int(self._ts[idx]), self._image(idx))

    def _image(self, idx: int) -> Row | None:
        row = self._table.slice(idx, 1)
        if not row.column("live")[0].as_py():
            return None
        names = row.schema.names
        return tuple(
            _storage_value(row.column(str(c.id))[0], c) if str(c.id) in names else c.read_default
            for c in self._schema.columns
        )


def _storage_value(scalar: pa.Scalar, column: ColumnSchema) -> object:
    return scalar.cast(storage_arrow_type(column.type)).as_py()


class DeltaMemStore:
    """A DiskRowSet's in-memory REDO chains since its last delta flush, by rowid."""

    def __init__(self) -> None:
        self.chains: dict[int, list[Mutation]] = {}

    def __len__(self) -> int:
        return len(self.chains)

    def with_schema(self, mapper: RowMapper) -> DeltaMemStore:
        """A copy whose mutations hold another schema's positions (schema_change.py)."""
        copy = DeltaMemStore()
        copy.chains = {
            rowid: [mapper.mutation(m) for m in chain] for rowid, chain in self.chains.items()
        }
        return copy

    def append(self, rowid: int, mutation: Mutation) -> None:
        self.chains.setdefault(rowid, []).append(mutation)

    def remove_provisional(self, rowid: int, txn: object) -> None:
        chain = self.chains.get(rowid)
        if not chain:
            return
        while chain and chain[-1].txn is txn:
            chain.pop()
        if not chain:
            del self.chains[rowid]

    def pop_provisional(self, rowid: int, txn: object) -> None:
        """Undo ``txn``'s newest uncommitted mutation of ``rowid`` (ROLLBACK TO SAVEPOINT)."""
        chain = self.chains.get(rowid)
        if chain and chain[-1].txn is txn:
            chain.pop()
            if not chain:
                del self.chains[rowid]

    def split_committed(self, snapshot: Timestamp) -> dict[int, list[Mutation]]:
        """Remove and return, per row, the leading mutations committed at or before ``snapshot``."""
        flushed: dict[int, list[Mutation]] = {}
        for rowid in list(self.chains):
            chain = self.chains[rowid]
            cut = 0
            while cut < len(chain):
                ts = chain[cut].txn.commit_ts
                if ts is None or ts > snapshot:
                    break
                cut += 1
            if cut:
                flushed[rowid] = chain[:cut]
                del chain[:cut]
                if not chain:
                    del self.chains[rowid]
        return flushed
