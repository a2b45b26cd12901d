"""DiskRowSet: a flushed MemRowSet as column files, a key index, a bloom filter and delta stores.

Directory ``tablets/<tablet>/rowset-<id>/``::

    col-<column id>.cfile    base values in rowid order (rowids are dense, in key order)
    key.cfile                the encoded primary keys (the key index: ordinal index + min/max
                             key per block, binary-searched within a block)
    deleted.cfile            rows deleted at the flush but still inside the history window
    bloom.bin                bloom filter over the encoded keys
    undo-<n>.arrow           UNDO delta files (deltas.py)
    redo-<n>.arrow           REDO delta files (deltas.py)

Every cfile of one rowset uses the same block boundaries, so block i of each
column covers the same rowids and a scan walks them in step.  The rowset is
written under ``rowset-<id>.tmp``, fsynced, renamed, and only then named in
the tablet metadata (tablet.py), so a crash leaves either no rowset or a whole
one.  Not thread-safe by itself: the tablet lock guards writes; scans read
immutable files plus the DeltaMemStore under that lock.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.cfile.compression import CompressionType
from storage.cfile.encoding import EncodingType
from storage.cfile.pushdown import block_may_match
from storage.cfile.reader import CFileReader
from storage.cfile.writer import rows_per_block, write_cfile
from storage.data_type import BINARY, BOOL, DataType
from storage.fs import fsync_dir
from storage.mvcc import TxnState
from storage.predicate import KeyRange, ScanSpec
from storage.row_change import (
    Mutation,
    MutationKind,
    Row,
    apply_mutation,
    from_storage_values,
    to_storage_values,
)
from storage.scan_stats import ScanStats
from storage.schema import Schema
from storage.tablet.bloom import BloomFilter
from storage.tablet.deltas import DeltaFile, DeltaImage, DeltaMemStore, write_delta_file
from storage.tablet.key_index import KeyIndex
from storage.tablet.memrowset import Probe
from storage.tablet.schema_change import RowMapper
from storage.timestamp import Timestamp

KEY_FILE = "key.cfile"
DELETED_FILE = "deleted.cfile"
BLOOM_FILE = "bloom.bin"
_FEW_ROWS = 64
"""Up to this many candidate rows (and a small share of their block), predicates run on just
those rows rather than on the whole block."""


@dataclass(slots=True)
class FlushRow:
    """One row leaving a MemRowSet: its state at the flush, its history and later changes."""

    key: bytes
    values: Row
    live: bool
    undo: list[tuple[int, Row | None]] = field(default_factory=list)
    redo: list[Mutation] = field(default_factory=list)


def rowset_dir_name(rowset_id: int) -> str:
    return f"rowset-{rowset_id}"


def write_rowset(
    tablet_dir: Path,
    rowset_id: int,
    schema: Schema,
    rows: list[FlushRow],
    base_ts: int,
    *,
    fsync: bool,
) -> dict[str, object]:
    """Write ``rows`` (key order) as a DiskRowSet directory; return its metadata entry."""
    final = tablet_dir / rowset_dir_name(rowset_id)
    tmp = tablet_dir / (rowset_dir_name(rowset_id) + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    # Per-row Python: MemRowSet rows are row-shaped; the flush turns them into columns once.
    arrays = [
        from_storage_values([r.values[idx] for r in rows], column.type)
        for idx, column in enumerate(schema.columns)
    ]
    keys = pa.array([r.key for r in rows], pa.binary())
    deleted = pa.array([not r.live for r in rows], pa.bool_())
    block_rows = min(
        [rows_per_block(keys, BINARY)]
        + [rows_per_block(a, c.type) for a, c in zip(arrays, schema.columns)]
    )
    size = 0
    for array, column in zip(arrays, schema.columns):
        size += write_cfile(
            tmp / f"col-{column.id}.cfile",
            array,
            column.type,
            EncodingType(column.encoding),
            CompressionType(column.compression),
            fsync=fsync,
            block_rows=block_rows,
        )
    size += write_cfile(
        tmp / KEY_FILE,
        keys,
        BINARY,
        EncodingType.PLAIN_ENCODING,
        CompressionType.LZ4,
        fsync=fsync,
        block_rows=block_rows,
    )
    size += write_cfile(
        tmp / DELETED_FILE, deleted, BOOL, EncodingType.RLE, fsync=fsync, block_rows=block_rows
    )
    bloom = BloomFilter.build([r.key for r in rows]).to_bytes()
    _write_file(tmp / BLOOM_FILE, bloom, fsync=fsync)
    size += len(bloom)
    undo = [DeltaImage(rowid, ts, image) for rowid, r in enumerate(rows) for ts, image in r.undo]
    undo_files = []
    if undo:
        size += write_delta_file(tmp / "undo-0.arrow", schema, undo, fsync=fsync)
        ts_values = [d.ts for d in undo]
        undo_files.append(
            {"file": "undo-0.arrow", "min_ts": min(ts_values), "max_ts": max(ts_values)}
        )
    if fsync:
        fsync_dir(tmp)
    os.replace(tmp, final)
    if fsync:
        fsync_dir(tablet_dir)
    return {
        "id": rowset_id,
        "rows": len(rows),
        "base_ts": base_ts,
        "min_key": rows[0].key.hex(),
        "max_key": rows[-1].key.hex(),
        "undo": undo_files,
        "redo": [],
        "next_delta": 1,
        "columns": [c.id for c in schema.columns],
    }


def _write_file(path: Path, data: bytes, *, fsync: bool) -> None:
    with open(path, "wb") as f:
        f.write(data)
        if fsync:
            f.flush()
            os.fsync(f.fileno())


class RowSetStats(TypedDict):
    """A DiskRowSet as the ``nyala_rowsets`` system view shows it."""

    rowset_id: int
    min_key: bytes
    max_key: bytes
    rows: int
    bytes_on_disk: int
    redo_delta_files: int
    undo_delta_files: int
    delta_memstore_rows: int


class DiskRowSet:
    """One opened DiskRowSet: readers over its files, and its DeltaMemStore."""

    def __init__(self, tablet_dir: Path, schema: Schema, meta: dict[str, Any]) -> None:
        self.meta = meta
        self.rowset_id: int = meta["id"]
        self.directory = tablet_dir / rowset_dir_name(self.rowset_id)
        self.schema = schema
        self.rows: int = meta["rows"]
        self.base_ts: int = meta["base_ts"]
        self.min_key = bytes.fromhex(meta["min_key"])
        self.max_key = bytes.fromhex(meta["max_key"])
        # Columns added after this rowset was written have no file: they read their default.
        written = meta.get("columns")
        self._columns = {
            c.id: CFileReader(self.directory / f"col-{c.id}.cfile")
            for c in schema.columns
            if (c.id in written if written is not None else self._has_file(c.id))
        }
        self.key_index = KeyIndex(self.directory / KEY_FILE)
        deleted = CFileReader(self.directory / DELETED_FILE)
        self._deleted = deleted.read_all().to_numpy(zero_copy_only=False).astype(bool)
        self.bloom = BloomFilter.from_bytes((self.directory / BLOOM_FILE).read_bytes())
        self.undo = [self._open_delta(d) for d in meta["undo"]]
        self.redo = [self._open_delta(d) for d in meta["redo"]]
        self.dms = DeltaMemStore()

    def _has_file(self, column_id: int) -> bool:
        return (self.directory / f"col-{column_id}.cfile").exists()

    def with_schema(self, schema: Schema) -> DiskRowSet:
        """This rowset read as ``schema`` (schema_change.py): same files, remapped
        DeltaMemStore; the caller holds the tablet lock and swaps the copy in."""
        copy = object.__new__(DiskRowSet)
        copy.__dict__.update(self.__dict__)
        copy.schema = schema
        copy._columns = {c.id: self._columns[c.id] for c in schema.columns if c.id in self._columns}
        copy.dms = self.dms.with_schema(RowMapper(self.schema, schema))
        copy.undo = [d.with_schema(schema) for d in self.undo]
        copy.redo = [d.with_schema(schema) for d in self.redo]
        return copy

    def _default_array(self, column_id: int, rows: int) -> pa.Array:
        column = self.schema.column(column_id)
        return from_storage_values([column.read_default] * rows, column.type)

    def _open_delta(self, doc: dict[str, Any]) -> DeltaFile:
        return DeltaFile(self.directory / doc["file"], self.schema, doc["min_ts"], doc["max_ts"])

    def known_files(self) -> set[str]:
        names = {f"col-{column_id}.cfile" for column_id in self._columns}
        names |= {KEY_FILE, DELETED_FILE, BLOOM_FILE}
        return names | {d["file"] for d in (*self.meta["undo"], *self.meta["redo"])}

    @property
    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.directory.iterdir())

    # --- finding keys ----------------------------------------------------------------------

    def find(self, key: bytes) -> int | None:
        """The rowid holding ``key``, or None; bounds and bloom filter first, then the index."""
        if key < self.min_key or key > self.max_key or not self.bloom.may_contain(key):
            return None
        return self.key_index.lookup_sorted([key])[0]

    def lower_bound(self, key: bytes | None) -> int:
        """The first rowid whose key is >= ``key`` (rows if none)."""
        if key is None or key <= self.min_key:
            return 0
        if key > self.max_key:
            return self.rows
        return self.key_index.lower_bound(key)

    # --- row state ----------------------------------------------------------------------------

    def _latest_redo(self, rowid: int, ts: int) -> tuple[int, Row | None] | None:
        best = None
        for delta in self.redo:
            if delta.min_ts <= ts:
                found = delta.last_at_or_before(rowid, ts)
                if found is not None and (best is None or found[0] > best[0]):
                    best = found
        return best

    def _is_live_latest(self, rowid: int) -> bool:
        chain = self.dms.chains.get(rowid)
        if chain:
            return chain[-1].kind is not MutationKind.DELETE
        redo = self._latest_redo(rowid, (1 << 63) - 1)
        if redo is not None:
            return redo[1] is not None
        return not self._deleted[rowid]

    def base_rows(self, rowids: np.ndarray) -> list[Row]:
        """The base values of ``rowids`` (ascending), read block by block."""
        if not len(rowids):
            return []
        columns = []
        for column in self.schema.columns:
            reader = self._columns.get(column.id)
            if reader is None:
                columns.append([column.read_default] * len(rowids))
                continue
            parts = []
            blocks = (
                np.searchsorted([b.first_rowid for b in reader.blocks], rowids, side="right") - 1
            )
            for idx in np.unique(blocks):
                meta = reader.blocks[idx]
                selection = rowids[blocks == idx] - meta.first_rowid
                parts.append(reader.read_block(int(idx)).to_arrow(selection))
            array = pa.concat_arrays(parts)
            columns.append(to_storage_values(array, column.type))
        return list(zip(*columns))

    def state_at(self, rowid: int, base: Row, snapshot: int, reader: TxnState | None) -> Row | None:
        """The row as ``reader`` sees it at ``snapshot``, from its base values and deltas."""
        chain = self.dms.chains.get(rowid)
        if chain and reader is not None and chain[-1].txn is reader:
            return self.latest(rowid, base)
        if snapshot < self.base_ts:
            best = None
            for delta in self.undo:
                if delta.max_ts > snapshot:
                    found = delta.first_after(rowid, snapshot)
                    if found is not None and (best is None or found[0] < best[0]):
                        best = found
            if best is not None:
                return best[1]
            return None if self._deleted[rowid] else base
        values: Row | None = None if self._deleted[rowid] else base
        redo = self._latest_redo(rowid, snapshot)
        if redo is not None:
            values = redo[1]
        for mutation in chain or ():
            ts = mutation.txn.commit_ts
            if ts is None or ts > snapshot:
                break
            values = apply_mutation(values, mutation)
        return values

    def latest(self, rowid: int, base: Row) -> Row | None:
        values: Row | None = None if self._deleted[rowid] else base
        redo = self._latest_redo(rowid, (1 << 63) - 1)
        if redo is not None:
            values = redo[1]
        for mutation in self.dms.chains.get(rowid, ()):
            values = apply_mutation(values, mutation)
        return values

    # --- writes (caller holds the tablet lock) --------------------------------------------------

    def probe(self, rowid: int, txn: TxnState) -> Probe:
        chain = self.dms.chains.get(rowid)
        if chain:
            last = chain[-1].txn
            if last is not txn and not last.is_done:
                return Probe(last, False)
        return Probe(None, self._is_live_latest(rowid))

    def reinsert(self, rowid: int, values: Row, txn: TxnState) -> None:
        self.dms.append(rowid, Mutation(MutationKind.REINSERT, txn, values))

    def update(self, rowid: int, change: Row, txn: TxnState) -> bool:
        if not self._is_live_latest(rowid):
            return False
        self.dms.append(rowid, Mutation(MutationKind.UPDATE, txn, change))
        return True

    def delete(self, rowid: int, txn: TxnState) -> bool:
        if not self._is_live_latest(rowid):
            return False
        self.dms.append(rowid, Mutation(MutationKind.DELETE, txn, None))
        return True

    def remove_provisional(self, rowid: int, txn: TxnState) -> None:
        self.dms.remove_provisional(rowid, txn)

    def pop_provisional(self, rowid: int, txn: TxnState) -> None:
        self.dms.pop_provisional(rowid, txn)

    def changed_after(self, rowid: int, ts: int) -> bool:
        """Whether a change to ``rowid`` was committed after ``ts``: in the DeltaMemStore, a
        REDO file, or (when the flush came after ``ts``) the UNDO history."""
        for mutation in self.dms.chains.get(rowid, ()):
            if mutation.txn.commit_ts is not None and mutation.txn.commit_ts > ts:
                return True
        for delta in (*self.redo, *(self.undo if self.base_ts > ts else ())):
            if delta.max_ts > ts and delta.first_after(rowid, ts) is not None:
                return True
        return False

    # --- REDO flush ------------------------------------------------------------------------------

    def flush_deltas(self, snapshot: Timestamp, *, fsync: bool) -> dict[str, Any] | None:
        """Write the DeltaMemStore's mutations committed at or before ``snapshot`` as a REDO
        delta file; return its metadata entry (the caller names it in the tablet metadata)."""
        flushed = self.dms.split_committed(snapshot)
        if not flushed:
            return None
        rowids = np.array(sorted(flushed), dtype=np.int64)
        images = []
        for rowid, base in zip(rowids.tolist(), self.base_rows(rowids)):
            values: Row | None = None if self._deleted[rowid] else base
            redo = self._latest_redo(rowid, (1 << 63) - 1)
            if redo is not None:
                values = redo[1]
            for mutation in flushed[rowid]:
                values = apply_mutation(values, mutation)
                # split_committed hands back committed mutations only.
                commit_ts: Timestamp = mutation.txn.commit_ts  # type: ignore[assignment]
                images.append(DeltaImage(rowid, int(commit_ts), values))
        name = f"redo-{self.meta['next_delta']}.arrow"
        tmp = self.directory / (name + ".tmp")
        write_delta_file(tmp, self.schema, images, fsync=fsync)
        os.replace(tmp, self.directory / name)
        if fsync:
            fsync_dir(self.directory)
        ts_values = [d.ts for d in images]
        doc = {"file": name, "min_ts": min(ts_values), "max_ts": max(ts_values)}
        self.meta = {
            **self.meta,
            "redo": [*self.meta["redo"], doc],
            "next_delta": self.meta["next_delta"] + 1,
        }
        self.redo.append(self._open_delta(doc))
        return doc

    def stats(self) -> RowSetStats:
        return {
            "rowset_id": self.rowset_id,
            "min_key": self.min_key,
            "max_key": self.max_key,
            "rows": self.rows,
            "bytes_on_disk": self.size_bytes,
            "redo_delta_files": len(self.redo),
            "undo_delta_files": len(self.undo),
            "delta_memstore_rows": len(self.dms),
        }

    # --- scans -----------------------------------------------------------------------------------

    def _delta_rowids(self, snapshot: int) -> np.ndarray:
        parts = [np.fromiter(self.dms.chains, dtype=np.int64, count=len(self.dms.chains))]
        if snapshot < self.base_ts:
            parts += [
                d.rowids_where(after=snapshot).astype(np.int64)
                for d in self.undo
                if d.max_ts > snapshot
            ]
        else:
            parts += [
                d.rowids_where(at_or_before=snapshot).astype(np.int64)
                for d in self.redo
                if d.min_ts <= snapshot
            ]
        return np.unique(np.concatenate(parts))

    def scan(
        self,
        spec: ScanSpec,
        key_range: KeyRange,
        snapshot: int,
        reader: TxnState | None,
        stats: ScanStats,
    ) -> Iterator[pa.RecordBatch]:
        """Yield the rows of this rowset visible at ``snapshot`` that match ``spec``."""
        lo = self.lower_bound(key_range.lower)
        hi = self.rows if key_range.upper is None else self.lower_bound(key_range.upper)
        if lo >= hi:
            stats.rowsets_skipped += 1
            return
        stats.rowsets_read += 1
        delta_rowids = self._delta_rowids(snapshot)
        arrow_schema = self.schema.arrow_schema(spec.projection)
        history = snapshot < self.base_ts
        for idx, meta in enumerate(self.key_index.blocks):
            first, end = meta.first_rowid, meta.first_rowid + meta.rows
            if end <= lo or first >= hi:
                continue
            in_block = delta_rowids[
                (delta_rowids >= max(first, lo)) & (delta_rowids < min(end, hi))
            ]
            mask = np.zeros(meta.rows, bool)
            mask[max(first, lo) - first : min(end, hi) - first] = True
            if not history:
                mask &= ~self._deleted[first:end]
            mask[in_block - first] = False
            if mask.any():
                mask = self._filter_block(idx, spec, mask, stats)
            else:
                stats.blocks_skipped += 1
            selected = np.flatnonzero(mask)
            if history and len(selected):
                # Rows with no UNDO newer than the snapshot are as the base says.
                selected = selected[~self._deleted[first + selected]]
            if len(selected):
                yield self._materialise(idx, selected, spec, arrow_schema, stats)
            if len(in_block):
                batch = self._delta_batch(in_block, spec, snapshot, reader, arrow_schema, stats)
                if batch is not None and batch.num_rows:
                    yield batch

    def _filter_block(
        self, idx: int, spec: ScanSpec, mask: np.ndarray, stats: ScanStats
    ) -> np.ndarray:
        for predicate in spec.predicates:
            reader = self._columns.get(predicate.column_id)
            if reader is None:
                if not predicate.evaluate(self._default_array(predicate.column_id, 1))[0].as_py():
                    return np.zeros_like(mask)
                continue
            if not block_may_match(predicate, reader.blocks[idx], reader.data_type):
                stats.blocks_skipped += 1
                return np.zeros_like(mask)
        selected = np.flatnonzero(mask)
        if len(selected) <= _FEW_ROWS and len(selected) * 16 < len(mask):
            # A point or short key range: judge only the candidate rows.
            for predicate in spec.predicates:
                if predicate.column_id not in self._columns:
                    continue  # a read default, judged above
                values = self._columns[predicate.column_id].read_block(idx).to_arrow(selected)
                stats.blocks_read += 1
                stats.predicates_on_decoded += 1
                selected = selected[predicate.evaluate(values).to_numpy(zero_copy_only=False)]
                if not len(selected):
                    break
            narrowed = np.zeros_like(mask)
            narrowed[selected] = True
            return narrowed
        for predicate in spec.predicates:
            if predicate.column_id not in self._columns:
                continue
            block = self._columns[predicate.column_id].read_block(idx)
            stats.blocks_read += 1
            matches, on_encoded = block.evaluate(predicate)
            if on_encoded:
                stats.predicates_on_encoded += 1
            else:
                stats.predicates_on_decoded += 1
            mask &= matches
            if not mask.any():
                break
        return mask

    def _materialise(
        self,
        idx: int,
        selected: np.ndarray,
        spec: ScanSpec,
        arrow_schema: pa.Schema,
        stats: ScanStats,
    ) -> pa.RecordBatch:
        if not spec.projection:
            return _empty_projection(len(selected))
        arrays = []
        for column_id in spec.projection:
            reader = self._columns.get(column_id)
            if reader is None:
                arrays.append(self._default_array(column_id, len(selected)))
                continue
            arrays.append(reader.read_block(idx).to_arrow(selected))
            stats.blocks_read += 1
            if not _is_fixed(reader.data_type):
                stats.strings_materialised += len(selected)
        return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)

    def _delta_batch(
        self,
        rowids: np.ndarray,
        spec: ScanSpec,
        snapshot: int,
        reader: TxnState | None,
        arrow_schema: pa.Schema,
        stats: ScanStats,
    ) -> pa.RecordBatch | None:
        stats.delta_rows += len(rowids)
        # Per-row Python: rows with deltas are resolved one by one (few, by design).
        states = [
            self.state_at(rowid, base, snapshot, reader)
            for rowid, base in zip(rowids.tolist(), self.base_rows(rowids))
        ]
        rows = [s for s in states if s is not None]
        if not rows:
            return None
        needed = list(dict.fromkeys([*spec.projection, *(p.column_id for p in spec.predicates)]))
        arrays = {
            cid: from_storage_values(
                [r[self.schema.index_of(cid)] for r in rows], self.schema.column(cid).type
            )
            for cid in needed
        }
        if spec.projection:
            batch = pa.RecordBatch.from_arrays(
                [arrays[c] for c in spec.projection], schema=arrow_schema
            )
        else:
            batch = _empty_projection(len(rows))
        if spec.predicates:
            mask = spec.predicates[0].evaluate(arrays[spec.predicates[0].column_id])
            for predicate in spec.predicates[1:]:
                mask = pc.and_(mask, predicate.evaluate(arrays[predicate.column_id]))
            batch = batch.filter(mask)
        return batch


def _is_fixed(data_type: DataType) -> bool:
    return not (data_type.is_string or data_type.kind.value == "binary")


def _empty_projection(num_rows: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.nulls(num_rows)], names=["_"]).select([])
