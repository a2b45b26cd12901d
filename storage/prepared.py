"""Prepared transactions (two-phase commit): durable write sets waiting for COMMIT or ROLLBACK PREPARED.

``prepare`` writes a transaction's operations (and the documents it hands
over: its role and privilege journal, as a DOCUMENTS op) to ``<data-dir>/prepared/<gid
in hex>.txn`` (temporary name, fsync, rename, fsync of the directory) and keeps
the transaction alive, detached from its session: its provisional writes stay
invisible to others and its rows stay locked.  ``commit`` commits it as any
transaction commits (one WAL record), with one more operation in the record,
a marker naming the gid (``OpKind.PREPARED``, which replay skips).  The file
is deleted once that record is durable and *before* the commit becomes
visible: until then no flush can cover the commit, so no checkpoint can
remove its WAL segment while the file exists.  ``rollback`` deletes the file,
then the writes.

Recovery, after WAL replay: a file whose gid a replayed commit record marks
was committed, and is deleted; every other file is a transaction still
prepared, and its operations are applied again as a new transaction's
provisional writes (taking their row locks), and its other row locks
(``OpKind.ROW_LOCK``: a foreign-key check's FOR KEY SHARE, ``SELECT ... FOR
SHARE``) are taken again, so it stays prepared under the same gid holding
what it held, with the same documents.  So a prepared transaction is never
lost and never half applied.
"""

from __future__ import annotations

import datetime as dt
import logging
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import crc32c
import pyarrow as pa

from storage import commit_record
from storage.commit_record import OpKind, WriteOp, documents_op
from storage.data_type import TabletId
from storage.errors import DataCorrupted, DuplicateObject, InvalidParameterValue, UndefinedObject
from storage.fs import atomic_write, fsync_dir, make_dir
from storage.timestamp import Timestamp
from storage.transaction import Transaction
from storage.wal import Wal

log = logging.getLogger(__name__)

PREPARED_DIR = "prepared"
MAX_GID_BYTES = 199  # PostgreSQL's GIDSIZE (200) less its terminating NUL
_MAGIC = b"NYPREP1\n"
_HEAD = struct.Struct("<qIII")  # prepared at (unix micros), then gid, owner, database lengths
_CRC = struct.Struct("<I")
_SUFFIX = ".txn"


@dataclass(slots=True)
class PreparedTransaction:
    """One row of ``pg_prepared_xacts``, and the transaction it names."""

    gid: str
    prepared_at: dt.datetime
    owner: str
    database: str
    txn: Transaction
    documents: dict[str, bytes] = field(default_factory=dict)
    """What the transaction changed beyond its writes, by name (its role and privilege
    journal), kept in its file as a DOCUMENTS op for COMMIT PREPARED to publish."""


Commit = Callable[[tuple[WriteOp, ...], Callable[[], None] | None], None]
"""Commits a prepared transaction with more markers, running the callback once durable."""
Publish = Callable[[dict[str, bytes], Commit], None]
"""Publishes a prepared transaction's documents through the commit it is given."""


