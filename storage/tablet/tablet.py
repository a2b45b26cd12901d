"""Tablet: one partition of a table; routes writes to the rowset holding each key, and scans them.

A tablet owns its schema and its rowsets: one MemRowSet, which every new key
goes to, and the DiskRowSets earlier flushes made.  Every key lives in at
most one rowset: a write looks the key up in the MemRowSet, then in the
DiskRowSets whose key bounds and bloom filter admit it (diskrowset.py), and
an insert of a key deleted after its flush is a REINSERT in that
DiskRowSet's DeltaMemStore.  Its metadata lives in
``tablets/<id>/metadata.json``, replaced with ``atomic_write``: the schema,
the DiskRowSets with their delta files, and ``flushed_ts``, below which every
committed write of this tablet is in those files (WAL replay skips it).
Scans capture the MemRowSet, a frozen one and the rowset list at start.

Two locks: the tablet lock serialises writers and guards the in-memory
structures, and is never held across file I/O by background work; the
maintenance lock lets one structural change run at a time (a flush, a delta
compaction, a schema change), which may take as long as its I/O needs.  A
flush (flush.py) freezes the MemRowSet under the tablet lock, writes with no
lock, and installs under it again; while it writes, keys of the frozen
MemRowSet are found there and their changes land in its chains.

Writers are serialised by the tablet lock.  A write first probes every key
(a conflict check), then applies every row, both under one hold of the lock,
so a batch is applied whole or not at all.  When a key carries another live
transaction's provisional write, the tablet releases the lock, calls the
caller's ``wait_for(holder, key)``, and starts the batch over against the newest
versions.  A row held in the tablet's lock table (``row_locks.py``) in a mode that
conflicts with the write's (FOR NO KEY UPDATE for an update, FOR UPDATE for a delete or a
unique-column change) blocks it the same way; ``lock_rows`` takes such locks.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.data_type import ColumnId, TabletId
from storage.errors import (
    DataCorrupted,
    InternalError,
    NotNullViolation,
    NumericValueOutOfRange,
    ProgramLimitExceeded,
    UniqueViolation,
)
from storage.fs import (
    DataDirLayout,
    atomic_write,
    checksummed_json,
    fsync_dir,
    make_dir,
    read_checksummed_json,
)
from storage.key_encoding import (
    encode_integer_keys,
    encode_key,
    encode_keys,
    integer_key_width,
)
from storage.mvcc import TxnState
from storage.options import StorageOptions
from storage.predicate import KeyRange, ScanSpec
from storage.row_change import Mutation, MutationKind, Row, to_storage_values
from storage.row_lock_mode import RowLockMode
from storage.scan_stats import ScanStats
from storage.schema import ColumnSchema, Schema
from storage.tablet import batch_probe, point_read
from storage.tablet.compaction_policy import (
    Choice,
    RowSetInfo,
    average_height,
    choose,
    intervals,
)
from storage.tablet.delta_compaction import (
    CompactionOutput,
    major_compaction,
    minor_compaction,
    undo_gc,
)
from storage.tablet.delta_upgrade import (
    OLD_SUFFIX,
    needs_upgrade,
    remove_old_files,
    upgrade_delta_files,
)
from storage.tablet.diskrowset import DiskRowSet
from storage.tablet.flush import (
    FlushResult,
    InFlightHold,
    install_flushed_rows,
    log_flush,
    plan_flush,
    remove_unnamed_files,
    write_flushed_rowset,
)
from storage.tablet.gc_pause import BULK_ROWS, paused_gc
from storage.tablet.insert_segment import InsertSegment
from storage.tablet.memrowset import Capture, MemRowSet, Probe
from storage.tablet.row_locks import RowLockTable
from storage.tablet.rowset_compaction import (
    MergeOutput,
    carry_mutations,
    merge_rowsets,
    remove_rowset_dirs,
)
from storage.tablet.schema_change import conform_batch
from storage.timestamp import Timestamp

METADATA_FORMAT_VERSION = 3
"""3: delta files are ``.delta`` (delta_file.py); 1 and 2 load when they name no delta file."""
MAX_CELL_BYTES = 64 * 1024
MAX_KEY_BYTES = 16 * 1024
_ROW_OVERHEAD_BYTES = 200
"""Rough Python cost of one MemRowSet row beyond its Arrow bytes (tuple, objects, map entry)."""
SEGMENT_MIN_ROWS = 256
"""From this many rows, an insert of keys no rowset holds becomes one InsertSegment."""
_PYTHON_ENCODED = 4
"""Up to this many rows, keys are encoded by Python's encoder (Arrow kernels cost more)."""

WaitFor = Callable[[TxnState, bytes], None]
"""Called with the live transaction holding a key and that key; returns when the write may retry."""


@dataclass(frozen=True, slots=True)
class WriteResult:
    """Rows a write changed, and the encoded keys it left provisional entries at."""

    count: int
    keys: list[bytes]
    conflicts: list[int] = dataclasses.field(default_factory=list)
    """Batch rows not written because another transaction changed them after the writer's
    snapshot (see ``Tablet.update``'s ``conflict_ts``)."""
    segment: InsertSegment | None = None
    """A bulk insert kept whole (insert_segment.py): its keys are not in ``keys``, and it is
    undone with ``Tablet.drop_segment``."""


