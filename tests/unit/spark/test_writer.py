"""NyalaWriter.write on an executor and commit on the driver: which statements they send.

A fake connection records the SQL; no server and no Spark job are needed.  A
first attempt goes straight to BEGIN and COPY (no predecessor can have
prepared anything); a retry first rolls back what earlier attempts prepared.
A job whose tasks all succeeded at attempt 0 commits their gids without
listing ``pg_prepared_xacts``; one with a retried task sweeps the job's gids.
The Arrow stream reaches COPY in chunks of about ``COPY_CHUNK_BYTES``, and their
concatenation is one stream holding every row.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from spark import writer as writer_module
from spark.options import Options
from spark.writer import COPY_CHUNK_BYTES, GID_PREFIX, NyalaWriter, PreparedTask


class _Copy:
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __enter__(self) -> _Copy:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def write(self, data: bytes) -> None:
        self.chunks.append(bytes(data))


class _Result:
    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows = rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows

    def __iter__(self) -> Any:
        return iter(self.rows)


class _Connection:
    def __init__(self, prepared: list[str]) -> None:
        self.prepared = prepared
        self.statements: list[str] = []
        self.chunks: list[bytes] = []

    def __enter__(self) -> _Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> _Result:
        self.statements.append(sql)
        if "pg_prepared_xacts" in sql:
            other = params[1] if len(params) > 1 else None
            return _Result([(gid,) for gid in self.prepared if gid != other])
        return _Result([])

    def cursor(self) -> _Connection:
        return self

    def copy(self, sql: str) -> _Copy:
        self.statements.append(sql)
        return _Copy(self.chunks)


class _Context:
    def __init__(self, partition: int, attempt: int) -> None:
        self._partition, self._attempt = partition, attempt

    def partitionId(self) -> int:  # noqa: N802 (PySpark's name)
        return self._partition

    def attemptNumber(self) -> int:  # noqa: N802 (PySpark's name)
        return self._attempt


def _writer() -> NyalaWriter:
    writer = object.__new__(NyalaWriter)  # __init__ asks the server about the table
    writer.options = Options.parse({"table": "sink"})
    writer.columns = ["id", "host"]
    writer.job = "job1"
    writer.overwrite = False
    writer.skip = False
    writer.target = '"sink"'
    writer.stage = None
    writer.conflict = None
    return writer


def _run(monkeypatch, attempt: int, batches: list[pa.RecordBatch], prepared: list[str]):
    conn = _Connection(prepared)
    monkeypatch.setattr(writer_module, "connect", lambda options: conn)
    monkeypatch.setattr(writer_module.TaskContext, "get", lambda: _Context(3, attempt))
    return conn, _writer().write(iter(batches))


def _batches(count: int, rows: int) -> list[pa.RecordBatch]:
    return [
        pa.record_batch(
            {
                "id": pa.array(range(i * rows, (i + 1) * rows), pa.int64()),
                "host": pa.array([f"host-{j % 16}" for j in range(rows)]),
            }
        )
        for i in range(count)
    ]


def test_a_first_attempt_skips_the_lookup_of_earlier_attempts(monkeypatch):
    conn, result = _run(monkeypatch, 0, _batches(3, 10), [])
    assert not any("pg_prepared_xacts" in sql for sql in conn.statements)
    assert conn.statements[0] == "BEGIN"
    assert conn.statements[-1] == f"PREPARE TRANSACTION '{GID_PREFIX}-job1-3-0'"
    assert result == PreparedTask(f"{GID_PREFIX}-job1-3-0", 30)


def test_a_retry_rolls_back_what_earlier_attempts_prepared(monkeypatch):
    earlier = f"{GID_PREFIX}-job1-3-0"
    conn, result = _run(monkeypatch, 1, _batches(1, 5), [earlier])
    lookup = next(i for i, sql in enumerate(conn.statements) if "pg_prepared_xacts" in sql)
    assert conn.statements[lookup + 1] == f"ROLLBACK PREPARED '{earlier}'"
    assert conn.statements.index("BEGIN") > lookup + 1
    assert result == PreparedTask(f"{GID_PREFIX}-job1-3-1", 5, attempt=1)


@pytest.mark.parametrize("count, rows", [(40, 10_000), (3, 7), (0, 0)])
def test_the_copy_gets_one_stream_in_large_chunks(monkeypatch, count, rows):
    batches = _batches(count, rows)
    conn, result = _run(monkeypatch, 0, batches, [])
    stream = b"".join(conn.chunks)
    table = pa.ipc.open_stream(stream).read_all()
    assert table.num_rows == count * rows == result.rows
    if batches:
        assert table.column("id").to_pylist() == list(range(count * rows))
    # every chunk but the last holds at least COPY_CHUNK_BYTES: no CopyData per small batch
    assert all(len(chunk) >= COPY_CHUNK_BYTES for chunk in conn.chunks[:-1])
    assert len(conn.chunks) <= max(1, len(stream) // COPY_CHUNK_BYTES + 1)


def _commit(monkeypatch, messages: list[PreparedTask], prepared: list[str]) -> _Connection:
    conn = _Connection(prepared)
    monkeypatch.setattr(writer_module, "connect", lambda options: conn)
    _writer().commit(list(messages))
    return conn


def test_a_job_of_first_attempts_commits_its_gids_without_the_lookup(monkeypatch):
    gids = [f"{GID_PREFIX}-job1-{p}-0" for p in range(3)]
    conn = _commit(monkeypatch, [PreparedTask(g, 10) for g in gids], gids)
    assert conn.statements == [f"COMMIT PREPARED '{g}'" for g in gids]


def test_a_job_with_a_retried_task_rolls_back_the_gids_nobody_reported(monkeypatch):
    failed = f"{GID_PREFIX}-job1-1-0"
    kept = [f"{GID_PREFIX}-job1-0-0", f"{GID_PREFIX}-job1-1-1"]
    messages = [PreparedTask(kept[0], 10), PreparedTask(kept[1], 10, attempt=1)]
    conn = _commit(monkeypatch, messages, sorted([*kept, failed]))
    assert "pg_prepared_xacts" in conn.statements[0]
    assert sorted(conn.statements[1:]) == sorted(
        [f"COMMIT PREPARED '{kept[0]}'", f"COMMIT PREPARED '{kept[1]}'",
         f"ROLLBACK PREPARED '{failed}'"]
    )  # fmt: skip