class PreparedTransactions:
    """The database's prepared transactions, by gid."""

    def __init__(self, directory: Path, *, fsync: bool = True) -> None:
        self._dir = directory
        self._fsync = fsync
        self._lock = threading.Lock()
        self._by_gid: dict[str, PreparedTransaction] = {}
        self._busy: set[str] = set()

    def listing(self) -> list[PreparedTransaction]:
        with self._lock:
            return sorted(self._by_gid.values(), key=lambda p: p.prepared_at)

    def prepare(
        self,
        txn: Transaction,
        gid: str,
        owner: str,
        database: str,
        documents: dict[str, bytes] | None = None,
    ) -> None:
        """Make ``txn``'s writes (and ``documents``) durable under ``gid`` and keep it open;
        42710 if the gid is taken.

        On an error the transaction is rolled back, as PostgreSQL does.
        """
        try:
            if len(gid.encode()) > MAX_GID_BYTES:
                raise InvalidParameterValue(f'transaction identifier "{gid}" is too long')
            with self._lock:
                if gid in self._by_gid or gid in self._busy:
                    raise DuplicateObject(f'transaction identifier "{gid}" is already in use')
                self._busy.add(gid)
            try:
                entry = PreparedTransaction(
                    gid, dt.datetime.now(dt.UTC), owner, database, txn, dict(documents or {})
                )
                ops = txn.write_ops()
                if entry.documents:
                    ops += (documents_op(entry.documents),)
                make_dir(self._dir, fsync=self._fsync)
                atomic_write(self._path(gid), _encode(entry, ops), fsync=self._fsync)
            finally:
                with self._lock:
                    self._busy.discard(gid)
            with self._lock:
                self._by_gid[gid] = entry
        except BaseException:
            txn.rollback()
            raise

    def commit(self, gid: str, publish: Publish | None = None) -> None:
        """COMMIT PREPARED: commit the transaction, durably marked as this gid's; 42704 if none.
        A transaction with documents commits through ``publish``, which adds its own markers
        to the record (and may refuse: the transaction then stays prepared)."""
        entry = self._take(gid)
        path = self._path(gid)
        marker = WriteOp(TabletId(0), OpKind.PREPARED, _gid_batch(gid))

        def commit(
            markers: tuple[WriteOp, ...] = (), on_durable: Callable[[], None] | None = None
        ) -> None:
            def durable() -> None:
                self._remove(path)
                if on_durable is not None:
                    on_durable()

            entry.txn.commit(marker=marker, markers=markers, on_durable=durable)

        try:
            if entry.documents and publish is not None:
                publish(entry.documents, commit)
            else:
                commit()
        except BaseException:
            if entry.txn.is_active:
                with self._lock:
                    self._by_gid[gid] = entry  # not committed: it stays prepared
            raise

    def rollback(self, gid: str) -> None:
        """ROLLBACK PREPARED: forget the file, then the writes; 42704 if there is no such gid."""
        entry = self._take(gid)
        self._remove(self._path(gid))
        entry.txn.rollback()

    def _take(self, gid: str) -> PreparedTransaction:
        with self._lock:
            entry = self._by_gid.pop(gid, None)
        if entry is None:
            raise UndefinedObject(f'prepared transaction with identifier "{gid}" does not exist')
        return entry

    def _path(self, gid: str) -> Path:
        return self._dir / (gid.encode().hex() + _SUFFIX)

    def _remove(self, path: Path) -> None:
        path.unlink(missing_ok=True)
        if self._fsync:
            fsync_dir(self._dir)

    # -- recovery ----------------------------------------------------------------------------

    def recover(self, wal: Wal, begin: Callable[[], Transaction]) -> int:
        """After WAL replay: drop the files of committed gids, prepare the rest again.

        Returns how many transactions are prepared again.
        """
        if not self._dir.exists():
            return 0
        for leftover in self._dir.glob("*" + _SUFFIX + ".*"):
            leftover.unlink()  # a PREPARE cut short by a crash: never acknowledged
        files = sorted(self._dir.glob("*" + _SUFFIX))
        if not files:
            return 0
        committed = _committed_gids(wal)
        restored = 0
        for path in files:
            gid, when, owner, database, ops = _decode(path.read_bytes(), path)
            if gid in committed:
                self._remove(path)
                continue
            txn = begin()
            documents: dict[str, bytes] = {}
            for op in ops:
                if op.kind is OpKind.INSERT:
                    txn.insert(op.tablet_id, op.batch)
                elif op.kind is OpKind.UPDATE:
                    txn.update(op.tablet_id, op.batch)
                elif op.kind is OpKind.DELETE:
                    txn.delete(op.tablet_id, op.batch)
                elif op.kind is OpKind.ROW_LOCK:
                    txn.lock(op.tablet_id, op.batch, commit_record.row_lock_mode(op))
                elif op.kind is OpKind.DOCUMENTS:
                    documents.update(commit_record.documents_of(op))
            self._by_gid[gid] = PreparedTransaction(gid, when, owner, database, txn, documents)
            restored += 1
        log.info("%d prepared transactions restored", restored)
        return restored


def _committed_gids(wal: Wal) -> set[str]:
    """The gids the WAL's commit records mark as committed by COMMIT PREPARED."""
    gids: set[str] = set()
    for payload in wal.replay():
        for op in commit_record.decode(payload).ops:
            if op.kind is OpKind.PREPARED:
                gids.add(str(op.batch.column(0)[0].as_py()))
    return gids


def _gid_batch(gid: str) -> pa.RecordBatch:
    return pa.record_batch([pa.array([gid], pa.string())], names=["gid"])


def _encode(entry: PreparedTransaction, ops: tuple[WriteOp, ...]) -> bytes:
    """The file's bytes, joined once: a million-row write set is tens of megabytes, and each
    concatenation of it cost a copy."""
    micros = int(entry.prepared_at.timestamp() * 1_000_000)
    texts = [entry.gid.encode(), entry.owner.encode(), entry.database.encode()]
    body = [
        _HEAD.pack(micros, *(len(t) for t in texts)),
        *texts,
        struct.pack("<I", len(ops)),
        *commit_record.encode_op_parts(ops),
    ]
    crc = 0
    for part in body:
        crc = crc32c.crc32c(part, crc)
    return b"".join([_MAGIC, *body, _CRC.pack(crc)])


def prepared_files(directory: Path) -> list[Path]:
    """The prepared-transaction files under ``directory`` (``nyala check`` reads each)."""
    return sorted(directory.glob("*" + _SUFFIX)) if directory.is_dir() else []


def verify_file(path: Path) -> None:
    """Read one prepared-transaction file as recovery would; DataCorrupted naming it if damaged."""
    _decode(path.read_bytes(), path)


def _decode(data: bytes, path: Path) -> tuple[str, dt.datetime, str, str, tuple[WriteOp, ...]]:
    """(gid, prepared at, owner, database, ops) of a prepared-transaction file."""
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + _HEAD.size + _CRC.size:
        raise DataCorrupted(f'unreadable prepared transaction file "{path}"')
    body = data[len(_MAGIC) : -_CRC.size]
    if crc32c.crc32c(body) != _CRC.unpack_from(data, len(data) - _CRC.size)[0]:
        raise DataCorrupted(f'checksum mismatch in prepared transaction file "{path}"')
    micros, *lengths = _HEAD.unpack_from(body, 0)
    pos = _HEAD.size
    texts = []
    for length in lengths:
        texts.append(body[pos : pos + length].decode())
        pos += length
    (count,) = struct.unpack_from("<I", body, pos)
    pos += 4
    header = commit_record.encode_header(Timestamp(0), count)
    record = commit_record.decode(header + body[pos:])
    when = dt.datetime.fromtimestamp(micros / 1_000_000, dt.UTC)
    return texts[0], when, texts[1], texts[2], record.ops
