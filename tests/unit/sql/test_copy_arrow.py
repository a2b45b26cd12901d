"""ArrowStreamCutter: an Arrow IPC stream cut anywhere comes back as the same rows."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sql.copy.arrow_format import ArrowStreamCutter
from sql.frontend import copy_grammar
from sql.frontend.parser import split
from storage.errors import BadCopyFileFormat


def _stream(table: pa.Table, chunk: int) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=chunk)
    return sink.getvalue().to_pybytes()


TABLE = pa.table({
    "id": pa.array(range(10), pa.int64()),
    "tag": pa.array(["a", "b", None, "a", "c"] * 2).dictionary_encode(),
    "x": pa.array([i / 2 if i % 3 else None for i in range(10)]),
})  # fmt: skip


@pytest.mark.parametrize("step", [1, 3, 8, 64, 10_000])
def test_any_cut_gives_the_same_rows(step):
    data = _stream(TABLE, 3)
    cutter = ArrowStreamCutter()
    parts = []
    for start in range(0, len(data), step):
        table = cutter.feed(data[start : start + step])
        if table is not None:
            parts.append(table)
    cutter.finish()
    assert cutter.saw_end
    assert cutter.schema == TABLE.schema
    assert pa.concat_tables(parts).to_pylist() == TABLE.to_pylist()


@pytest.mark.parametrize("step", [7, 200, 10_000])
def test_batches_wait_until_they_hold_batch_bytes(step):
    """Small batches are written together; the stream's end or finish() hands over the rest."""
    data = _stream(TABLE, 1)
    batch_bytes = len(data) // 3
    cutter = ArrowStreamCutter(batch_bytes)
    parts = []
    for start in range(0, len(data), step):
        table = cutter.feed(data[start : start + step])
        if table is not None:
            parts.append(table)
    rest = cutter.finish()
    if rest is not None:
        parts.append(rest)
    assert len(parts) < TABLE.num_rows
    assert len(parts) == 1 or step < len(data)
    assert pa.concat_tables(parts).to_pylist() == TABLE.to_pylist()


def test_finish_hands_over_batches_of_a_stream_without_its_end_marker():
    data = _stream(TABLE, 4)[:-8]
    cutter = ArrowStreamCutter(len(data) * 2)
    assert cutter.feed(data) is None
    rest = cutter.finish()
    assert rest is not None and rest.to_pylist() == TABLE.to_pylist()


def test_a_stream_without_its_end_marker_ends_between_messages():
    data = _stream(TABLE, 4)[:-8]
    cutter = ArrowStreamCutter()
    assert cutter.feed(data).num_rows == 10
    cutter.finish()


@pytest.mark.parametrize(
    "data",
    [b"PGCOPY\n\xff\r\n\x00" + bytes(12), _stream(TABLE, 4)[:-30], b""],
)
def test_garbage_or_truncated_input_is_22p04(data):
    cutter = ArrowStreamCutter()
    with pytest.raises(BadCopyFileFormat):
        cutter.feed(data)
        cutter.finish()


def test_data_after_the_end_is_refused():
    cutter = ArrowStreamCutter()
    with pytest.raises(BadCopyFileFormat):
        cutter.feed(_stream(TABLE, 4) + b"\x00" * 8)


def test_arrow_is_a_copy_format_without_text_options():
    sql = "copy t to stdout (format arrow)"
    statement = copy_grammar.parse(sql, split(sql)[0])
    assert statement.options.is_arrow and statement.options.is_binary
    assert statement.options.delimiter is None and statement.options.null is None
