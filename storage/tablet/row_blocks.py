"""Row blocks: a DiskRowSet block's columns of one projection as one cached RecordBatch.

A point read of a row whose values are its base values used to slice each column's
cached Arrow block and assemble a batch from the slices, several pyarrow calls per
column.  The same projection is read again and again (a prepared statement's), so the
block's arrays are put together once, as the projection's batch, and a row is one
``slice`` of it.  The batch holds the very arrays ``ARROW_BLOCKS`` holds (no copy);
cfiles are immutable, so an entry stays right for as long as its readers are the
rowset's (a delta compaction installs new readers, and so new owners).
"""

from __future__ import annotations

import pyarrow as pa

from storage.cfile.block_cache import BlockCache
from storage.cfile.reader import CFileReader
from storage.data_type import ColumnId

ROW_BLOCKS: BlockCache[pa.RecordBatch] = BlockCache(32 << 20)

Owners = dict[tuple[ColumnId, ...], tuple[dict[ColumnId, CFileReader], pa.Schema, int | None]]


def owner_of(
    owners: Owners,
    readers: dict[ColumnId, CFileReader],
    column_ids: tuple[ColumnId, ...],
    arrow_schema: pa.Schema,
) -> int | None:
    """The cache key space of ``column_ids`` read through ``readers`` as ``arrow_schema``;
    None when a column has no file (it reads its default) or a file's type is not the
    schema's (an altered column, cast by the general path)."""
    entry = owners.get(column_ids)
    if entry is not None and entry[0] is readers and entry[1] is arrow_schema:
        return entry[2]
    owner: int | None = None
    if all(
        c in readers and readers[c].data_type.arrow_type == field.type
        for c, field in zip(column_ids, arrow_schema, strict=True)
    ):
        owner = ROW_BLOCKS.new_owner()
    owners[column_ids] = (readers, arrow_schema, owner)
    return owner


def block_batch(
    owner: int,
    readers: dict[ColumnId, CFileReader],
    column_ids: tuple[ColumnId, ...],
    arrow_schema: pa.Schema,
    idx: int,
) -> pa.RecordBatch | None:
    """Block ``idx`` of ``column_ids`` as one batch of ``arrow_schema`` (None if a decoded
    block's type is not the schema's after all)."""
    batch = ROW_BLOCKS.get(owner, idx)
    if batch is not None:
        return batch
    arrays = [readers[c].read_block_arrow(idx) for c in column_ids]
    if any(a.type != f.type for a, f in zip(arrays, arrow_schema, strict=True)):
        return None
    made = pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)
    return ROW_BLOCKS.get_or_load(owner, idx, lambda: made, lambda b: b.nbytes)
