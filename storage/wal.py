"""The write-ahead log: checksummed records in numbered segment files, fsynced by group commit.

One WAL serves the whole database (not one per tablet as in Kudu), so one
record can make a multi-tablet transaction durable at once.  What a record
holds is the caller's business (storage/transaction.py writes one per
committed transaction); this module frames, syncs and replays opaque bytes.

Segment files are ``wal/wal-<seq:016d>.log``.  Each one is:

======  ===========  ==========================================================
offset  size         field
======  ===========  ==========================================================
0       8            magic ``b"NYALAWAL"``
8       4            format version, u32 little-endian (1)
12      ...          records, back to back, until the end of the file
======  ===========  ==========================================================

and each record is:

======  ===========  ==========================================================
offset  size         field
======  ===========  ==========================================================
0       4            payload length in bytes, u32 little-endian (> 0)
4       4            CRC32C of the payload, u32 little-endian
8       length       payload
======  ===========  ==========================================================

Recovery (on open): a crash while appending leaves a torn tail in the last
segment: a record cut short, zero-filled, or with a bad CRC and nothing
intact after it.  That tail was never acknowledged, so it is truncated.  A
record with a bad CRC followed by an intact record, or any damage in an
earlier segment, is corruption and raises ``DataCorrupted``.

Group commit: ``append`` writes a record to the OS and returns its LSN (its
1-based position in the log); ``sync(lsn)`` makes it durable.  A thread
whose LSN is already durable returns at once; otherwise one thread becomes
the leader and fsyncs everything appended so far while the others wait on a
condition, so N concurrent commits cost about one fsync, not N.

I/O failures: a write that fails (53100 on a full disk, else 58030) is cut
off the segment again, so the log stays whole and writes resume once there
is space.  A failed fsync is final for this process: the kernel may have
dropped the pages it could not write, so a later fsync that succeeds proves
nothing about them; the log refuses every later write (58030) while reads
go on, and a restart recovers from what the disk holds (PostgreSQL PANICs
for the same reason).
"""

from __future__ import annotations

import errno
import logging
import os
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import crc32c

from storage.errors import AdminShutdown, DataCorrupted, IoError, io_error
from storage.fs import fsync_dir
from storage.options import StorageOptions

log = logging.getLogger(__name__)

SEGMENT_MAGIC = b"NYALAWAL"
SEGMENT_FORMAT_VERSION = 1
_SEGMENT_HEADER = struct.Struct("<8sI")
_RECORD_HEADER = struct.Struct("<II")
_SEGMENT_PREFIX = "wal-"
_SEGMENT_SUFFIX = ".log"


def segment_name(seq: int) -> str:
    return f"{_SEGMENT_PREFIX}{seq:016d}{_SEGMENT_SUFFIX}"


def _segment_seq(name: str) -> int | None:
    if not (name.startswith(_SEGMENT_PREFIX) and name.endswith(_SEGMENT_SUFFIX)):
        return None
    digits = name[len(_SEGMENT_PREFIX) : -len(_SEGMENT_SUFFIX)]
    return int(digits) if digits.isdigit() else None


def frame(payload: bytes) -> bytes:
    """Return ``payload`` framed as one record (header + payload)."""
    return _RECORD_HEADER.pack(len(payload), crc32c.crc32c(payload)) + payload


