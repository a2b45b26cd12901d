"""DeltaFile: REDO or UNDO records on disk, in checksummed blocks with a rowid and timestamp index.

File layout (like a cfile's)::

    "NYDELTA1"
    block 0 .. block n-1       an LZ4-compressed Arrow IPC stream of one RecordBatch
                               (rowid u32, ts i64, live i8, then s<id> bool and v<id> per
                               column the file sets), then a u32 CRC32C of those bytes
    footer                     JSON: records, rowid and timestamp ranges, columns, and per
                               block [offset, size, first rowid, last rowid, min ts, max ts]
    u32 footer length, u32 footer CRC32C, "NYDELTA1"

Records are sorted by (rowid, ts), so the block index lets a point lookup
decode only the block(s) that can hold its row, and a scan of rowids
[lo, hi) only the blocks that overlap it.  The file's timestamp range, also
kept in the tablet metadata, lets a scan skip a whole file its snapshot does
not need.  Decoded blocks go through a process-wide cache.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import crc32c
import numpy as np
import pyarrow as pa

from storage.cfile.block_cache import BlockCache
from storage.cfile.footer import footer_tail, open_with_footer
from storage.data_type import ColumnId
from storage.errors import DataCorrupted
from storage.fs import write_file
from storage.schema import Schema
from storage.tablet.delta_records import KEEP, ColumnDelta, DeltaRecords

MAGIC = b"NYDELTA1"
BLOCK_RECORDS = 16_384
DELTA_BLOCK_CACHE: BlockCache[DeltaRecords] = BlockCache(64 << 20)
"""Decoded delta blocks kept across scans (64 MiB)."""


@dataclass(frozen=True, slots=True)
class DeltaFileInfo:
    """What the tablet metadata records of a delta file."""

    file: str
    records: int
    min_ts: int
    max_ts: int
    min_rowid: int
    max_rowid: int
    size_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "records": self.records,
            "min_ts": self.min_ts,
            "max_ts": self.max_ts,
            "min_rowid": self.min_rowid,
            "max_rowid": self.max_rowid,
            "bytes": self.size_bytes,
        }


def write_delta_file(path: Path, records: DeltaRecords, *, fsync: bool) -> DeltaFileInfo:
    """Write ``records`` (any order, at least one) as a delta file at ``path``."""
    assert len(records), "a delta file holds at least one record"
    records = records.sorted()
    out = bytearray(MAGIC)
    blocks = []
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    for start in range(0, len(records), BLOCK_RECORDS):
        part = records.slice(start, min(len(records), start + BLOCK_RECORDS))
        batch = _to_batch(part)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batch.schema, options=options) as writer:
            writer.write_batch(batch)
        body = sink.getvalue().to_pybytes()
        offset = len(out)
        out += body + struct.pack("<I", crc32c.crc32c(body))
        blocks.append(
            [
                offset,
                len(out) - offset,
                int(part.rowid[0]),
                int(part.rowid[-1]),
                int(part.ts.min()),
                int(part.ts.max()),
            ]
        )
    info = DeltaFileInfo(
        path.name,
        len(records),
        int(records.ts.min()),
        int(records.ts.max()),
        int(records.rowid[0]),
        int(records.rowid[-1]),
        0,
    )
    footer = {
        **info.to_json(),
        "live_records": int((records.live != KEEP).sum()),
        "columns": sorted(records.columns),
        "blocks": blocks,
    }
    doc = json.dumps(footer, separators=(",", ":")).encode()
    out += footer_tail(doc, MAGIC)
    write_file(path, out, fsync=fsync)
    return DeltaFileInfo(
        info.file, info.records, info.min_ts, info.max_ts, info.min_rowid, info.max_rowid, len(out)
    )


def _to_batch(records: DeltaRecords) -> pa.RecordBatch:
    arrays = [
        pa.array(records.rowid.astype(np.uint32)),
        pa.array(records.ts),
        pa.array(records.live),
    ]
    names = ["rowid", "ts", "live"]
    for cid, column in sorted(records.columns.items()):
        arrays += [pa.array(column.is_set), column.values]
        names += [f"s{cid}", f"v{cid}"]
    return pa.RecordBatch.from_arrays(arrays, names=names)


def _from_batch(batch: pa.RecordBatch) -> DeltaRecords:
    names = batch.schema.names
    columns = {}
    for i in range(3, len(names), 2):
        cid = ColumnId(int(names[i][1:]))
        is_set = batch.column(i).to_numpy(zero_copy_only=False).astype(bool)
        columns[cid] = ColumnDelta(is_set, batch.column(i + 1))
    return DeltaRecords(
        batch.column(0).to_numpy(zero_copy_only=False).astype(np.int64),
        batch.column(1).to_numpy(zero_copy_only=False),
        batch.column(2).to_numpy(zero_copy_only=False),
        columns,
    )


class DeltaFile:
    """One opened delta file: its footer read and checked; blocks decoded on demand."""

    def __init__(self, path: Path, schema: Schema) -> None:
        self.path = path
        self.schema = schema
        self._file, footer = open_with_footer(path, MAGIC, "delta file")
        self.size_bytes: int = self._file.size()
        self.records: int = footer["records"]
        self.min_ts: int = footer["min_ts"]
        self.max_ts: int = footer["max_ts"]
        self.min_rowid: int = footer["min_rowid"]
        self.max_rowid: int = footer["max_rowid"]
        self.column_ids: list[int] = footer["columns"]
        self.live_records: int = footer["live_records"]
        """Records that change liveness (DELETE, REINSERT): none lets a liveness probe skip
        the file."""
        blocks = np.array(footer["blocks"], dtype=np.int64).reshape(-1, 6)
        self._offsets = blocks[:, 0]
        self._sizes = blocks[:, 1]
        self._first_rowids = blocks[:, 2]
        self._last_rowids = blocks[:, 3]
        self._owner = DELTA_BLOCK_CACHE.new_owner()

    def info(self) -> DeltaFileInfo:
        return DeltaFileInfo(
            self.path.name,
            self.records,
            self.min_ts,
            self.max_ts,
            self.min_rowid,
            self.max_rowid,
            self.size_bytes,
        )

    def __len__(self) -> int:
        return self.records

    def with_schema(self, schema: Schema) -> DeltaFile:
        """The same file read under ``schema`` (columns are named by ID, so nothing changes)."""
        copy = object.__new__(DeltaFile)
        for name in (
            "path", "_file", "size_bytes", "records", "min_ts", "max_ts", "min_rowid",
            "max_rowid", "column_ids", "live_records", "_offsets", "_sizes", "_first_rowids", "_last_rowids",
            "_owner",
        ):  # fmt: skip
            setattr(copy, name, getattr(self, name))
        copy.schema = schema
        return copy

    def may_hold(self, lo: int, hi: int) -> bool:
        """Whether any record's rowid can lie in [lo, hi)."""
        return lo <= self.max_rowid and hi > self.min_rowid

    def holds(self, rowid: int) -> bool:
        """Whether some record is of ``rowid`` (one cached block searched, nothing built)."""
        if not self.min_rowid <= rowid <= self.max_rowid:
            return False
        idx = int(np.searchsorted(self._last_rowids, rowid, "left"))
        if idx >= len(self._first_rowids) or self._first_rowids[idx] > rowid:
            return False
        rowids = self._block(idx).rowid
        at = int(np.searchsorted(rowids, rowid, "left"))
        return at < len(rowids) and int(rowids[at]) == rowid

    def log_of(self, rowids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rowid, ts, live) of every record in the blocks whose rowid span covers one of
        ``rowids``, in file order (by rowid, then ts): what a probe of many scattered rows
        searches with numpy instead of one ``records_in`` per row.  A rowid whose records
        run over a block boundary gets every block it is in."""
        lo = np.searchsorted(self._last_rowids, rowids, "left")
        hi = np.searchsorted(self._first_rowids, rowids, "right")
        some = hi > lo
        blocks = len(self._first_rowids)
        spans = np.bincount(lo[some], minlength=blocks + 1) - np.bincount(
            hi[some], minlength=blocks + 1
        )
        wanted = np.flatnonzero(np.cumsum(spans)[:blocks] > 0).tolist()
        if not wanted:
            empty = DeltaRecords.empty()
            return empty.rowid, empty.ts, empty.live
        parts = [self._block(i) for i in wanted]
        return (
            np.concatenate([p.rowid for p in parts]),
            np.concatenate([p.ts for p in parts]),
            np.concatenate([p.live for p in parts]),
        )

    def records_in(self, lo: int, hi: int) -> DeltaRecords:
        """The records of rowids in [lo, hi), reading only the blocks that overlap them."""
        if not self.may_hold(lo, hi):
            return DeltaRecords.empty()
        first = int(np.searchsorted(self._last_rowids, lo, "left"))
        last = int(np.searchsorted(self._first_rowids, hi, "left"))
        parts = [self._block(i).in_rowids(lo, hi) for i in range(first, last)]
        return DeltaRecords.concat(parts, self.schema)

    def all_records(self) -> DeltaRecords:
        return self.records_in(self.min_rowid, self.max_rowid + 1)

    def _block(self, idx: int) -> DeltaRecords:
        return DELTA_BLOCK_CACHE.get_or_load(
            self._owner, idx, lambda: self._decode(idx), lambda r: r.nbytes
        )

    def _decode(self, idx: int) -> DeltaRecords:
        offset, size = int(self._offsets[idx]), int(self._sizes[idx])
        raw = bytes(self._file.read_at(size, offset))
        if len(raw) != size or size < 4:
            raise DataCorrupted(f"delta file {self.path} is truncated at {offset}")
        body = raw[:-4]
        (crc,) = struct.unpack_from("<I", raw, size - 4)
        if crc32c.crc32c(body) != crc:
            raise DataCorrupted(f"delta file {self.path}: block at {offset} fails its CRC32C")
        try:
            batch = pa.ipc.open_stream(pa.py_buffer(body)).read_next_batch()
        except (OSError, pa.ArrowInvalid, StopIteration) as exc:
            raise DataCorrupted(f"delta file {self.path} block {idx} is unreadable: {exc}") from exc
        return _from_batch(batch)
