"""Connections to the server, and COPY's Arrow stream read back as RecordBatches as it arrives."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import psycopg
import pyarrow as pa

from spark.options import Options


def connect(options: Options, autocommit: bool = True) -> psycopg.Connection[Any]:
    return psycopg.connect(autocommit=autocommit, **options.connection_kwargs())  # type: ignore[arg-type]


class _CopyStream(io.RawIOBase):
    """A file over the chunks of a running COPY TO, so pyarrow reads the stream incrementally."""

    def __init__(self, chunks: Iterator[Any]) -> None:
        self._chunks = chunks
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = memoryview(bytes(chunk))
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size


def copy_out_batches(conn: psycopg.Connection[Any], query: str) -> Iterator[pa.RecordBatch]:
    """Run ``COPY (query) TO STDOUT (FORMAT arrow)`` and yield its record batches as they come."""
    with conn.cursor().copy(f"COPY ({query}) TO STDOUT (FORMAT arrow)") as copy:
        chunks = iter(copy)
        yield from pa.ipc.open_stream(io.BufferedReader(_CopyStream(chunks), 1 << 20))
        for _ in chunks:  # CopyDone and CommandComplete come after the stream's end marker
            pass


def copy_out_schema(conn: psycopg.Connection[Any], query: str) -> pa.Schema:
    """The Arrow schema of a query's rows (``query`` should return none)."""
    with conn.cursor().copy(f"COPY ({query}) TO STDOUT (FORMAT arrow)") as copy:
        chunks = iter(copy)
        reader = pa.ipc.open_stream(io.BufferedReader(_CopyStream(chunks), 1 << 16))
        schema = reader.schema
        for _ in reader:
            pass
        for _ in chunks:
            pass
    return schema