class Tablet:
    """One tablet: its schema, its MemRowSet, and the lock that serialises its writers."""

    def __init__(
        self,
        tablet_id: TabletId,
        schema: Schema,
        options: StorageOptions,
        directory: Path | None = None,
        doc: dict[str, Any] | None = None,
    ) -> None:
        self.tablet_id = tablet_id
        self.schema = schema
        self._options = options
        self._lock = threading.Lock()
        self.maintenance_lock = threading.Lock()
        """Held by one structural change (flush, compaction, schema change) at a time."""
        self.retired = False
        """Set (under ``maintenance_lock``) when the tablet is dropped: a maintenance op that
        chose it before then finds nothing to do instead of writing into a removed directory."""
        self._memrowset = MemRowSet(schema, self._lock)
        self._frozen: MemRowSet | None = None
        """The MemRowSet a running flush is writing out; still read and written until then."""
        self.row_locks = RowLockTable()
        """Row locks that are not provisional writes (row_locks.py); under the tablet lock."""
        self._key_types = [c.type for c in schema.key_columns]
        self._integer_key = integer_key_width(self._key_types)
        self._checked_columns: dict[tuple[ColumnId, ...], Schema] = {}
        self._unasked = ScanStats()
        """The counters of point reads whose caller passed none, only touched under the
        tablet lock: making a ScanStats per read cost more than the read's own counting."""
        """Projections ``read_keys`` found in the schema (the one they were checked against)."""
        self.directory = directory
        doc = doc or {}
        self.flushed_ts = Timestamp(doc.get("flushed_ts", 0))
        self.next_rowset_id: int = doc.get("next_rowset_id", 1)
        self.rowsets: list[DiskRowSet] = []
        if directory is not None:
            self.rowsets = [DiskRowSet(directory, schema, m) for m in doc.get("rowsets", [])]
        self.memrowset_bytes = 0
        self.scans = 0
        self.delta_lookups = 0
        """Scans run and delta stores they consulted (for /metrics; unlocked, so approximate)."""
        self.unflushed_since: float | None = None
        """When (monotonic) the oldest write not yet flushed arrived; None when all are."""
        self.flush_hold: InFlightHold | None = None
        """What the last flush kept for open transactions (flush.InFlightHold)."""

    @property
    def lock(self) -> threading.Lock:
        return self._lock

    def metadata_doc(self) -> dict[str, object]:
        return {
            "format_version": METADATA_FORMAT_VERSION,
            "tablet_id": self.tablet_id,
            "schema": self.schema.to_json(),
            "flushed_ts": int(self.flushed_ts),
            "next_rowset_id": self.next_rowset_id,
            "rowsets": [r.meta for r in self.rowsets],
        }

    @classmethod
    def create(
        cls, layout: DataDirLayout, tablet_id: TabletId, schema: Schema, options: StorageOptions
    ) -> Tablet:
        """Create the tablet's directory and metadata, durably."""
        make_dir(layout.tablet_dir(tablet_id), fsync=options.fsync)
        tablet = cls(tablet_id, schema, options, layout.tablet_dir(tablet_id))
        data = checksummed_json(tablet.metadata_doc(), indent=2)
        atomic_write(layout.tablet_metadata_path(tablet_id), data, fsync=options.fsync)
        return tablet

    @classmethod
    def load(cls, layout: DataDirLayout, tablet_id: TabletId, options: StorageOptions) -> Tablet:
        """Open a tablet from its metadata file."""
        path = layout.tablet_metadata_path(tablet_id)
        try:
            doc = read_checksummed_json(path.read_bytes(), path)
            assert doc["format_version"] in (1, 2, METADATA_FORMAT_VERSION), "known version"
            upgrade = needs_upgrade(doc)
            for rowset in doc.get("rowsets", []):
                for delta in (*rowset["undo"], *rowset["redo"]):
                    assert delta["file"].endswith((".delta", OLD_SUFFIX)), "a delta file"
            schema = Schema.from_json(doc["schema"])
        except (ValueError, KeyError, TypeError, AssertionError) as exc:
            raise DataCorrupted(f"tablet metadata {path} is unreadable: {exc}") from exc
        if upgrade:
            remove_unnamed_files(layout.tablet_dir(tablet_id), doc, schema, fsync=options.fsync)
            doc = upgrade_delta_files(
                layout.tablet_dir(tablet_id), doc, schema, fsync=options.fsync
            )
            doc["format_version"] = METADATA_FORMAT_VERSION
            atomic_write(path, checksummed_json(doc, indent=2), fsync=options.fsync)
            remove_old_files(layout.tablet_dir(tablet_id), doc)
        remove_unnamed_files(layout.tablet_dir(tablet_id), doc, schema, fsync=options.fsync)
        return cls(tablet_id, schema, options, layout.tablet_dir(tablet_id), doc)

    def alter_schema(self, schema: Schema) -> None:
        """Take ``schema`` (same key columns; columns added, dropped or renamed by ID) and
        write it to the metadata; nothing on disk is rewritten (schema_change.py)."""
        with self.maintenance_lock, self._lock:
            if schema == self.schema:
                return
            old_key = [(c.id, c.type) for c in self.schema.key_columns]
            if [(c.id, c.type) for c in schema.key_columns] != old_key:
                raise InternalError(f"tablet {self.tablet_id}: the primary key cannot change")
            before = (self._memrowset, self.rowsets, self.schema)
            self._memrowset = self._memrowset.with_schema(schema)
            self.rowsets = [r.with_schema(schema) for r in self.rowsets]
            self.schema = schema
            if self.directory is not None:
                try:
                    self.write_metadata()
                except OSError:
                    self._memrowset, self.rowsets, self.schema = before
                    raise

    def flush(self, snapshot: Timestamp, history_cutoff: int) -> bool:
        """Flush the MemRowSet and DeltaMemStores at ``snapshot`` (flush.py); return whether
        anything was written.  Writers and readers wait only for the freeze and install."""
        assert self.directory is not None, "a tablet with files has a directory"
        with self.maintenance_lock, paused_gc():
            if self.retired:
                return False
            with self._lock:
                frozen = self._memrowset
                self._frozen = frozen
                self._memrowset = MemRowSet(self.schema, self._lock)
                held_bytes, unflushed_since = self.memrowset_bytes, self.unflushed_since
                self.memrowset_bytes = 0
                self.unflushed_since = None
                entries = frozen.snapshot_entries()
                segments = frozen.capture_segments()[0]
                entry_count = len(frozen)
                rowsets = list(self.rowsets)
                prefixes = [r.dms.committed(snapshot) for r in rowsets]
                schema = self.schema
            try:
                plan = plan_flush(entries, snapshot, history_cutoff, segments)
                del entries
                new_rowset = write_flushed_rowset(
                    plan,
                    self.directory,
                    schema,
                    self.next_rowset_id,
                    snapshot,
                    fsync=self._options.fsync,
                )
                redo_docs = [
                    r.write_redo(p, fsync=self._options.fsync) for r, p in zip(rowsets, prefixes)
                ]
                metas = [
                    r.meta if doc is None else r.meta_with_redo(doc)
                    for r, doc in zip(rowsets, redo_docs)
                ]
                if new_rowset is not None:
                    metas.append(new_rowset.meta)
                next_id = self.next_rowset_id + (new_rowset is not None)
                flushed_ts = Timestamp(max(int(snapshot), int(self.flushed_ts)))
                self._write_metadata_doc(metas, next_id, flushed_ts)
            except BaseException:
                # Nothing was named (a full disk, say): remove what was written, and put
                # the frozen rows back where writers find them.
                metadata_path = self.directory / "metadata.json"
                on_disk = read_checksummed_json(metadata_path.read_bytes(), metadata_path)
                remove_unnamed_files(self.directory, on_disk, schema, fsync=False)
                with self._lock:
                    self.memrowset_bytes += held_bytes
                    if unflushed_since is not None:
                        self.unflushed_since = unflushed_since
                    for key, row in frozen.snapshot_entries():
                        self._memrowset.adopt(key, row, moved=True)
                    for segment in frozen.segments:
                        self._memrowset.add_segment(segment)
                    self._frozen = None
                raise
            with self._lock:
                for rowset, doc, prefix in zip(rowsets, redo_docs, prefixes):
                    if doc is not None and prefix is not None:
                        rowset.install_redo(doc, prefix)
                install_flushed_rows(plan, frozen, new_rowset, self._memrowset)
                kept = len(plan.kept) + sum(len(m) - int(m.sum()) for _, m in plan.kept_segments)
                kept_bytes = held_bytes * kept // entry_count if kept and entry_count else 0
                # Rows whose commit was still in flight stay in memory: keep them
                # counted, or the size threshold never flushes them.
                self.memrowset_bytes += kept_bytes
                self.flush_hold = InFlightHold.after(plan, kept_bytes)
                if new_rowset is not None:
                    self.rowsets = [*self.rowsets, new_rowset]
                self.next_rowset_id = next_id
                self.flushed_ts = flushed_ts
                self._frozen = None
                if self.unflushed_since is None and (
                    len(self._memrowset) or any(len(r.dms) for r in self.rowsets)
                ):
                    self.unflushed_since = time.monotonic()
            result = FlushResult(
                new_rowset,
                len(plan.rows) + sum(len(m) - int(m.sum()) for _, m in plan.segments),
                kept,
                new_rowset is not None or any(d is not None for d in redo_docs),
            )
            log_flush(self.tablet_id, snapshot, result)
            return result.wrote

    def compact_deltas(
        self, rowset_id: int, *, major: bool, history_cutoff: int
    ) -> CompactionOutput | None:
        """Run a minor (merge REDO files) or major (fold them into base data) delta
        compaction of one DiskRowSet (delta_compaction.py); None when there is nothing to do.
        Only the final swap takes the tablet lock."""
        assert self.directory is not None, "a tablet with files has a directory"
        with self.maintenance_lock:
            rowset = next((r for r in self.rowsets if r.rowset_id == rowset_id), None)
            if rowset is None or self.retired:
                return None
            redo = rowset.redo
            fsync = self._options.fsync
            if major and redo:
                out = major_compaction(
                    rowset.directory,
                    self.schema,
                    rowset.meta,
                    redo,
                    rowset.column_readers,
                    rowset.deleted,
                    rowset.block_rows,
                    history_cutoff,
                    fsync=fsync,
                )
            elif not major and len(redo) >= 2:
                out = minor_compaction(
                    rowset.directory, self.schema, rowset.meta, redo, fsync=fsync
                )
            else:
                return None
            self._swap_rowset_files(rowset, out)
            return out

    def compaction_choice(self, budget_mb: int, history_cutoff: int) -> Choice | None:
        """The merging compaction the budgeted policy would run now (compaction_policy.py)."""
        infos = []
        for rowset in list(self.rowsets):
            newest = max((d.max_ts for d in (*rowset.undo, *rowset.redo)), default=0)
            droppable = newest <= history_cutoff and not len(rowset.dms)
            # Deleted in the base, plus (at most) the REDO records that change liveness.
            deleted = int(np.count_nonzero(rowset.deleted)) + sum(
                d.live_records for d in rowset.redo
            )
            deleted = min(rowset.rows, deleted) if droppable else 0
            infos.append(
                RowSetInfo(
                    rowset.rowset_id,
                    rowset.min_key,
                    rowset.max_key,
                    rowset.size_bytes,
                    rowset.rows,
                    deleted,
                )
            )
        return choose(infos, budget_mb)

    def compact_rowsets(
        self, rowset_ids: list[int], snapshot: Timestamp, history_cutoff: int
    ) -> MergeOutput | None:
        """Merge DiskRowSets ``rowset_ids`` into one (rowset_compaction.py): written with no
        lock, then swapped in under the tablet lock with every newer mutation carried over."""
        assert self.directory is not None, "a tablet with files has a directory"
        with self.maintenance_lock:
            inputs = [r for r in self.rowsets if r.rowset_id in set(rowset_ids)]
            if not inputs or self.retired:
                return None
            rowset_id = self.next_rowset_id
            out = merge_rowsets(
                self.directory,
                rowset_id,
                self.schema,
                inputs,
                int(snapshot),
                history_cutoff,
                fsync=self._options.fsync,
            )
            output = None if out.meta is None else DiskRowSet(self.directory, self.schema, out.meta)
            kept = [r for r in self.rowsets if r not in inputs]
            metas = [r.meta for r in kept] + ([output.meta] if output is not None else [])
            self._write_metadata_doc(metas, rowset_id + 1, self.flushed_ts)
            with self._lock:
                carry_mutations(inputs, out, output, self._memrowset)
                self.rowsets = kept + ([output] if output is not None else [])
                self.next_rowset_id = rowset_id + 1
            remove_rowset_dirs(inputs)
            if self._options.fsync:
                fsync_dir(self.directory)
            return out

    def gc_undo(self, history_cutoff: int) -> int:
        """Remove UNDO files holding only history older than ``history_cutoff``; return the
        bytes freed."""
        assert self.directory is not None, "a tablet with files has a directory"
        freed = 0
        with self.maintenance_lock:
            for rowset in [] if self.retired else list(self.rowsets):
                out = undo_gc(rowset.meta, history_cutoff)
                if out is not None:
                    freed += sum(d.size_bytes for d in rowset.undo if d.path.name in out.obsolete)
                    self._swap_rowset_files(rowset, out)
        return freed

    def _swap_rowset_files(self, rowset: DiskRowSet, out: CompactionOutput) -> None:
        """Name ``out``'s files in the metadata, swap them into ``rowset`` under the tablet
        lock, then remove the files it replaced (caller holds the maintenance lock)."""
        assert self.directory is not None, "a tablet with files has a directory"
        replacement = DiskRowSet(self.directory, self.schema, out.meta)
        metas = [out.meta if r is rowset else r.meta for r in self.rowsets]
        self._write_metadata_doc(metas, self.next_rowset_id, self.flushed_ts)
        with self._lock:
            rowset.install(replacement)
        for name in out.obsolete:
            (rowset.directory / name).unlink(missing_ok=True)
        if self._options.fsync:
            fsync_dir(rowset.directory)

    def _write_metadata_doc(
        self, rowset_metas: list[dict[str, Any]], next_rowset_id: int, flushed_ts: Timestamp
    ) -> None:
        """Replace the metadata file with one naming ``rowset_metas`` (caller holds the
        maintenance lock, so nothing else changes what the file names meanwhile)."""
        assert self.directory is not None, "a tablet with files has a directory"
        doc = {
            **self.metadata_doc(),
            "flushed_ts": int(flushed_ts),
            "next_rowset_id": next_rowset_id,
            "rowsets": rowset_metas,
        }
        data = checksummed_json(doc, indent=2)
        atomic_write(self.directory / "metadata.json", data, fsync=self._options.fsync)

    @property
    def delta_memstore_rows(self) -> int:
        return sum(len(r.dms) for r in list(self.rowsets))

    def bytes_on_disk(self) -> int:
        return sum(r.size_bytes for r in list(self.rowsets))

    @property
    def memrowset_rows(self) -> int:
        frozen = self._frozen
        return len(self._memrowset) + (len(frozen) if frozen is not None else 0)

    def flush_pressure(self, row_threshold: int, byte_threshold: int) -> tuple[int, int]:
        """(MemRowSet bytes, row-by-row rows) as the flush thresholds are to compare them:
        less what the last flush kept for transactions still open (flush.InFlightHold)."""
        rows, nbytes = self.row_by_row_rows, self.memrowset_bytes
        hold = self.flush_hold
        if hold is None:
            return nbytes, rows
        if not hold.holding():
            self.flush_hold = None
            return nbytes, rows
        rows, nbytes = hold.discount(rows, nbytes, row_threshold, byte_threshold)
        return nbytes, rows

    @property
    def row_by_row_rows(self) -> int:
        """Unflushed rows a scan reads one by one: the MemRowSets' map rows (segment rows
        are read as columns) and the DeltaMemStores' rows; what the row threshold counts."""
        frozen = self._frozen
        mrs_rows = self._memrowset.map_rows + (frozen.map_rows if frozen is not None else 0)
        return mrs_rows + self.delta_memstore_rows

    def write_metadata(self) -> None:
        """Replace the metadata file atomically (caller holds the lock)."""
        assert self.directory is not None, "a tablet with files has a directory"
        data = checksummed_json(self.metadata_doc(), indent=2)
        atomic_write(self.directory / "metadata.json", data, fsync=self._options.fsync)

    def _locate(self, key: bytes) -> tuple[DiskRowSet, int] | None:
        for rowset in self.rowsets:
            rowid = rowset.find(key)
            if rowid is not None:
                return rowset, rowid
        return None

    def _mrs_for(self, key: bytes) -> MemRowSet | None:
        """The MemRowSet (live or frozen) holding ``key``, if one does."""
        if self._memrowset.contains(key):
            return self._memrowset
        frozen = self._frozen
        if frozen is not None and frozen.contains(key):
            return frozen
        return None

    def _mrs_of(self, key: bytes) -> MemRowSet:
        """The MemRowSet holding ``key``, else the live one (where a new row goes).  Not
        ``_mrs_for(key) or ...``: a MemRowSet's truth is its length, a sum over its segments."""
        found = self._mrs_for(key)
        return self._memrowset if found is None else found

    def _probe(self, key: bytes, txn: TxnState) -> tuple[Probe, tuple[DiskRowSet, int] | None]:
        mrs = self._mrs_for(key)
        if mrs is not None:
            return mrs.probe(key, txn), None
        location = self._locate(key)
        if location is None:
            return Probe(None, False), None
        return location[0].probe(location[1], txn), location

    @property
    def memrowset(self) -> MemRowSet:
        return self._memrowset

    def insert(
        self,
        txn: TxnState,
        batch: pa.RecordBatch,
        wait_for: WaitFor,
        constraint_name: str | None = None,
    ) -> WriteResult:
        """Insert every row of ``batch`` (all columns), or none if any key is live (23505)."""
        batch = conform_batch(batch, self.schema, fill=True)
        columns = self._columns_of(batch, self.schema.columns, require_all=True)
        self._check_cell_sizes(columns)
        keys = self._encode_keys(columns)
        if len(set(keys)) != len(keys):
            raise self._unique_violation(columns, _first_duplicate(keys), constraint_name)
        if len(keys) >= SEGMENT_MIN_ROWS:
            segment = InsertSegment.build(
                txn, self.schema, keys, [columns[c.id] for c in self.schema.columns]
            )
            with self._lock:
                if self._all_absent(keys, segment.keys):
                    # The bulk load's case (COPY, INSERT ... SELECT, batches of new keys):
                    # the batch joins the MemRowSet as one segment, no row objects.
                    self._memrowset.add_segment(segment)
                    self._note_inserted(segment.nbytes, 0)
                    return WriteResult(len(keys), [], segment=segment)
        bulk = paused_gc() if len(keys) >= BULK_ROWS else nullcontext()
        with bulk:
            values = [to_storage_values(columns[c.id], c.type) for c in self.schema.columns]
            # Per-row Python: MemRowSet rows are stored row-shaped (an edge, like Kudu's
            # row inserts).
            rows = list(zip(*values))
        mrs = self._memrowset
        while True:
            with self._lock:
                mrs = self._memrowset
                if self._all_absent(keys):
                    # A small batch of new keys: one sorted merge into the MemRowSet.
                    with paused_gc() if len(keys) >= BULK_ROWS else nullcontext():
                        mrs.insert_new(keys, rows, txn)
                    self._note_inserted(_rows_bytes(batch, rows), len(keys))
                    return WriteResult(len(keys), keys)
                blocker = None
                blocked_key = b""
                locations = []
                for row_idx, (probe, location) in enumerate(
                    batch_probe.probe_many(self.rowsets, keys, txn, self._mrs_for, self._probe)
                ):
                    if probe.blocker is not None:
                        blocker, blocked_key = probe.blocker, keys[row_idx]
                        break
                    if probe.is_live:
                        raise self._unique_violation(columns, row_idx, constraint_name)
                    locations.append(location)
                if blocker is None:
                    for key, row, location in zip(keys, rows, locations):
                        if location is None:
                            self._mrs_of(key).insert(key, row, txn)
                        else:
                            location[0].reinsert(location[1], row, txn)
                    self._note_inserted(_rows_bytes(batch, rows), len(keys))
                    return WriteResult(len(keys), keys)
            wait_for(blocker, blocked_key)

    def drop_segment(self, segment: InsertSegment) -> None:
        """Undo a bulk insert whole (its transaction, or the savepoint before it, rolled
        back), wherever a flush has moved its segment."""
        with self._lock:
            self._memrowset.drop_segment(segment)
            if self._frozen is not None:
                self._frozen.drop_segment(segment)

    def _all_absent(self, keys: list[bytes], sorted_keys: np.ndarray | None = None) -> bool:
        """Whether no rowset has any of ``keys`` (caller holds the tablet lock);
        ``sorted_keys``: the same keys ascending, if the caller has them."""
        if self._memrowset.holds_any(keys, sorted_keys):
            return False
        if self._frozen is not None and self._frozen.holds_any(keys, sorted_keys):
            return False
        if not self.rowsets:
            return True
        if len(keys) < batch_probe.BATCH_PROBE_MIN:
            return all(self._locate(key) is None for key in keys)
        ascending = sorted(keys) if sorted_keys is None else sorted_keys.tolist()
        return all(
            location is None for location in batch_probe.locate_sorted(self.rowsets, ascending)
        )

    def _note_inserted(self, nbytes: int, count: int) -> None:
        self.memrowset_bytes += nbytes + _ROW_OVERHEAD_BYTES * count
        if self.unflushed_since is None:
            self.unflushed_since = time.monotonic()

    def update(
        self,
        txn: TxnState,
        batch: pa.RecordBatch,
        wait_for: WaitFor,
        conflict_ts: Timestamp | None = None,
        mode: RowLockMode = RowLockMode.NO_KEY_UPDATE,
    ) -> WriteResult:
        """Set the non-key columns of ``batch`` on the rows its keys name; skip absent rows.

        With ``conflict_ts``, a row another transaction changed after that timestamp is not
        written but listed in ``WriteResult.conflicts`` (the SQL layer re-reads it, or fails
        with 40001 under REPEATABLE READ).  ``mode`` is the row lock the write takes:
        FOR UPDATE when it changes a unique column, which FOR KEY SHARE lockers must wait
        for; otherwise FOR NO KEY UPDATE, which they need not."""
        batch = conform_batch(batch, self.schema, fill=False)
        key_ids = set(self.schema.key_column_ids)
        named = [self._column_schema(name) for name in batch.schema.names]
        changed = [c for c in named if c.id not in key_ids]
        columns = self._columns_of(batch, [*self.schema.key_columns, *changed])
        self._check_cell_sizes(columns)
        keys = self._encode_keys(columns)
        indexes = [self.schema.index_of(c.id) for c in changed]
        values = [to_storage_values(columns[c.id], c.type) for c in changed]
        # Per-row Python: each row becomes one UPDATE mutation in its chain (an edge).
        changes: list[Row] | None = (
            [tuple(zip(indexes, row)) for row in zip(*values)] if changed else None
        )
        return self._mutate(txn, keys, wait_for, changes, conflict_ts=conflict_ts, mode=mode)

    def delete(
        self,
        txn: TxnState,
        batch: pa.RecordBatch,
        wait_for: WaitFor,
        conflict_ts: Timestamp | None = None,
    ) -> WriteResult:
        """Delete the rows whose keys ``batch`` holds (other columns are ignored);
        ``conflict_ts`` as for ``update``."""
        columns = self._columns_of(batch, self.schema.key_columns)
        keys = self._encode_keys(columns)
        return self._mutate(
            txn, keys, wait_for, None, delete=True, conflict_ts=conflict_ts,
            mode=RowLockMode.UPDATE,
        )  # fmt: skip

    def _mutate(
        self,
        txn: TxnState,
        keys: list[bytes],
        wait_for: WaitFor,
        changes: list[tuple[object, ...]] | None,
        *,
        delete: bool = False,
        conflict_ts: Timestamp | None = None,
        mode: RowLockMode = RowLockMode.NO_KEY_UPDATE,
    ) -> WriteResult:
        while True:
            with self._lock, self._segments_known(keys):
                blocker = None
                conflicts = []
                locks = self.row_locks
                probes, locations, changed = batch_probe.probe_batch(
                    self.rowsets,
                    keys,
                    txn,
                    conflict_ts,
                    self._mrs_for,
                    self._probe,
                    self._changed_after,
                )
                for row_idx, key in enumerate(keys):
                    blocker = probes[row_idx].blocker
                    if blocker is None and locks:
                        blocker = locks.conflicting(key, txn, mode)
                    if blocker is not None:
                        break
                    if changed is not None and changed[row_idx]:
                        conflicts.append(row_idx)
                if blocker is None:
                    written = []
                    skip = set(conflicts)
                    pending = batch_probe.pending_appends(locations, skip)
                    for row_idx, (key, location) in enumerate(zip(keys, locations)):
                        if row_idx in skip:
                            continue
                        change = changes[row_idx] if changes else ()
                        if location is not None:
                            rowset, rowid = location
                            is_live = probes[row_idx].is_live
                            if pending is not None and rowid not in rowset.dms.chains:
                                # Judged under this lock and no other row of the batch is
                                # this one: appended with the rowset's others below.
                                if is_live:
                                    entry = pending.setdefault(id(rowset), (rowset, [], []))
                                    entry[1].append(rowid)
                                    entry[2].append(change)
                                done = is_live
                            else:
                                mutation = (
                                    Mutation(MutationKind.DELETE, txn, None)
                                    if delete
                                    else Mutation(MutationKind.UPDATE, txn, change)
                                )
                                done = rowset.append_probed(rowid, mutation, is_live)
                        elif delete:
                            done = self._mrs_of(key).delete(key, txn)
                        else:
                            done = self._mrs_of(key).update(key, change, txn)
                        if done:
                            written.append(key)
                    for rowset, rowids, row_changes in (pending or {}).values():
                        kind = MutationKind.DELETE if delete else MutationKind.UPDATE
                        rowset.dms.append_batch(
                            rowids,
                            kind,
                            txn,
                            None if delete else row_changes,  # type: ignore[arg-type]
                        )
                    if written and self.unflushed_since is None:
                        self.unflushed_since = time.monotonic()
                    if mode is RowLockMode.UPDATE and not delete:
                        locks.add(written, txn, mode)
                    return WriteResult(len(written), written, conflicts)
            wait_for(blocker, key)

    @contextmanager
    def _segments_known(self, keys: list[bytes]) -> Iterator[None]:
        """``MemRowSet.know_segments`` of the live and frozen MemRowSets while a batch
        write runs under the lock."""
        held = [m for m in (self._memrowset, self._frozen) if m is not None]
        for mrs in held:
            mrs.know_segments(keys)
        try:
            yield
        finally:
            for mrs in held:
                mrs.forget_segments()

    def lock_rows(
        self,
        txn: TxnState,
        batch: pa.RecordBatch,
        mode: RowLockMode,
        wait_for: WaitFor,
        conflict_ts: Timestamp | None = None,
    ) -> WriteResult:
        """Lock the rows whose keys ``batch`` holds in ``mode`` without writing them, after
        waiting for every conflicting holder; skip absent rows.  A provisional write is a
        lock too: a delete holds FOR UPDATE, an update FOR NO KEY UPDATE (or what the row
        lock table says its writer holds).  ``conflict_ts`` as for ``update``; such rows
        are locked all the same, for the caller's re-read."""
        columns = self._columns_of(batch, self.schema.key_columns)
        keys = self._encode_keys(columns)
        while True:
            with self._lock:
                blocker = None
                locked: list[bytes] = []
                conflicts: list[int] = []
                for row_idx, (probe, location) in enumerate(
                    batch_probe.probe_many(self.rowsets, keys, txn, self._mrs_for, self._probe)
                ):
                    key = keys[row_idx]
                    held = probe.blocker
                    if held is not None:
                        writing = RowLockMode.NO_KEY_UPDATE if probe.is_live else RowLockMode.UPDATE
                        if writing.conflicts_with(mode):
                            blocker = held
                            break
                    blocker = self.row_locks.conflicting(key, txn, mode)
                    if blocker is not None:
                        break
                    if conflict_ts is not None and self._changed_after(key, location, conflict_ts):
                        conflicts.append(row_idx)
                    if probe.is_live:
                        locked.append(key)
                if blocker is None:
                    self.row_locks.add(locked, txn, mode)
                    return WriteResult(len(locked), locked, conflicts)
            wait_for(blocker, key)

    def release_row_locks(self, txn: TxnState, keys: Iterable[bytes]) -> None:
        """Drop ``txn``'s entries in the row lock table (its transaction ended)."""
        with self._lock:
            self.row_locks.release(keys, txn)

    def restore_row_locks(self, txn: TxnState, modes: dict[bytes, RowLockMode | None]) -> None:
        """Put ``txn``'s row lock table entries back as they were at a savepoint."""
        with self._lock:
            self.row_locks.restore(modes, txn)

    def _changed_after(
        self, key: bytes, location: tuple[DiskRowSet, int] | None, ts: Timestamp
    ) -> bool:
        if location is None:
            return self._mrs_of(key).changed_after(key, ts)
        return location[0].changed_after(location[1], int(ts))

    def remove_provisional(
        self, txn: TxnState, keys: Iterable[bytes], *, newest_only: bool = False
    ) -> None:
        """Undo ``txn``'s uncommitted writes at ``keys`` (rollback); with ``newest_only``, just
        its newest entry at each key: one write undone (ROLLBACK TO SAVEPOINT walks its writes
        back newest first)."""
        with self._lock:
            for key in keys:
                mrs = self._mrs_for(key)
                if mrs is not None:
                    if newest_only:
                        mrs.pop_provisional(key, txn)
                    else:
                        mrs.remove_provisional(key, txn)
                    continue
                location = self._locate(key)
                if location is None:
                    continue
                rowset, rowid = location
                if newest_only:
                    rowset.pop_provisional(rowid, txn)
                else:
                    rowset.remove_provisional(rowid, txn)

    def scan(
        self,
        spec: ScanSpec,
        snapshot: Timestamp,
        reader: TxnState | None,
        stats: ScanStats | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Yield the rows visible at ``snapshot`` to ``reader`` matching ``spec``: the
        MemRowSet's in key order, then each DiskRowSet's in rowid (key) order."""
        for column_id in (*spec.projection, *(p.column_id for p in spec.predicates)):
            self._column_schema(column_id)
        with self._lock:
            memrowsets = (
                [self._memrowset] if self._frozen is None else [self._memrowset, self._frozen]
            )
            captures = [m.capture_segments() for m in memrowsets]
            rowsets = list(self.rowsets)
        return self._scan(
            spec, snapshot, reader, stats or ScanStats(), list(zip(memrowsets, captures)), rowsets
        )

    def read_keys(
        self,
        keys: list[bytes],
        columns: tuple[ColumnId, ...],
        snapshot: Timestamp,
        reader: TxnState | None,
        stats: ScanStats | None = None,
    ) -> pa.RecordBatch:
        """Kudu's point read: ``columns`` of the rows whose encoded primary keys are ``keys``,
        as a scan at ``snapshot`` by ``reader`` would see them (``point_read``)."""
        if self._checked_columns.get(columns) is not self.schema:
            for column_id in columns:
                self._column_schema(column_id)
            if len(self._checked_columns) >= 256:
                self._checked_columns.clear()
            self._checked_columns[columns] = self.schema
        with self._lock:
            counted = self._unasked if stats is None else stats
            before = counted.delta_stores_read
            memrowsets = (
                [self._memrowset] if self._frozen is None else [self._memrowset, self._frozen]
            )
            batch = point_read.read_keys(
                self.schema, memrowsets, self.rowsets, keys, columns, snapshot, reader, counted
            )
            self.delta_lookups += counted.delta_stores_read - before
        return batch

    def read_key_range(
        self,
        key_range: KeyRange,
        projection: tuple[ColumnId, ...],
        snapshot: Timestamp,
        reader: TxnState | None,
        most: int,
        stats: ScanStats | None = None,
    ) -> pa.RecordBatch | None:
        """The rows in an encoded, non-empty ``key_range`` (every one wanted), read as point
        reads (``point_read.read_range``); None when a rowset holds more than ``most`` rows
        in it (a scan is then the better read)."""
        for column_id in projection:
            self._column_schema(column_id)
        stats = stats or ScanStats()
        with self._lock:
            memrowsets = (
                [self._memrowset] if self._frozen is None else [self._memrowset, self._frozen]
            )
            return point_read.read_range(
                self.schema, memrowsets, self.rowsets, key_range, projection, snapshot,
                reader, stats, most,
            )  # fmt: skip

    def keys_in_range(
        self,
        key_range: KeyRange,
        snapshot: Timestamp,
        reader: TxnState | None,
        most: int,
        stats: ScanStats | None = None,
    ) -> list[bytes] | None:
        """``read_key_range`` of no columns: the encoded keys of the rows in ``key_range``
        (``point_read.keys_in_range``), as an index lookup wants its entries."""
        with self._lock:
            memrowsets = (
                [self._memrowset] if self._frozen is None else [self._memrowset, self._frozen]
            )
            counted = self._unasked if stats is None else stats
            return point_read.keys_in_range(
                memrowsets, self.rowsets, key_range, snapshot, reader, counted, most
            )

    def _scan(
        self,
        spec: ScanSpec,
        snapshot: Timestamp,
        reader: TxnState | None,
        stats: ScanStats,
        memrowsets: list[tuple[MemRowSet, Capture]],
        rowsets: list[DiskRowSet],
    ) -> Iterator[pa.RecordBatch]:
        remaining = spec.limit
        if remaining is not None and remaining <= 0:
            return
        self.scans += 1
        before = stats.delta_stores_read
        try:
            yield from self._scan_sources(spec, snapshot, reader, stats, memrowsets, rowsets)
        finally:
            self.delta_lookups += stats.delta_stores_read - before

    def _scan_sources(
        self,
        spec: ScanSpec,
        snapshot: Timestamp,
        reader: TxnState | None,
        stats: ScanStats,
        memrowsets: list[tuple[MemRowSet, Capture]],
        rowsets: list[DiskRowSet],
    ) -> Iterator[pa.RecordBatch]:
        remaining = spec.limit
        key_range = spec.key_range(self.schema)
        if key_range.is_empty:
            return
        unlimited = dataclasses.replace(spec, limit=None)
        sources = [
            m.scan(unlimited, snapshot, reader, self._options.scan_batch_rows, capture)
            for m, capture in memrowsets
        ]
        # A DiskRowSet reads only ``key_range``: predicates it implies need no check there.
        residual = dataclasses.replace(
            unlimited, predicates=spec.beyond_key(self.schema, key_range)
        )
        sources += [
            self._locked(r.scan(residual, key_range, snapshot, reader, stats)) for r in rowsets
        ]
        for number, source in enumerate(sources):
            for batch in source:
                if number < len(memrowsets):
                    stats.memrowset_rows_scanned += batch.num_rows
                if remaining is not None:
                    batch = batch.slice(0, remaining)
                    remaining -= batch.num_rows
                stats.rows_returned += batch.num_rows
                if batch.num_rows:
                    yield batch
                if remaining == 0:
                    return

    def _locked(self, source: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Run each step of a DiskRowSet scan under the tablet lock (its DeltaMemStore changes)."""
        while True:
            with self._lock:
                batch = next(source, None)
            if batch is None:
                return
            yield batch

    def rowset_stats(self) -> dict[str, object]:
        """Per-DiskRowSet statistics and tablet totals (rows, bytes on disk)."""
        with self._lock:
            rowsets = [r.stats() for r in self.rowsets]
            memrowset_rows = self.memrowset_rows
        infos = [
            RowSetInfo(r["rowset_id"], r["min_key"], r["max_key"], r["bytes_on_disk"], r["rows"], 0)
            for r in rowsets
        ]
        return {
            "tablet_id": self.tablet_id,
            "average_rowset_height": average_height(intervals(infos)),
            "scans": self.scans,
            "delta_lookups": self.delta_lookups,
            "memrowset_rows": memrowset_rows,
            "memrowset_bytes_estimate": self.memrowset_bytes,
            "rowsets": rowsets,
            "disk_rows": sum(r["rows"] for r in rowsets),
            "bytes_on_disk": sum(r["bytes_on_disk"] for r in rowsets),
            "flushed_ts": int(self.flushed_ts),
        }

    def _check_cell_sizes(self, columns: dict[int, pa.Array]) -> None:
        """Cells over 64 KiB are 54000, before anything is written.  A column whose whole
        value buffer is within the limit holds no such cell (the common case, told without
        an Arrow kernel call, which costs a short write tens of microseconds)."""
        for column_id, array in columns.items():
            column = self.schema.column(column_id)
            if not (column.type.is_string or column.type.kind.value == "binary") or not len(array):
                continue
            data = array.buffers()[2]
            if data is None or data.size <= MAX_CELL_BYTES:
                continue
            if (pc.max(pc.binary_length(array)).as_py() or 0) > MAX_CELL_BYTES:
                raise ProgramLimitExceeded(
                    f'value for column "{column.name}" is larger than {MAX_CELL_BYTES} bytes'
                )

    def _column_schema(self, column_id: int | str) -> ColumnSchema:
        """The column a batch field or ScanSpec names (InternalError if the tablet has none)."""
        try:
            return self.schema.column(int(column_id))
        except (KeyError, ValueError):
            raise InternalError(f"tablet {self.tablet_id} has no column {column_id!r}") from None

    def _columns_of(
        self,
        batch: pa.RecordBatch,
        wanted: tuple[ColumnSchema, ...] | list[ColumnSchema],
        *,
        require_all: bool = False,
    ) -> dict[int, pa.Array]:
        """Pick ``wanted`` columns out of ``batch``, cast to their types and checked for NULLs."""
        names = batch.schema.names
        if require_all:
            expected = {str(c.id) for c in self.schema.columns}
            if set(names) != expected or len(names) != len(expected):
                raise InternalError(
                    f"an insert into tablet {self.tablet_id} needs exactly the columns "
                    f"{sorted(expected)}, got {names}"
                )
        out: dict[int, pa.Array] = {}
        for column in wanted:
            name = str(column.id)
            if name not in names:
                raise InternalError(f"the batch for tablet {self.tablet_id} lacks column {name}")
            array = batch.column(names.index(name))
            if array.type != column.type.arrow_type:
                try:
                    array = array.cast(column.type.arrow_type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise NumericValueOutOfRange(
                        f'value out of range for column "{column.name}"', detail=str(exc)
                    ) from exc
            if array.null_count and not column.nullable:
                raise NotNullViolation(
                    f'null value in column "{column.name}" violates not-null constraint'
                )
            out[column.id] = array
        return out

    def _encode_keys(self, columns: dict[int, pa.Array]) -> list[bytes]:
        arrays = [columns[c.id] for c in self.schema.key_columns]
        if self._integer_key is not None and len(arrays[0]) <= _PYTHON_ENCODED:
            return encode_integer_keys(arrays[0].to_pylist(), self._integer_key)
        if len(arrays[0]) <= _PYTHON_ENCODED:
            types = self._key_types
            rows = zip(*(a.to_pylist() for a in arrays), strict=True)
            keys = [encode_key(row, types) for row in rows]
        else:
            keys = encode_keys(arrays, self._key_types)
        if keys and max(map(len, keys)) > MAX_KEY_BYTES:
            raise ProgramLimitExceeded(f"encoded primary key is larger than {MAX_KEY_BYTES} bytes")
        return keys

    def _unique_violation(
        self, columns: dict[int, pa.Array], row_idx: int, constraint_name: str | None
    ) -> UniqueViolation:
        key_columns = self.schema.key_columns
        names = ", ".join(c.name for c in key_columns)
        values = ", ".join(_pg_text(columns[c.id][row_idx].as_py()) for c in key_columns)
        name = constraint_name or "primary key"
        return UniqueViolation(
            f'duplicate key value violates unique constraint "{name}"',
            detail=f"Key ({names})=({values}) already exists.",
        )


def _first_duplicate(keys: list[bytes]) -> int:
    seen: set[bytes] = set()
    for row_idx, key in enumerate(keys):
        if key in seen:
            return row_idx
        seen.add(key)
    raise AssertionError("called only when keys repeat")


def _pg_text(value: object) -> str:
    """Render a key value roughly as PostgreSQL's output function would, for error details."""
    if isinstance(value, bytes):
        return "\\x" + value.hex()
    if isinstance(value, dt.datetime):
        text = value.isoformat(sep=" ")
        return text.removesuffix(":00") if value.tzinfo is not None else text
    return str(value)


def never_wait(holder: TxnState, key: bytes) -> None:
    """A ``wait_for`` for WAL replay, where every write is already committed."""
    raise DataCorrupted(f"replayed write found an uncommitted row version of {holder}")


_FEW_ROWS = 4


def _rows_bytes(batch: pa.RecordBatch, rows: list[tuple[object, ...]]) -> int:
    """About the bytes ``rows`` (``batch``'s, as storage values) hold, for the MemRowSet's
    size estimate: a few rows by their values, since ``RecordBatch.nbytes`` costs a one-row
    write some 15 microseconds (it looks for buffers shared between columns)."""
    if len(rows) > _FEW_ROWS:
        return int(batch.nbytes)
    return sum(
        len(v) + 4 if isinstance(v, (str, bytes)) else 8  # offsets + data, or one word
        for row in rows
        for v in row
    )
