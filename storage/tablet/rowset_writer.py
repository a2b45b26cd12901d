"""Writing a DiskRowSet: rows leaving a MemRowSet, or columns from a compaction, as one
rowset directory (rowset_files.py), written whole or not at all.

The rowset is written under ``rowset-<id>.tmp``, fsynced, renamed, and only
then named in the tablet metadata (tablet.py), so a crash leaves either no
rowset or a whole one.  Every cfile of one rowset uses the same block
boundaries, so block i of each column covers the same rowids and a scan
walks them in step.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from storage.cfile.compression import CompressionType
from storage.cfile.encoding import EncodingType
from storage.cfile.writer import rows_per_block, write_cfile
from storage.data_type import BINARY, BOOL
from storage.fs import fsync_dir
from storage.row_change import Mutation, Row, from_storage_values
from storage.schema import Schema
from storage.tablet.bloom import BloomFilter
from storage.tablet.delta_file import write_delta_file
from storage.tablet.delta_records import DeltaRecords, records_builder
from storage.tablet.rowset_files import BLOOM_FILE, DELETED_FILE, KEY_FILE, rowset_dir_name
from storage.tablet.segment_flush import SegmentPart, merge_segments


@dataclass(slots=True)
class FlushRow:
    """One row leaving a MemRowSet: its state at the flush, its history and later changes."""

    key: bytes
    values: Row
    live: bool
    undo: list[tuple[int, Row | None]] = field(default_factory=list)
    redo: list[Mutation] = field(default_factory=list)


def write_rowset(
    tablet_dir: Path,
    rowset_id: int,
    schema: Schema,
    rows: list[FlushRow],
    base_ts: int,
    *,
    fsync: bool,
    segments: Sequence[SegmentPart] = (),
) -> dict[str, object]:
    """Write ``rows`` (key order) and ``segments``' rows as a DiskRowSet directory; return
    its metadata entry."""
    # MemRowSet rows are row-shaped: one transpose (in C) turns them into columns.
    transposed = list(zip(*(r.values for r in rows))) or [() for _ in schema.columns]
    arrays = [
        from_storage_values(values, column.type)
        for values, column in zip(transposed, schema.columns)
    ]
    keys = pa.array([r.key for r in rows], pa.binary())
    deleted = np.array([not r.live for r in rows], bool)
    builder = records_builder(schema)
    for rowid, r in enumerate(rows):
        for ts, image in r.undo:
            builder.add_row(rowid, ts, image)
    undo = builder.build()
    if segments:
        arrays, keys, deleted, undo = merge_segments(schema, arrays, keys, deleted, undo, segments)
    return write_rowset_columns(
        tablet_dir, rowset_id, schema, arrays, keys, deleted, undo, base_ts, fsync=fsync
    )


def write_rowset_columns(
    tablet_dir: Path,
    rowset_id: int,
    schema: Schema,
    arrays: list[pa.Array],
    keys: pa.Array,
    deleted: np.ndarray,
    undo: DeltaRecords,
    base_ts: int,
    *,
    fsync: bool,
) -> dict[str, object]:
    """Write rows given as columns (key order; ``arrays`` in schema order) and their UNDO
    records as a DiskRowSet directory, durably; return its metadata entry.  ``rowset_id``
    is one the metadata does not name, so a directory already there is an earlier failed
    attempt's; on failure (a full disk, say) nothing is left behind."""
    final = tablet_dir / rowset_dir_name(rowset_id)
    tmp = tablet_dir / (rowset_dir_name(rowset_id) + ".tmp")
    shutil.rmtree(final, ignore_errors=True)
    try:
        return _write_rowset_dir(
            tmp, final, tablet_dir, rowset_id, schema, arrays, keys, deleted, undo, base_ts,
            fsync=fsync,
        )  # fmt: skip
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(final, ignore_errors=True)
        raise


def _write_rowset_dir(
    tmp: Path,
    final: Path,
    tablet_dir: Path,
    rowset_id: int,
    schema: Schema,
    arrays: list[pa.Array],
    keys: pa.Array,
    deleted: np.ndarray,
    undo: DeltaRecords,
    base_ts: int,
    *,
    fsync: bool,
) -> dict[str, object]:
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
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
        tmp / DELETED_FILE,
        pa.array(deleted, pa.bool_()),
        BOOL,
        EncodingType.RLE,
        fsync=fsync,
        block_rows=block_rows,
    )
    bloom = BloomFilter.build(keys.to_pylist()).to_bytes()
    _write_file(tmp / BLOOM_FILE, bloom, fsync=fsync)
    size += len(bloom)
    undo_files = []
    if len(undo):
        info = write_delta_file(tmp / "undo-0.delta", undo, fsync=fsync)
        size += info.size_bytes
        undo_files.append(info.to_json())
    if fsync:
        fsync_dir(tmp)
    os.replace(tmp, final)
    if fsync:
        fsync_dir(tablet_dir)
    return {
        "id": rowset_id,
        "rows": len(keys),
        "base_ts": base_ts,
        "min_key": keys[0].as_py().hex(),
        "max_key": keys[-1].as_py().hex(),
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
