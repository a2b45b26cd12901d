"""StorageEngine: opens a data directory, recovers it, and hands out tablets and transactions.

Opening runs recovery: create missing directories, load every tablet's
metadata, then replay the WAL on top.  Each WAL record is one committed
transaction; its writes are applied as committed at its timestamp, records
naming tablets that no longer exist are skipped, and the clock moves past
the newest replayed timestamp.  There is one WAL, one clock and one
MvccManager per database, so a transaction spanning tablets commits
atomically.

Thread-safe: many sessions share one engine, each running its own
transactions on its own thread.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import shutil
import threading
import weakref
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from storage import commit_record
from storage.commit_pipeline import CommitPipeline
from storage.commit_record import OpKind
from storage.data_type import TabletId
from storage.errors import DataCorrupted, DbError, FeatureNotSupported, UndefinedTable, io_error
from storage.fs import TABLET_METADATA_FILE, DataDirLayout, fsync_dir, remove_dir
from storage.key_encoding import is_key_type
from storage.maintenance_manager import MaintenanceManager, MaintenanceOp, OpRecord, OpTotals
from storage.maintenance_ops import tablet_ops
from storage.mvcc import TxnState
from storage.options import StorageOptions
from storage.prepared import PREPARED_DIR, PreparedTransactions
from storage.schema import Schema
from storage.tablet.tablet import Tablet, never_wait
from storage.tablet_registry import TabletRegistry
from storage.timestamp import HybridClock, Timestamp
from storage.transaction import Transaction
from storage.wal import Wal

log = logging.getLogger(__name__)


def release_freed_memory() -> None:
    """Give the memory a flush freed back to the system.

    A flush drops a whole MemRowSet and the Arrow arrays built to write it; Arrow's
    allocator (mimalloc) and glibc's malloc both keep freed pages for reuse, so without
    this the server's resident memory stays at its high-water mark after every flush.
    """
    pa.default_memory_pool().release_unused()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


_LIBC = _libc()


class StorageEngine:
    """One database's storage: its tablets, WAL, clock and MVCC state.

    It builds the ``CommitPipeline`` and ``TabletRegistry`` that its transactions see
    instead of the engine; ``mvcc``, ``wal``, ``waits_for``, ``commit_lock`` and
    ``recent_scans`` are the pipeline's.
    """

    def __init__(
        self,
        layout: DataDirLayout,
        options: StorageOptions,
        wal: Wal,
        clock: HybridClock,
        tablets: dict[TabletId, Tablet],
        offline: dict[TabletId, str] | None = None,
    ) -> None:
        self.layout = layout
        self.options = options
        self.pipeline = CommitPipeline(options, clock, wal, self.maybe_flush)
        self.registry = TabletRegistry(tablets, offline)
        self.wal = wal
        self.clock = clock
        self.mvcc = self.pipeline.mvcc
        self.waits_for = self.pipeline.waits_for
        self.commit_lock = self.pipeline.commit_lock
        self.recent_scans = self.pipeline.recent_scans
        """(tablet id, ScanSpec, ScanStats) of the latest scans, newest last, for a system view."""
        self._flush_lock = threading.Lock()
        self.replayed_catalog: bytes | None = None
        """The catalog document of the last CATALOG marker replay met (the catalog checks
        whether its own file is older: a crash between the WAL and the file)."""
        self.replayed_documents: dict[str, bytes] = {}
        """The last document of each name DOCUMENTS markers carried in the replayed WAL (the
        role and privilege stores check whether their files are older)."""
        self.wal_keepers: list[Callable[[], bool]] = []
        """Asked before WAL segments are removed: one returning True keeps them all (the
        catalog, while a document its WAL record holds is not yet in its file)."""
        self.prepared = PreparedTransactions(layout.root / PREPARED_DIR, fsync=options.fsync)
        """Transactions prepared for two-phase commit (PREPARE TRANSACTION), by gid."""
        self._ops: dict[TabletId, list[MaintenanceOp]] = {}
        this = weakref.ref(self)
        self.maintenance = MaintenanceManager(
            lambda: None if (engine := this()) is None else engine._maintenance_ops(),
            options.maintenance_threads,
            options.maintenance_polling_interval_ms,
        )

    def _maintenance_ops(self) -> list[MaintenanceOp]:
        """Every tablet's maintenance ops (built once per tablet)."""
        ops = []
        live = set()
        for tablet in self.registry.tablets():
            live.add(tablet.tablet_id)
            found = self._ops.get(tablet.tablet_id)
            if found is None or getattr(found[0], "tablet", None) is not tablet:
                found = tablet_ops(tablet, self.options, self.mvcc.safe_time, self.history_cutoff)
                self._ops[tablet.tablet_id] = found
            ops += found
        for gone in set(self._ops) - live:
            del self._ops[gone]
        return ops

    def maintenance_status(self) -> list[OpRecord]:
        """Registered, running and recent maintenance ops (the nyala_maintenance view)."""
        return self.maintenance.status()

    def maintenance_totals(self) -> dict[str, OpTotals]:
        """Per op kind, runs, failures, seconds and bytes since the engine opened (/metrics)."""
        return self.maintenance.totals()

    @classmethod
    def open(cls, data_dir: Path, options: StorageOptions | None = None) -> StorageEngine:
        """Open (creating if needed) the database in ``data_dir`` and replay its WAL."""
        options = options or StorageOptions()
        layout = DataDirLayout(Path(data_dir))
        layout.create(fsync=options.fsync)
        tablets, offline = _load_tablets(layout, options)
        wal = Wal.open(layout.wal_dir, options)
        clock = HybridClock()
        engine = cls(layout, options, wal, clock, tablets, offline)
        engine._replay()
        engine.prepared.recover(engine.wal, engine.begin)
        engine.maintenance.start()
        return engine

    def _replay(self) -> None:
        records = 0
        for payload in self.wal.replay():
            record = commit_record.decode(payload)
            self.clock.update(record.commit_ts)
            state = TxnState.committed_at(record.commit_ts)
            for op in record.ops:
                if op.kind is OpKind.CATALOG:
                    self.replayed_catalog = commit_record.catalog_document(op)
                    continue
                if op.kind is OpKind.DOCUMENTS:
                    self.replayed_documents.update(commit_record.documents_of(op))
                    continue
                tablet = self.registry.find(op.tablet_id)
                if tablet is None or record.commit_ts <= tablet.flushed_ts:
                    continue
                try:
                    if op.kind is OpKind.INSERT:
                        tablet.insert(state, op.batch, never_wait)
                    elif op.kind is OpKind.UPDATE:
                        tablet.update(state, op.batch, never_wait)
                    else:
                        tablet.delete(state, op.batch, never_wait)
                except DbError as exc:
                    if isinstance(exc, DataCorrupted):
                        raise
                    raise DataCorrupted(
                        f"WAL record at {record.commit_ts} does not apply to tablet "
                        f"{op.tablet_id}: {exc.message}"
                    ) from exc
            records += 1
        log.info("replayed %d WAL records into %d tablets", records, len(self.registry))

    def create_tablet(self, tablet_id: TabletId, schema: Schema) -> None:
        """Create an empty tablet; it is durable when this returns."""
        for column in schema.key_columns:
            if not is_key_type(column.type):
                raise FeatureNotSupported(
                    f'column "{column.name}" of type {column.type.pg_name()} '
                    "cannot be part of a primary key"
                )
        try:
            self.registry.add(
                tablet_id, lambda: Tablet.create(self.layout, tablet_id, schema, self.options)
            )
        except OSError as exc:
            shutil.rmtree(self.layout.tablet_dir(tablet_id), ignore_errors=True)
            raise io_error(f"could not create tablet {tablet_id}", exc) from exc

    def drop_tablet(self, tablet_id: TabletId) -> None:
        """Remove a tablet and its files; WAL records naming it are skipped from now on.  A
        flush or compaction of it that is running finishes first (its files are removed with
        the rest), and one that chose it but has not started finds it retired.  An offline
        tablet is removed as it is."""
        if tablet_id in self.registry.offline:
            self.registry.remove(tablet_id, lambda: self._remove_tablet_files(tablet_id))
            return
        tablet = self.registry.tablet(tablet_id)
        with tablet.maintenance_lock:
            tablet.retired = True
            self.registry.remove(tablet_id, lambda: self._remove_tablet_files(tablet_id))

    def _remove_tablet_files(self, tablet_id: TabletId) -> None:
        metadata = self.layout.tablet_metadata_path(tablet_id)
        # Metadata goes first: a directory without it is debris that open() removes.
        metadata.unlink(missing_ok=True)
        if self.options.fsync:
            fsync_dir(metadata.parent)
        remove_dir(self.layout.tablet_dir(tablet_id), fsync=self.options.fsync)

    def alter_tablet(self, tablet_id: TabletId, schema: Schema) -> None:
        """Give a tablet a new schema (ALTER TABLE); durable when this returns.  When the
        disk refuses the metadata (53100, 58030) the tablet keeps its schema."""
        try:
            self.tablet(tablet_id).alter_schema(schema)
        except OSError as exc:
            raise io_error(f"could not write the metadata of tablet {tablet_id}", exc) from exc

    def has_tablet(self, tablet_id: TabletId) -> bool:
        return tablet_id in self.registry

    def tablet_ids(self) -> list[TabletId]:
        return self.registry.tablet_ids()

    def schema(self, tablet_id: TabletId) -> Schema:
        return self.tablet(tablet_id).schema

    def tablet(self, tablet_id: TabletId) -> Tablet:
        """The tablet with this id (UndefinedTable if there is none)."""
        return self.registry.tablet(tablet_id)

    def history_cutoff(self, now: Timestamp) -> int:
        """The oldest timestamp whose history is still kept, seen from ``now``."""
        return self.pipeline.history_cutoff(now)

    def check_snapshot(self, snapshot: Timestamp) -> None:
        """Refuse a time-travel read older than the history window (72000) or in the future;
        wait until every commit at or below it is applied."""
        self.pipeline.check_snapshot(snapshot)

    def checkpoint(self) -> int:
        """Flush every tablet at the current safe time and delete the WAL segments that only
        hold flushed writes; return the number of segments removed."""
        self.registry.check_open()
        with self._flush_lock:
            snapshot = self.mvcc.safe_time()
            cutoff = self.history_cutoff(snapshot)
            for tablet_id in self.tablet_ids():
                try:
                    self.tablet(tablet_id).flush(snapshot, cutoff)
                except UndefinedTable:
                    continue
                except OSError:
                    if self.has_tablet(tablet_id):
                        raise
                    log.info("tablet %s was dropped during the checkpoint", tablet_id)
            self.wal.rotate()
            removed = self._remove_flushed_segments()
        release_freed_memory()
        return removed

    def tablet_stats(self, tablet_id: TabletId) -> dict[str, object]:
        """A tablet's DiskRowSets (id, min/max key, rows, bytes on disk, REDO/UNDO delta file
        counts) and its totals; see ``Tablet.rowset_stats``."""
        return self.tablet(tablet_id).rowset_stats()

    def tablet_layout(self, tablet_id: TabletId) -> dict[str, object]:
        """``tablet_stats`` plus the rowsets the next merging compaction would take
        (``compaction_inputs``, empty if none is worth it) and why (``compaction_reason``);
        for the status page, which draws them."""
        tablet = self.tablet(tablet_id)
        stats = tablet.rowset_stats()
        choice = tablet.compaction_choice(
            self.options.compaction_budget_mb, self.history_cutoff(self.now())
        )
        stats["compaction_inputs"] = [] if choice is None else list(choice.rowset_ids)
        stats["compaction_reason"] = "" if choice is None else choice.reason
        return stats

    def maybe_flush(self, tablet_ids: list[TabletId]) -> None:
        """After a commit: when one of these tablets' MemRowSet passed the size threshold, wake
        the maintenance manager to flush it; with no manager running, flush here.  Past the
        row threshold only the manager is woken (without one, CHECKPOINT flushes)."""
        for tablet_id in tablet_ids:
            tablet = self.registry.find(tablet_id)
            if tablet is None:
                continue
            row_threshold = self.options.flush_threshold_rows
            byte_threshold = self.options.flush_threshold_bytes
            held, rows = tablet.flush_pressure(row_threshold, byte_threshold)
            if held < byte_threshold:
                if self.maintenance.enabled and rows >= row_threshold:
                    self.maintenance.wake()
                continue
            if self.maintenance.enabled:
                self.maintenance.wake()
                continue
            with self._flush_lock:
                if tablet.flush_pressure(row_threshold, byte_threshold)[0] >= byte_threshold:
                    snapshot = self.mvcc.safe_time()
                    tablet.flush(snapshot, self.history_cutoff(snapshot))
                    release_freed_memory()

    def _remove_flushed_segments(self) -> int:
        if any([keeps() for keeps in self.wal_keepers]):
            log.warning("keeping the WAL: a record's catalog document is not yet in its file")
            return 0
        if self.registry.offline:
            # The WAL still holds the offline tablets' unflushed writes: keep all of it.
            log.warning("keeping the WAL: tablets %s are offline", sorted(self.registry.offline))
            return 0
        tablets = self.registry.tablets()
        floor = min((t.flushed_ts for t in tablets), default=self.mvcc.safe_time())
        removable = []
        for path in self.wal.segments[:-1]:
            newest = max(
                (commit_record.commit_ts_of(p) for p in self.wal.segment_records(path)), default=0
            )
            if newest > floor:
                break
            removable.append(path)
        self.wal.remove_segments(removable)
        if removable:
            log.info("checkpoint removed %d WAL segments", len(removable))
        return len(removable)

    def begin(self, read_only: bool = False) -> Transaction:
        """Start a transaction reading at the current safe time."""
        self.registry.check_open()
        return Transaction(self.pipeline, self.registry, read_only=read_only)

    def now(self) -> Timestamp:
        """A fresh timestamp from the database clock."""
        return self.clock.now()

    def close(self) -> None:
        """Sync and close the WAL; the engine refuses new transactions afterwards."""
        if not self.registry.close():
            return
        self.maintenance.shutdown()
        with self.commit_lock:
            self.wal.close()


def _load_tablets(
    layout: DataDirLayout, options: StorageOptions
) -> tuple[dict[TabletId, Tablet], dict[TabletId, str]]:
    """The tablets that open, and why each one that does not is corrupt: a damaged tablet
    is taken offline (XX001 on access) instead of keeping the whole database down."""
    tablets: dict[TabletId, Tablet] = {}
    offline: dict[TabletId, str] = {}
    for path in sorted(layout.tablets_dir.iterdir()):
        if not path.is_dir() or not path.name.isdigit():
            continue
        tablet_id = TabletId(int(path.name))
        if not (path / TABLET_METADATA_FILE).exists():
            log.warning("removing %s: a tablet created or dropped during a crash", path)
            remove_dir(path, fsync=options.fsync)
            continue
        try:
            tablets[tablet_id] = Tablet.load(layout, tablet_id, options)
        except DataCorrupted as exc:
            log.error("tablet %s is offline: %s", tablet_id, exc.message)
            offline[tablet_id] = exc.message
    return tablets, offline
