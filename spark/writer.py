"""Exactly-once writes: every task prepares its rows, the driver commits the job's prepared set.

Each task opens a transaction, writes its Arrow batches with ``COPY t (cols)
FROM STDIN (FORMAT arrow)`` and ends with ``PREPARE TRANSACTION`` under a gid
naming the job, the partition and the attempt: the rows are durable but
nobody sees them.  On the driver, ``commit`` runs ``COMMIT PREPARED`` for
the gids the successful attempts reported and ``ROLLBACK PREPARED`` for every
other gid of the job (attempts that prepared and then failed, or were
superseded by a speculative copy); ``abort`` rolls back every gid of the job.
When every task succeeded at its first attempt no other gid of the job can
exist, so ``commit`` commits the reported gids without listing
``pg_prepared_xacts``: a session's first catalog query costs the server a
fraction of a second, a tenth of a million-row job's time.
So each row lands once, or (abort) not at all, whatever Spark retries.  A
retried attempt first rolls back what its failed predecessors prepared (their
rows lock the keys it writes); speculative execution, where two attempts of a
task may both succeed, is not supported.  A
driver that dies before committing leaves its gids in ``pg_prepared_xacts``,
where they hold their rows' locks until someone commits or rolls them back.

``overwrite`` writes the tasks' rows into a staging table the same way and
then, in one transaction, deletes the table's rows and inserts the staged
ones, so readers see the old table or the new one, never a mix.  An append
with the ``upsert`` option stages the same way and then, in one transaction,
runs ``INSERT ... SELECT ... ON CONFLICT (primary key) DO UPDATE`` from the
stage: rows with a new key are inserted, rows with a key the table holds
replace that row's other columns (a key twice in one job fails the job with
PostgreSQL's 21000, as the INSERT would, and changes nothing).  Spark takes
only append and overwrite from a Python data source; ``errorifexists`` and
``ignore`` are the ``save_mode`` option, against a table that holds rows.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from spark.options import Options, quote_identifier, quote_literal
from spark.wire import connect
from spark.worker_gc import freeze_imports

GID_PREFIX = "nyala-spark"
COPY_CHUNK_BYTES = 1 << 20
"""The IPC stream goes to the server in CopyData of about this size (Spark hands the writer
batches of ``spark.sql.execution.arrow.maxRecordsPerBatch`` rows, 10,000 by default)."""


@dataclass
class PreparedTask(WriterCommitMessage):
    """What a successful task attempt tells the driver: its gid and rows (None: wrote nothing)."""

    gid: str | None
    rows: int
    attempt: int = 0


class SaveModeError(Exception):
    """``save_mode`` errorifexists against a table that already holds rows."""


class NyalaWriter(DataSourceArrowWriter):
    """Created on the driver (which decides the job id and the target), pickled to each task."""

    def __init__(self, options: Options, schema: StructType, overwrite: bool) -> None:
        if options.table is None:
            raise ValueError('writing takes a "table", not a "query"')
        self.options = options
        self.columns = [f.name for f in schema.fields]
        self.job = uuid.uuid4().hex[:16]
        self.overwrite = overwrite
        self.skip = False
        self.target = options.relation()
        with connect(options) as conn:
            if options.save_mode in ("errorifexists", "ignore"):
                has_rows = conn.execute(f"SELECT 1 FROM {self.target} LIMIT 1").fetchone()
                if has_rows is not None and options.save_mode == "errorifexists":
                    raise SaveModeError(f"table {options.table} already holds rows")
                self.skip = has_rows is not None
            self.stage = None
            self.conflict: tuple[list[str], list[str]] | None = None
            if options.upsert:
                if overwrite:
                    raise ValueError('"upsert" appends: it does not go with mode("overwrite")')
                self.conflict = self._key_and_rest(conn)
            if overwrite or options.upsert:
                self.stage = quote_identifier(f"nyala_spark_stage_{self.job}")
                types = dict(
                    conn.execute(
                        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
                        " WHERE attrelid = %s::regclass AND attnum > 0",
                        (options.table,),
                    ).fetchall()
                )
                missing = [c for c in self.columns if c not in types]
                if missing:
                    raise ValueError(f"table {options.table} has no columns {missing}")
                columns = ", ".join(f"{quote_identifier(c)} {types[c]}" for c in self.columns)
                conn.execute(f"CREATE TABLE {self.stage} ({columns})")

    def _key_and_rest(self, conn: object) -> tuple[list[str], list[str]]:
        """The table's primary key columns, and the written columns an upsert sets."""
        cursor = conn.execute(  # type: ignore[attr-defined]
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
            " AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary",
            (self.options.table,),
        )
        key = [row[0] for row in cursor]
        if not key:
            raise ValueError(f'"upsert" needs a primary key, and {self.options.table} has none')
        absent = [c for c in key if c not in self.columns]
        if absent:
            raise ValueError(f'"upsert" writes every primary key column; missing {absent}')
        return key, [c for c in self.columns if c not in key]

    def _column_list(self) -> str:
        return ", ".join(quote_identifier(c) for c in self.columns)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PreparedTask:
        """One task: COPY its batches in a transaction, then PREPARE it (executor)."""
        freeze_imports()
        if self.skip:
            return PreparedTask(None, 0)
        context = TaskContext.get()
        partition = context.partitionId() if context is not None else 0
        attempt = context.attemptNumber() if context is not None else 0
        gid = f"{GID_PREFIX}-{self.job}-{partition}-{attempt}"
        target = self.stage or self.target
        rows = 0
        with connect(self.options) as conn:
            if attempt > 0:
                self._roll_back_earlier_attempts(conn, partition, gid)
            conn.execute("BEGIN")
            copy_sql = f"COPY {target} ({self._column_list()}) FROM STDIN (FORMAT arrow)"
            with conn.cursor().copy(copy_sql) as copy:
                sink: pa.ipc.RecordBatchStreamWriter | None = None
                buffer = io.BytesIO()
                for batch in iterator:
                    if sink is None:
                        sink = pa.ipc.new_stream(buffer, batch.schema)
                    sink.write_batch(batch)
                    rows += batch.num_rows
                    if buffer.tell() >= COPY_CHUNK_BYTES:
                        copy.write(buffer.getvalue())
                        buffer.seek(0)
                        buffer.truncate()
                if sink is not None:
                    sink.close()
                    copy.write(buffer.getvalue())
                else:
                    copy.write(_empty_stream(self.columns))
            conn.execute(f"PREPARE TRANSACTION {quote_literal(gid)}")
        if partition in self.options.fail_after_prepare and attempt == 0:
            raise RuntimeError(f"fault injected after PREPARE TRANSACTION {gid}")
        return PreparedTask(gid, rows, attempt)

    def _roll_back_earlier_attempts(
        self, conn: psycopg.Connection[Any], partition: int, gid: str
    ) -> None:
        """A retried task: roll back what its failed predecessors prepared (executor).

        Their rows hold their keys' locks, which this attempt's rows need, and
        Spark never commits them.  A first attempt has no predecessor, so it skips
        this catalog query (one per task made a small write's server time longer).
        """
        stale = f"{GID_PREFIX}-{self.job}-{partition}-%"
        for (old,) in conn.execute(
            "SELECT gid FROM pg_prepared_xacts WHERE gid LIKE %s AND gid <> %s", (stale, gid)
        ).fetchall():
            conn.execute(f"ROLLBACK PREPARED {quote_literal(old)}")

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Commit the successful attempts' transactions, roll back every other one (driver)."""
        freeze_imports()
        keep = {m.gid for m in messages if isinstance(m, PreparedTask) and m.gid is not None}
        with connect(self.options) as conn:
            if self._first_attempts_only(messages):
                self._commit_reported(conn, sorted(keep), messages)
            else:
                self._commit_sweeping(conn, keep, messages)
            if self.stage is not None:
                try:
                    with conn.transaction():
                        self._publish(conn)
                finally:
                    conn.execute(f"DROP TABLE {self.stage}")

    @staticmethod
    def _first_attempts_only(messages: list[WriterCommitMessage | None]) -> bool:
        """Whether every task succeeded at attempt 0: then no other attempt ever prepared
        (a retried or speculative attempt has a higher number)."""
        return all(isinstance(m, PreparedTask) and m.attempt == 0 for m in messages)

    def _commit_reported(
        self,
        conn: psycopg.Connection[Any],
        gids: list[str],
        messages: list[WriterCommitMessage | None],
    ) -> None:
        """Commit the reported gids; one that vanished (someone else resolved it) ends the job:
        the gids not yet committed are rolled back (driver)."""
        for gid in gids:
            try:
                conn.execute(f"COMMIT PREPARED {quote_literal(gid)}")
            except psycopg.errors.UndefinedObject:
                self.abort(messages)
                raise RuntimeError(f"prepared transaction vanished: {gid}") from None

    def _commit_sweeping(
        self,
        conn: psycopg.Connection[Any],
        keep: set[str],
        messages: list[WriterCommitMessage | None],
    ) -> None:
        """Commit the reported gids and roll back every other gid of the job (driver)."""
        prepared = self._job_gids(conn)
        missing = keep - set(prepared)
        if missing:  # only with speculative attempts, which this writer does not support
            self.abort(messages)
            raise RuntimeError(f"prepared transactions vanished: {sorted(missing)}")
        for gid in prepared:
            verb = "COMMIT" if gid in keep else "ROLLBACK"
            conn.execute(f"{verb} PREPARED {quote_literal(gid)}")

    def _publish(self, conn: object) -> None:
        """Move the staged rows into the table: replacing it (overwrite) or upserting (driver)."""
        columns = self._column_list()
        insert = f"INSERT INTO {self.target} ({columns}) SELECT {columns} FROM {self.stage}"
        if self.conflict is None:
            conn.execute(f"DELETE FROM {self.target}")  # type: ignore[attr-defined]
            conn.execute(insert)  # type: ignore[attr-defined]
            return
        key, rest = self.conflict
        action = (
            "DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in map(quote_identifier, rest))
            if rest
            else "DO NOTHING"
        )
        keys = ", ".join(map(quote_identifier, key))
        conn.execute(f"{insert} ON CONFLICT ({keys}) {action}")  # type: ignore[attr-defined]

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """The job failed: roll back every transaction it prepared (driver)."""
        freeze_imports()
        with connect(self.options) as conn:
            for gid in self._job_gids(conn):
                conn.execute(f"ROLLBACK PREPARED {quote_literal(gid)}")
            if self.stage is not None:
                conn.execute(f"DROP TABLE IF EXISTS {self.stage}")

    def _job_gids(self, conn: object) -> list[str]:
        pattern = f"{GID_PREFIX}-{self.job}-%"
        cursor = conn.execute(  # type: ignore[attr-defined]
            "SELECT gid FROM pg_prepared_xacts WHERE gid LIKE %s ORDER BY gid", (pattern,)
        )
        return [row[0] for row in cursor]


def _empty_stream(columns: list[str]) -> bytes:
    """A stream with no batches: the COPY still needs a schema to check the columns against."""
    schema = pa.schema([pa.field(name, pa.null()) for name in columns])
    sink = pa.BufferOutputStream()
    pa.ipc.new_stream(sink, schema).close()
    return sink.getvalue().to_pybytes()