class Wal:
    """The database's write-ahead log; ``append``/``sync`` are thread-safe.

    Invariant: every record before ``_durable_lsn`` is on stable storage (or
    fsync is off); segments before the current one were fsynced at rollover.
    """

    def __init__(self, wal_dir: Path, options: StorageOptions) -> None:
        self._dir = wal_dir
        self._options = options
        self._segments: list[Path] = []
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._segment_bytes = 0
        self._appended_lsn = 0
        self._sync_cond = threading.Condition(threading.Lock())
        self._durable_lsn = 0
        self._is_syncing = False
        self._is_closed = False
        self._failure: str | None = None
        """Why the log refuses writes (an fsync failed, or a failed write stuck), if it does."""

    @classmethod
    def open(cls, wal_dir: Path, options: StorageOptions) -> Wal:
        """Open the log in ``wal_dir``, truncating a torn tail; raise DataCorrupted on damage."""
        wal = cls(wal_dir, options)
        wal._recover()
        return wal

    @property
    def segments(self) -> list[Path]:
        with self._lock:
            return list(self._segments)

    def _recover(self) -> None:
        self._dir.mkdir(parents=True, exist_ok=True)
        numbered = [(_segment_seq(p.name), p) for p in self._dir.iterdir()]
        self._segments = [p for seq, p in sorted((s, p) for s, p in numbered if s is not None)]
        count = 0
        for idx, path in enumerate(self._segments):
            is_last = idx == len(self._segments) - 1
            data = path.read_bytes()
            records, valid_end = _scan_segment(path, data, is_last=is_last)
            count += records
            # An empty last segment (killed between creating it and writing its header)
            # goes too: were it kept, the next segment would leave it in the middle.
            if valid_end < len(data) or len(data) < _SEGMENT_HEADER.size:
                log.warning("truncating torn WAL tail of %s at byte %d", path.name, valid_end)
                self._truncate(path, valid_end)
        self._appended_lsn = self._durable_lsn = count

    def _truncate(self, path: Path, size: int) -> None:
        if size < _SEGMENT_HEADER.size:
            path.unlink()
            self._segments.remove(path)
            if self._options.fsync:
                fsync_dir(self._dir)
            return
        with open(path, "r+b") as f:
            f.truncate(size)
            if self._options.fsync:
                os.fsync(f.fileno())

    def replay(self) -> Iterator[bytes]:
        """Yield every record's payload, oldest first."""
        for path in self.segments:
            yield from self.segment_records(path)

    def segment_records(self, path: Path) -> Iterator[bytes]:
        """Yield the payloads of one segment, oldest first."""
        data = path.read_bytes()
        pos = _SEGMENT_HEADER.size
        while pos < len(data):
            length, crc = _RECORD_HEADER.unpack_from(data, pos)
            payload = data[pos + _RECORD_HEADER.size : pos + _RECORD_HEADER.size + length]
            if len(payload) != length or crc32c.crc32c(payload) != crc:
                raise DataCorrupted(f"WAL segment {path.name} changed during replay at {pos}")
            yield payload
            pos += _RECORD_HEADER.size + length

    def append(self, payload: bytes) -> int:
        """Write one record to the OS (not yet durable) and return its LSN.

        A failed write (a full disk: 53100, else 58030) is cut off the segment
        again, so the log stays whole and a later append succeeds once there
        is space; if even that fails, the log refuses every later write.
        """
        assert payload, "WAL records are never empty"
        record = frame(payload)
        with self._lock:
            if self._is_closed:
                raise AdminShutdown("the write-ahead log is closed")
            self._check_not_failed()
            if self._fd is None or self._segment_bytes >= self._options.wal_segment_size_bytes:
                try:
                    self._roll_over()
                except OSError as exc:
                    raise io_error("could not start a WAL segment", exc) from exc
            assert self._fd is not None
            try:
                view = memoryview(record)
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError as exc:
                try:
                    os.ftruncate(self._fd, self._segment_bytes)
                except OSError as cut:
                    self._failure = f"a failed write could not be cut off the log: {cut}"
                    log.critical("WAL: %s", self._failure)
                raise io_error("could not write to WAL segment", exc) from exc
            self._segment_bytes += len(record)
            self._appended_lsn += 1
            return self._appended_lsn

    def rotate(self) -> None:
        """Close the current segment (fsynced) so the next append starts a new one."""
        with self._lock:
            if self._fd is not None and self._segment_bytes > _SEGMENT_HEADER.size:
                self._roll_over()

    def remove_segments(self, paths: list[Path]) -> None:
        """Delete closed segments whose every record is flushed to tablet files (checkpoint)."""
        with self._lock:
            current = self._segments[-1] if self._fd is not None and self._segments else None
            for path in paths:
                assert path != current, "the segment being appended to is never removed"
                path.unlink(missing_ok=True)
                self._segments.remove(path)
            if paths and self._options.fsync:
                fsync_dir(self._dir)

    def _check_not_failed(self) -> None:
        if self._failure is not None:
            raise IoError(
                "the write-ahead log refuses writes after an I/O failure",
                detail=self._failure,
                hint="Restart the server: it recovers from what the log holds on disk.",
            )

    def _roll_over(self) -> None:
        # A reopened log always appends to a fresh segment, so recovered segments stay untouched.
        if self._fd is not None:
            if self._options.fsync:
                try:
                    os.fsync(self._fd)
                except OSError as exc:
                    self._failure = f"an fsync of the log failed: {exc}"
                    raise
            os.close(self._fd)
            self._fd = None
            with self._sync_cond:
                self._durable_lsn = max(self._durable_lsn, self._appended_lsn)
        seq = (_segment_seq(self._segments[-1].name) or 0) + 1 if self._segments else 1
        path = self._dir / segment_name(seq)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        try:
            header = _SEGMENT_HEADER.pack(SEGMENT_MAGIC, SEGMENT_FORMAT_VERSION)
            if os.write(fd, header) != len(header):
                raise OSError(errno.ENOSPC, "short write of a WAL segment header")
            if self._options.fsync:
                os.fsync(fd)
                fsync_dir(self._dir)
        except OSError:
            os.close(fd)
            path.unlink(missing_ok=True)  # nothing was logged in it; a restart would drop it too
            raise
        self._fd = fd
        self._segments.append(path)
        self._segment_bytes = _SEGMENT_HEADER.size

    def sync(self, lsn: int) -> None:
        """Return once the record at ``lsn`` (and all before it) is durable.

        A failed fsync is never retried as if a later one could vouch for the
        same records (the kernel may have dropped the unwritten pages): the
        log refuses every later append and sync until the server restarts.
        """
        with self._sync_cond:
            while self._durable_lsn < lsn and self._is_syncing:
                self._sync_cond.wait()
            if self._durable_lsn >= lsn:
                return
            self._check_not_failed()  # a plain read: this lock is never taken inside _lock's
            self._is_syncing = True
        target = 0
        try:
            with self._lock:
                target = self._appended_lsn
                fd = None if self._fd is None else os.dup(self._fd)
            if fd is not None:
                try:
                    if self._options.fsync:
                        # As PostgreSQL's wal_sync_method: appends need the data and the
                        # size, not the file's times (about a millisecond less per commit).
                        os.fdatasync(fd)
                finally:
                    os.close(fd)
        except OSError as exc:
            target = 0
            with self._lock:
                self._failure = f"an fsync of the log failed: {exc}"
            log.critical("WAL: %s; no further writes until a restart", self._failure)
            raise io_error("could not fsync WAL segment", exc) from exc
        finally:
            with self._sync_cond:
                self._is_syncing = False
                self._durable_lsn = max(self._durable_lsn, target)
                self._sync_cond.notify_all()

    @property
    def durable_lsn(self) -> int:
        with self._sync_cond:
            return self._durable_lsn

    def close(self) -> None:
        """Sync everything appended and close the current segment; later appends fail."""
        with self._lock:
            self._is_closed = True
            if self._fd is not None:
                if self._options.fsync:
                    os.fsync(self._fd)
                os.close(self._fd)
                self._fd = None
            with self._sync_cond:
                self._durable_lsn = self._appended_lsn


