"""DiskRowSet: a flushed MemRowSet as column files, a key index, a bloom filter and delta stores.

Its files are laid out as ``rowset_files`` says and written by
``rowset_writer``.  Not thread-safe by itself: the tablet lock guards writes;
scans read immutable files plus the DeltaMemStore under that lock.

A scan decodes a block of base data, gathers the delta records of that
block's rowids from the delta stores its snapshot needs (REDO files with a
record at or below it, UNDO files with one above it, the DeltaMemStore), and
applies them per projected column with ``delta_apply``: rows without deltas
keep the encoded-data predicate path, rows with deltas are resolved as
columns; a block range dense with deltas (one record per ``_DENSE_SHARE``
rows) is decoded whole and patched by scatter, Kudu's way.  The lists of
delta files are replaced, never mutated, so a scan step sees one consistent
set.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict, cast

import numpy as np
import pyarrow as pa

from storage.cfile.pushdown import block_may_match
from storage.cfile.reader import CFileReader
from storage.data_type import ColumnId, DataType
from storage.fs import fsync_dir
from storage.mvcc import TxnState
from storage.predicate import KeyRange, ScanSpec
from storage.row_change import (
    ColumnChanges,
    Mutation,
    MutationKind,
    Row,
    from_storage_values,
)
from storage.scan_stats import ScanStats
from storage.schema import Schema
from storage.tablet import row_blocks
from storage.tablet.bloom import BloomFilter
from storage.tablet.delta_apply import resolve_column, resolve_live, scatter
from storage.tablet.delta_file import DeltaFile, write_delta_file
from storage.tablet.delta_records import KEEP, LIVE, DeltaRecords
from storage.tablet.deltas import DeltaFlush, DeltaMemStore
from storage.tablet.key_index import KeyIndex
from storage.tablet.memrowset import Probe
from storage.tablet.rowset_files import (
    BLOOM_FILE,
    DELETED_FILE,
    KEY_FILE,
    column_file_name,
    known_files,
    rowset_dir_name,
)
from storage.tablet.schema_change import RowMapper
from storage.timestamp import Timestamp

_ABSENT = object()
"""``_row_changes`` of a row not there at the snapshot."""
_FEW_ROWS = 64
"""Up to this many candidate rows (and a small share of their block), predicates run on just
those rows rather than on the whole block."""
_DENSE_SHARE = 32
"""A block range (longer than a short key range) with at least one delta record per this
many rows is resolved whole."""


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
    redo_bytes: int
    undo_bytes: int
    redo_records: int
    undo_records: int
    base_bytes: int
    deleted_rows: int
    """Rows deleted in the base data (not counting deletes still in REDO records)."""


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
            c.id: CFileReader(self.directory / column_file_name(meta, c.id))
            for c in schema.columns
            if (c.id in written if written is not None else self._has_file(c.id))
        }
        self.key_index = KeyIndex(self.directory / KEY_FILE)
        deleted = CFileReader(self.directory / meta.get("deleted_file", DELETED_FILE))
        self._deleted = deleted.read_all().to_numpy(zero_copy_only=False).astype(bool)
        bloom = (self.directory / BLOOM_FILE).read_bytes()
        self.bloom = BloomFilter.from_bytes(bloom, self.directory / BLOOM_FILE)
        self._index_bytes = self.key_index.size_bytes + deleted.size_bytes + len(bloom)
        self.undo: tuple[DeltaFile, ...] = tuple(self._open_delta(d) for d in meta["undo"])
        self.redo: tuple[DeltaFile, ...] = tuple(self._open_delta(d) for d in meta["redo"])
        self.dms = DeltaMemStore(schema)
        self._row_block_owners: row_blocks.Owners = {}
        """``row_blocks`` key spaces by projection (checked against ``_columns``, which a
        delta compaction or schema change replaces)."""

    def _has_file(self, column_id: int) -> bool:
        return (self.directory / f"col-{column_id}.cfile").exists()

    def with_schema(self, schema: Schema) -> DiskRowSet:
        """This rowset read as ``schema`` (schema_change.py): same files, remapped
        DeltaMemStore; the caller holds the tablet lock and swaps the copy in."""
        copy = object.__new__(DiskRowSet)
        copy.__dict__.update(self.__dict__)
        copy.schema = schema
        copy._columns = {c.id: self._columns[c.id] for c in schema.columns if c.id in self._columns}
        copy.dms = self.dms.with_schema(RowMapper(self.schema, schema), schema)
        copy.undo = tuple(d.with_schema(schema) for d in self.undo)
        copy.redo = tuple(d.with_schema(schema) for d in self.redo)
        return copy

    def _default_array(self, column_id: int, rows: int) -> pa.Array:
        column = self.schema.column(column_id)
        return from_storage_values([column.read_default] * rows, column.type)

    def _open_delta(self, doc: dict[str, Any]) -> DeltaFile:
        return DeltaFile(self.directory / doc["file"], self.schema)

    def known_files(self) -> set[str]:
        return known_files(self.meta)

    def install(self, replacement: DiskRowSet) -> None:
        """Take over ``replacement``'s files (a delta compaction's output, opened from the
        new metadata entry; same rowids), keeping this rowset's DeltaMemStore; the caller
        holds the tablet lock, so each scan step sees the old files or the new ones."""
        self.meta = replacement.meta
        self._columns = replacement._columns
        self._deleted = replacement._deleted
        self._index_bytes = replacement._index_bytes
        self.undo = replacement.undo
        self.redo = replacement.redo

    @property
    def deleted(self) -> np.ndarray:
        """The base data's deleted bitmap (read-only)."""
        deleted: np.ndarray = self._deleted
        return deleted

    def keys(self) -> pa.Array:
        """Every encoded primary key, in rowid order."""
        return self.key_index.read_all()

    @property
    def column_readers(self) -> dict[ColumnId, CFileReader]:
        return dict(self._columns)

    @property
    def block_rows(self) -> int:
        """Rows per block of every cfile of this rowset (the last block may hold fewer)."""
        return self.key_index.blocks[0].rows if self.key_index.blocks else 1

    @property
    def size_bytes(self) -> int:
        return self.base_bytes + sum(d.size_bytes for d in (*self.undo, *self.redo))

    @property
    def base_bytes(self) -> int:
        """Bytes of the base data: column files, key index, deleted bitmap, bloom filter."""
        return sum(r.size_bytes for r in self._columns.values()) + self._index_bytes

    # --- finding keys ----------------------------------------------------------------------

    def find(self, key: bytes) -> int | None:
        """The rowid holding ``key``, or None; bounds and bloom filter first, then the index."""
        if key < self.min_key or key > self.max_key or not self.bloom.may_contain(key):
            return None
        return self.key_index.find(key)

    def lower_bound(self, key: bytes | None) -> int:
        """The first rowid whose key is >= ``key`` (rows if none)."""
        if key is None or key <= self.min_key:
            return 0
        if key > self.max_key:
            return self.rows
        return self.key_index.lower_bound(key)

    def span(self, lower: bytes | None, upper: bytes | None) -> tuple[int, int]:
        """The rowids of the keys in [``lower``, ``upper``) (None: unbounded), as
        ``lower_bound`` of each end, searching the key index once where both ends are inside
        this rowset's keys (``KeyIndex.span``)."""
        if upper is not None and upper <= self.min_key:
            return 0, 0
        if lower is not None and lower > self.max_key:
            return self.rows, self.rows
        if upper is None or upper > self.max_key:
            return self.lower_bound(lower), self.rows
        if lower is None or lower <= self.min_key:
            return 0, self.lower_bound(upper)
        return self.key_index.span(lower, upper)

    def keys_between(self, lower: bytes, upper: bytes, most: int) -> tuple[int, list[bytes]] | None:
        """``KeyIndex.keys_between`` (``span`` and the keys in it at once): no keys when the
        range misses this rowset's; None when the index cannot answer from one block."""
        if upper <= self.min_key or lower > self.max_key:
            return 0, []
        return self.key_index.keys_between(lower, upper, most)

    # --- row state ----------------------------------------------------------------------------

    def _is_live_latest(self, rowid: int) -> bool:
        chain = self.dms.chains.get(rowid)
        if chain:
            return chain[-1].kind is not MutationKind.DELETE
        for delta in reversed(self.redo):  # newest file first
            if not delta.live_records or not delta.may_hold(rowid, rowid + 1):
                continue
            records = delta.records_in(rowid, rowid + 1)
            changes = np.flatnonzero(records.live != KEEP)
            if len(changes):
                return bool(records.live[changes[-1]] == LIVE)
        return not self._deleted[rowid]

    def probe_many(
        self, rowids: np.ndarray, txn: TxnState, conflict_ts: int | None
    ) -> tuple[list[Probe], np.ndarray | None]:
        """``probe`` of each of ``rowids`` and, with ``conflict_ts``, ``changed_after`` it;
        rows without a DeltaMemStore chain (a batch's usual case) are judged together: the
        deleted bitmap, then each delta file's records of those rows found by numpy over
        the file's rowid arrays, not a file lookup per row."""
        chains = self.dms.chains
        live = ~self._deleted[rowids]
        for delta in self.redo:  # oldest first: a newer file's change of liveness wins
            if not delta.live_records:
                continue
            log_rowid, _, log_live = delta.log_of(rowids)
            changes = log_live != KEEP
            log_rowid, log_live = log_rowid[changes], log_live[changes]
            at = np.searchsorted(log_rowid, rowids, "right") - 1
            hit = at >= 0
            hit[hit] = log_rowid[at[hit]] == rowids[hit]
            live[hit] = log_live[at[hit]] == LIVE
        changed = None
        if conflict_ts is not None:
            changed = np.zeros(len(rowids), dtype=bool)
            for delta in (*self.redo, *self.undo):
                if delta.max_ts > conflict_ts:
                    log_rowid, log_ts, _ = delta.log_of(rowids)
                    changed |= np.isin(rowids, log_rowid[log_ts > conflict_ts])
        probes = [_LIVE if is_live else _DEAD for is_live in live.tolist()]
        if chains:
            for index, rowid in enumerate(rowids.tolist()):
                if rowid in chains:
                    probes[index] = self.probe(rowid, txn)
                    if changed is not None:
                        changed[index] = self.changed_after(rowid, conflict_ts)  # type: ignore[arg-type]
        return probes, changed

    def append_probed(self, rowid: int, mutation: Mutation, is_live: bool) -> bool:
        """``delete``/``update`` of a row ``probe_many`` judged under the same tablet lock: a
        row with no chain then is still as judged; one a write of this batch gave a chain
        since is judged again."""
        if rowid in self.dms.chains:
            is_live = self._is_live_latest(rowid)
        if not is_live:
            return False
        self.dms.append(rowid, mutation)
        return True

    # --- writes (caller holds the tablet lock) --------------------------------------------------

    def probe(self, rowid: int, txn: TxnState) -> Probe:
        chain = self.dms.chains.get(rowid)
        if chain:
            last = chain[-1].txn
            if last is not txn and not last.is_done:
                return Probe(last, chain[-1].kind is not MutationKind.DELETE)
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
        REDO file, or (when the change is already folded into the base) an UNDO file."""
        # Committed entries come in commit order, so the newest committed one decides (a hot
        # row's chain is not walked whole on every write).
        for mutation in reversed(self.dms.chains.get(rowid, ())):
            committed = mutation.txn.commit_ts
            if committed is not None:
                if committed > ts:
                    return True
                break
        for delta in (*self.redo, *self.undo):
            if (
                delta.max_ts > ts
                and delta.may_hold(rowid, rowid + 1)
                and bool((delta.records_in(rowid, rowid + 1).ts > ts).any())
            ):
                return True
        return False

    # --- REDO flush ------------------------------------------------------------------------------

    def write_redo(self, flush: DeltaFlush | None, *, fsync: bool) -> dict[str, Any] | None:
        """Write the DeltaMemStore's committed records ``flush`` as a durable REDO delta file
        (no lock needed); return its metadata entry, or None when there is nothing to write."""
        if flush is None:
            return None
        name = f"redo-{self.meta['next_delta']}.delta"
        tmp = self.directory / (name + ".tmp")
        try:
            info = write_delta_file(tmp, flush.records, fsync=fsync)
            os.replace(tmp, self.directory / name)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        if fsync:
            fsync_dir(self.directory)
        return {**info.to_json(), "file": name}

    def meta_with(self, **changes: Any) -> dict[str, Any]:
        """This rowset's metadata entry with ``changes`` (the next one a change will install)."""
        return {**self.meta, **changes}

    def meta_with_redo(self, doc: dict[str, Any]) -> dict[str, Any]:
        return self.meta_with(
            redo=[*self.meta["redo"], doc], next_delta=self.meta["next_delta"] + 1
        )

    def install_redo(self, doc: dict[str, Any], flush: DeltaFlush) -> None:
        """Add the REDO file ``doc`` and drop from the DeltaMemStore what it holds (caller
        holds the tablet lock, so a scan step sees the mutations in one place or the other)."""
        self.dms.drop_flushed(flush)
        self.meta = self.meta_with_redo(doc)
        self.redo = (*self.redo, self._open_delta(doc))

    def flush_deltas(self, snapshot: Timestamp, *, fsync: bool) -> dict[str, Any] | None:
        """Write and install the DeltaMemStore's mutations committed at or before ``snapshot``
        in one go (the caller holds the tablet lock throughout)."""
        flush = self.dms.committed(snapshot)
        doc = self.write_redo(flush, fsync=fsync)
        if doc is not None and flush is not None:
            self.install_redo(doc, flush)
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
            "redo_bytes": sum(d.size_bytes for d in self.redo),
            "undo_bytes": sum(d.size_bytes for d in self.undo),
            "redo_records": sum(len(d) for d in self.redo),
            "undo_records": sum(len(d) for d in self.undo),
            "base_bytes": self.base_bytes,
            "deleted_rows": int(np.count_nonzero(self._deleted)),
        }

    # --- scans -----------------------------------------------------------------------------------

    def _block_deltas(
        self, lo: int, hi: int, snapshot: int, reader: TxnState | None, stats: ScanStats
    ) -> tuple[DeltaRecords, DeltaRecords]:
        """The REDO records (visible at ``snapshot``) and UNDO records (above it) of rowids in
        [lo, hi), each sorted by (rowid, ts); only the stores whose ranges matter are read."""
        redo_parts = []
        for delta in self.redo:
            if delta.min_ts <= snapshot and delta.may_hold(lo, hi):
                stats.delta_stores_read += 1
                part = delta.records_in(lo, hi)
                redo_parts.append(
                    part if delta.max_ts <= snapshot else part.where(part.ts <= snapshot)
                )
        if self.dms.chains:
            stats.delta_stores_read += 1
            redo_parts.append(self.dms.visible_records(lo, hi, snapshot, reader))
        undo_parts = []
        for delta in self.undo:
            if delta.max_ts > snapshot and delta.may_hold(lo, hi):
                stats.delta_stores_read += 1
                part = delta.records_in(lo, hi)
                undo_parts.append(part.where(part.ts > snapshot))
        return (
            DeltaRecords.concat(redo_parts, self.schema).sorted(),
            DeltaRecords.concat(undo_parts, self.schema).sorted(),
        )

    def scan(
        self,
        spec: ScanSpec,
        key_range: KeyRange,
        snapshot: int,
        reader: TxnState | None,
        stats: ScanStats,
    ) -> Iterator[pa.RecordBatch]:
        """Yield the rows of this rowset visible at ``snapshot`` that match ``spec``, a block
        at a time in rowid order; each step runs under the caller's tablet lock."""
        lo, hi = self.span(key_range.lower, key_range.upper)
        if lo >= hi:
            stats.rowsets_skipped += 1
            return
        stats.rowsets_read += 1
        arrow_schema = self.schema.arrow_schema(spec.projection)
        for idx, meta in enumerate(self.key_index.blocks):
            first, end = meta.first_rowid, meta.first_rowid + meta.rows
            if end <= lo or first >= hi:
                continue
            start, stop = max(first, lo), min(end, hi)
            redo, undo = self._block_deltas(start, stop, snapshot, reader, stats)
            if (
                stop - start > _FEW_ROWS * 16
                and (len(redo) + len(undo)) * _DENSE_SHARE >= stop - start
            ):
                batch = self._dense_block(idx, first, start, stop, spec, redo, undo, stats)
                if batch.num_rows:
                    yield batch
                continue
            if stop - start <= _FEW_ROWS and (stop - start) * 16 < meta.rows:
                touched, selected = self._few_rows(idx, first, start, stop, spec, redo, undo, stats)
            else:
                touched, selected = self._block_rows(idx, first, start, stop, spec, redo, undo,
                                                     stats)  # fmt: skip
            if not len(touched):
                if len(selected):
                    yield self._materialise(idx, selected, spec, arrow_schema, stats)
                continue
            stats.delta_rows += len(touched)
            resolved, kept = self._resolve(idx, first, touched, spec, redo, undo, stats)
            batch = self._merge(idx, first, selected, kept, resolved, spec, arrow_schema, stats)
            if batch.num_rows:
                yield batch

    def read_rows(
        self,
        rowids: np.ndarray,
        column_ids: tuple[ColumnId, ...],
        snapshot: int,
        reader: TxnState | None,
        stats: ScanStats,
    ) -> tuple[np.ndarray, dict[ColumnId, list[pa.Array]]]:
        """Kudu's point read: of ``rowids`` (ascending, found by the key index), those live at
        ``snapshot`` and their ``column_ids`` values; per block touched, only those rows are
        taken from the (cached) decoded blocks and only their deltas applied.  The caller
        holds the tablet lock."""
        blocks = self.key_index.blocks
        if len(rowids) == 1:
            groups = [
                (bisect.bisect_right(self.key_index.block_starts, int(rowids[0])) - 1, rowids)
            ]
        else:
            block_of = np.searchsorted(self.key_index.block_starts, rowids, side="right") - 1
            groups = [(idx, rowids[block_of == idx]) for idx in np.unique(block_of).tolist()]
        found: list[np.ndarray] = []
        values: dict[ColumnId, list[pa.Array]] = {c: [] for c in column_ids}
        for idx, ids in groups:
            lo, hi = int(ids[0]), int(ids[-1]) + 1
            if not self._may_have_deltas(ids, lo, hi, snapshot):
                ids = ids[~self._deleted[ids]]
                if not len(ids):
                    continue
                redo = undo = None
            else:
                redo, undo = self._block_deltas(lo, hi, snapshot, reader, stats)
                if len(ids) > 1 and (len(redo) or len(undo)):
                    redo = redo.where(np.isin(redo.rowid, ids))
                    undo = undo.where(np.isin(undo.rowid, ids))
                live = resolve_live(ids, ~self._deleted[ids], redo, undo)
                if not live.all():
                    ids = ids[live]
                    if not len(ids):
                        continue
                    redo = redo.where(np.isin(redo.rowid, ids))
                    undo = undo.where(np.isin(undo.rowid, ids))
            positions = ids - blocks[idx].first_rowid
            for column_id in column_ids:
                column_reader = self._columns.get(column_id)
                if column_reader is None:
                    base = self._default_array(column_id, len(ids))
                else:
                    base = column_reader.read_block(idx).to_arrow(positions)
                    stats.blocks_read += 1
                if redo is not None and undo is not None:
                    base = resolve_column(ids, base, self.schema.column(column_id), redo, undo)
                values[column_id].append(base)
            found.append(ids)
        rows = np.concatenate(found) if found else np.zeros(0, np.int64)
        return rows, values

    def files_change(self, rowid: int, snapshot: int) -> bool:
        """Whether a delta file holds a record of ``rowid`` that a read at ``snapshot`` may
        need (a REDO file's at or below it, an UNDO file's above it); when none does, the
        row is its base values and its DeltaMemStore chain (``read_row``)."""
        for delta in self.redo:
            if delta.min_ts <= snapshot and delta.holds(rowid):
                return True
        return any(delta.max_ts > snapshot and delta.holds(rowid) for delta in self.undo)

    def read_row(
        self,
        rowid: int,
        column_ids: tuple[ColumnId, ...],
        snapshot: int,
        reader: TxnState | None,
        stats: ScanStats,
    ) -> list[pa.Array] | None:
        """``read_rows`` of one row no delta file changes (``files_change`` is False): its
        ``column_ids`` values as one-row arrays, or None when it is absent at ``snapshot``.
        The base values are slices of cached whole blocks.  The DeltaMemStore chain, if
        any, is read newest first, as far back as the columns read need: a chain's hidden
        entries are its tail (a row's writers commit in chain order, and only the newest
        can be in progress), so this is a scan's ``visible_records`` (the committed prefix
        at or below the snapshot, or the whole chain when ``reader`` wrote its newest
        entry) without walking a hot row's whole history."""
        changed = self._row_changes(rowid, column_ids, snapshot, reader)
        if changed is _ABSENT:
            return None
        return self._row_arrays(rowid, column_ids, cast("dict[int, object] | None", changed), stats)

    def is_live(self, rowid: int, snapshot: int, reader: TxnState | None, stats: ScanStats) -> bool:
        """``read_row`` of no columns is not None, counted as it counts (``files_change`` is
        False): whether the row is there at ``snapshot``, with no block looked at."""
        if self._row_changes(rowid, (), snapshot, reader) is _ABSENT:
            return False
        stats.rowsets_read += 1
        return True

    def read_row_batch(
        self,
        rowid: int,
        column_ids: tuple[ColumnId, ...],
        arrow_schema: pa.Schema,
        snapshot: int,
        reader: TxnState | None,
        stats: ScanStats,
    ) -> pa.RecordBatch | list[pa.Array] | None:
        """``read_row``, as a one-row slice of the block's cached batch of ``column_ids``
        (``row_blocks``) when the row's values are its base values and every column's file
        gives ``arrow_schema``'s type: one slice rather than one per column and a batch."""
        changed = self._row_changes(rowid, column_ids, snapshot, reader)
        if changed is _ABSENT:
            return None
        if not changed and column_ids:
            columns = self._columns
            owner = row_blocks.owner_of(self._row_block_owners, columns, column_ids, arrow_schema)
            idx, position = self.key_index.block_of(rowid)
            block = (
                None
                if owner is None
                else row_blocks.block_batch(owner, columns, column_ids, arrow_schema, idx)
            )
            if block is not None:
                stats.rowsets_read += 1
                stats.blocks_read += len(column_ids)
                return block.slice(position, 1)
        return self._row_arrays(rowid, column_ids, cast("dict[int, object] | None", changed), stats)

    def _row_changes(
        self, rowid: int, column_ids: tuple[ColumnId, ...], snapshot: int, reader: TxnState | None
    ) -> dict[int, object] | None | object:
        """What the DeltaMemStore chain changes of ``column_ids`` of a row no delta file
        changes, by column index (None: no visible entry), or ``_ABSENT``."""
        changed: dict[int, object] | None = None
        chain = self.dms.chains.get(rowid)
        end = len(chain) if chain else 0
        if end and (reader is None or chain[-1].txn is not reader):
            while end:
                ts = chain[end - 1].txn.commit_ts
                if ts is not None and ts <= snapshot:
                    break
                end -= 1
        if end:
            kind = chain[end - 1].kind
            if kind is MutationKind.DELETE:
                return _ABSENT
            changed = {}
            wanted = {self.schema.index_of(c) for c in column_ids}
            for at in range(end - 1, -1, -1):
                entry = chain[at]
                kind = entry.kind
                if kind is MutationKind.UPDATE:
                    for index, value in cast(ColumnChanges, entry.change):
                        if index in wanted and index not in changed:
                            changed[index] = value
                    if len(changed) == len(wanted):
                        break
                else:  # a REINSERT sets every column (a DELETE cannot come before it here)
                    if kind is MutationKind.REINSERT:
                        row = cast(Row, entry.change)
                        for index in wanted:
                            changed.setdefault(index, row[index])
                    break
        elif self._deleted[rowid]:
            return _ABSENT
        return changed

    def _row_arrays(
        self,
        rowid: int,
        column_ids: tuple[ColumnId, ...],
        changed: dict[int, object] | None,
        stats: ScanStats,
    ) -> list[pa.Array]:
        stats.rowsets_read += 1
        schema = self.schema
        idx, position = self.key_index.block_of(rowid)
        out = []
        for column_id in column_ids:
            if changed is not None:
                index = schema.index_of(column_id)
                if index in changed:
                    out.append(from_storage_values([changed[index]], schema.columns[index].type))
                    continue
            column_reader = self._columns.get(column_id)
            if column_reader is None:
                out.append(self._default_array(column_id, 1))
            else:
                out.append(column_reader.read_block_arrow(idx).slice(position, 1))
                stats.blocks_read += 1
        return out

    def _may_have_deltas(self, rowids: np.ndarray, lo: int, hi: int, snapshot: int) -> bool:
        """Whether any delta store may change ``rowids`` (within [lo, hi)) as seen at
        ``snapshot``; when none can, a point read takes the base values as they are."""
        chains = self.dms.chains
        if chains and any(r in chains for r in rowids.tolist()):
            return True
        return any(d.min_ts <= snapshot and d.may_hold(lo, hi) for d in self.redo) or any(
            d.max_ts > snapshot and d.may_hold(lo, hi) for d in self.undo
        )

    def _block_rows(
        self,
        idx: int,
        first: int,
        start: int,
        stop: int,
        spec: ScanSpec,
        redo: DeltaRecords,
        undo: DeltaRecords,
        stats: ScanStats,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Of rows [start, stop) of block ``idx``: the rowids with deltas, and the block
        positions of the others that are live and match ``spec``'s predicates."""
        rows = self.key_index.blocks[idx].rows
        marks = np.zeros(rows, bool)  # a mask, not np.union1d: no hashing or sort
        marks[redo.rowid - first] = True
        marks[undo.rowid - first] = True
        touched = np.flatnonzero(marks) + first
        mask = np.zeros(rows, bool)
        mask[start - first : stop - first] = True
        mask &= ~self._deleted[first : first + rows]
        mask[touched - first] = False
        if mask.any():
            mask = self._filter_block(idx, spec, mask, stats)
        else:
            stats.blocks_skipped += 1
        return touched, np.flatnonzero(mask)

    def _few_rows(
        self,
        idx: int,
        first: int,
        start: int,
        stop: int,
        spec: ScanSpec,
        redo: DeltaRecords,
        undo: DeltaRecords,
        stats: ScanStats,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``_block_rows`` of a point or short key range: arrays the size of the range, not
        of the block (a point lookup allocated and searched three block-sized masks)."""
        touched = np.union1d(redo.rowid, undo.rowid).astype(np.int64, copy=False)
        keep = ~self._deleted[start:stop]
        keep[touched - start] = False
        positions = np.flatnonzero(keep) + (start - first)
        if not len(positions):
            stats.blocks_skipped += 1
            return touched, positions
        for predicate in spec.predicates:
            reader = self._columns.get(predicate.column_id)
            if reader is None:
                if not predicate.evaluate(self._default_array(predicate.column_id, 1))[0].as_py():
                    return touched, positions[:0]
            elif not block_may_match(predicate, reader.blocks[idx], reader.data_type):
                stats.blocks_skipped += 1
                return touched, positions[:0]
        return touched, self._judge_rows(idx, spec, positions, stats)

    def _judge_rows(
        self, idx: int, spec: ScanSpec, selected: np.ndarray, stats: ScanStats
    ) -> np.ndarray:
        """The positions of ``selected`` (a few rows of block ``idx``) matching ``spec``'s
        predicates, each judged on just those rows' decoded values."""
        for predicate in spec.predicates:
            if predicate.column_id not in self._columns:
                continue  # a read default, judged by the caller
            values = self._columns[predicate.column_id].read_block(idx).to_arrow(selected)
            stats.blocks_read += 1
            stats.predicates_on_decoded += 1
            selected = selected[predicate.evaluate(values).to_numpy(zero_copy_only=False)]
            if not len(selected):
                break
        return selected

    def _dense_block(
        self,
        idx: int,
        first: int,
        start: int,
        stop: int,
        spec: ScanSpec,
        redo: DeltaRecords,
        undo: DeltaRecords,
        stats: ScanStats,
    ) -> pa.RecordBatch:
        """Rows [start, stop) of block ``idx`` when many of them have deltas: Kudu's way,
        each needed column decoded whole and patched by one scatter per delta store kind,
        then liveness, the range and the predicates applied as one mask."""
        rows = self.key_index.blocks[idx].rows
        rowids = np.arange(first, first + rows, dtype=np.int64)
        mask = resolve_live(rowids, ~self._deleted[first : first + rows], redo, undo)
        mask[: start - first] = False
        mask[stop - first :] = False
        touched = np.zeros(rows, bool)
        touched[redo.rowid - first] = True
        touched[undo.rowid - first] = True
        stats.delta_rows += int(np.count_nonzero(touched))
        needed = list(dict.fromkeys([*spec.projection, *(p.column_id for p in spec.predicates)]))
        resolved = {}
        for column_id in needed:
            reader = self._columns.get(column_id)
            if reader is None:
                base = self._default_array(column_id, rows)
            else:
                base = reader.read_block(idx).to_arrow()
                stats.blocks_read += 1
            column = self.schema.column(column_id)
            resolved[column_id] = resolve_column(rowids, base, column, redo, undo)
        for predicate in spec.predicates:
            matches = predicate.evaluate(resolved[predicate.column_id])
            mask &= matches.to_numpy(zero_copy_only=False).astype(bool)
            stats.predicates_on_decoded += 1
        if not spec.projection:
            return _empty_projection(int(np.count_nonzero(mask)))
        arrow_schema = self.schema.arrow_schema(spec.projection)
        batch = pa.RecordBatch.from_arrays(
            [resolved[column_id] for column_id in spec.projection], schema=arrow_schema
        )
        return batch if bool(mask.all()) else batch.filter(pa.array(mask))

    def _resolve(
        self,
        idx: int,
        first: int,
        touched: np.ndarray,
        spec: ScanSpec,
        redo: DeltaRecords,
        undo: DeltaRecords,
        stats: ScanStats,
    ) -> tuple[dict[ColumnId, pa.Array], np.ndarray]:
        """Rows ``touched`` (rowids with deltas) at the snapshot: the needed columns of those
        that are live and match ``spec``'s predicates, and those rows' rowids."""
        live = resolve_live(touched, ~self._deleted[touched], redo, undo)
        touched = touched[live]
        if not len(touched):
            return {}, touched
        alive = np.zeros(self.key_index.blocks[idx].rows, bool)
        alive[touched - first] = True
        redo = redo.where(alive[redo.rowid - first])
        undo = undo.where(alive[undo.rowid - first])
        needed = list(dict.fromkeys([*spec.projection, *(p.column_id for p in spec.predicates)]))
        resolved = {}
        for column_id in needed:
            column = self.schema.column(column_id)
            reader = self._columns.get(column_id)
            if reader is None:
                base = self._default_array(column_id, len(touched))
            else:
                base = reader.read_block(idx).to_arrow(touched - first)
                stats.blocks_read += 1
            resolved[column_id] = resolve_column(touched, base, column, redo, undo)
        if spec.predicates:
            keep = np.ones(len(touched), bool)
            for predicate in spec.predicates:
                matches = predicate.evaluate(resolved[predicate.column_id])
                keep &= matches.to_numpy(zero_copy_only=False).astype(bool)
                stats.predicates_on_decoded += 1
            if not keep.all():
                touched = touched[keep]
                positions = pa.array(np.flatnonzero(keep))
                resolved = {cid: array.take(positions) for cid, array in resolved.items()}
        return resolved, touched

    def _merge(
        self,
        idx: int,
        first: int,
        selected: np.ndarray,
        kept: np.ndarray,
        resolved: dict[ColumnId, pa.Array],
        spec: ScanSpec,
        arrow_schema: pa.Schema,
        stats: ScanStats,
    ) -> pa.RecordBatch:
        """One batch, in rowid order, of base rows ``selected`` (block positions) and
        resolved rows ``kept`` (rowids)."""
        if not len(kept):
            return self._materialise(idx, selected, spec, arrow_schema, stats)
        marks = np.zeros(self.key_index.blocks[idx].rows, bool)
        marks[selected] = True
        marks[kept - first] = True
        positions = np.flatnonzero(marks)
        if not spec.projection:
            return _empty_projection(len(positions))
        at = np.searchsorted(positions, kept - first)
        arrays = []
        for column_id in spec.projection:
            values = resolved[column_id]
            if not len(selected):
                arrays.append(values)
                continue
            reader = self._columns.get(column_id)
            if reader is None:
                base = self._default_array(column_id, len(positions))
            else:
                base = reader.read_block(idx).to_arrow(positions)
                stats.blocks_read += 1
            arrays.append(scatter(base, at, values))
        return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)

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
            selected = self._judge_rows(idx, spec, selected, stats)
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


_LIVE = Probe(None, True)
_DEAD = Probe(None, False)


def _is_fixed(data_type: DataType) -> bool:
    return not (data_type.is_string or data_type.kind.value == "binary")


def _empty_projection(num_rows: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.nulls(num_rows)], names=["_"]).select([])