def segment_is_sound(path: Path, *, is_last: bool) -> int:
    """Check one segment read-only (``nyala check``): raise DataCorrupted on damage; return
    the bytes of a torn tail that opening the log would drop (0 if none)."""
    data = path.read_bytes()
    _, valid_end = _scan_segment(path, data, is_last=is_last)
    return len(data) - valid_end


def _scan_segment(path: Path, data: bytes, *, is_last: bool) -> tuple[int, int]:
    """Validate one segment; return (intact records, byte offset where they end)."""
    if len(data) < _SEGMENT_HEADER.size:
        if is_last:
            return 0, 0
        raise DataCorrupted(f"WAL segment {path.name} is shorter than its header")
    magic, version = _SEGMENT_HEADER.unpack_from(data, 0)
    if magic != SEGMENT_MAGIC or version != SEGMENT_FORMAT_VERSION:
        raise DataCorrupted(f"WAL segment {path.name} has a bad header")
    pos = _SEGMENT_HEADER.size
    count = 0
    while pos < len(data):
        status = _check_record(data, pos)
        if status == "ok":
            length, _ = _RECORD_HEADER.unpack_from(data, pos)
            pos += _RECORD_HEADER.size + length
            count += 1
            continue
        if is_last and status == "torn":
            return count, pos
        raise DataCorrupted(
            f"WAL segment {path.name} is corrupt at byte {pos}: bad checksum",
            detail="the record is followed by intact records, so this is not a torn write",
        )
    return count, pos


def _check_record(data: bytes, pos: int) -> str:
    """Classify the record at ``pos``: "ok", "torn" (a crashed append) or "corrupt"."""
    if _is_intact(data, pos):
        return "ok"
    if pos + _RECORD_HEADER.size > len(data):
        return "torn"
    length, _ = _RECORD_HEADER.unpack_from(data, pos)
    end = pos + _RECORD_HEADER.size + length
    # A bad checksum with an intact record right after it is bit rot, not a crashed append.
    if length and end < len(data) and _is_intact(data, end):
        return "corrupt"
    return "torn"


def _is_intact(data: bytes, pos: int) -> bool:
    if pos + _RECORD_HEADER.size > len(data):
        return False
    length: int
    crc: int
    length, crc = _RECORD_HEADER.unpack_from(data, pos)
    end = pos + _RECORD_HEADER.size + length
    if length == 0 or end > len(data):
        return False
    actual: int = crc32c.crc32c(data[pos + _RECORD_HEADER.size : end])
    return actual == crc
