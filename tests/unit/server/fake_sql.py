"""A scripted stand-in for sql.Database and sql.Session, for protocol tests without an engine.

It understands a handful of statement shapes, enough to drive every protocol
path: ``select rows N`` (N int4 rows, in batches of 2), ``select $1`` style
parameter echo, ``begin`` / ``commit`` / ``rollback``, ``fail`` (22012),
``set app X`` (a reported parameter change), ``warn`` (a notice) and
``insert`` (a command tag without rows).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from sql.common.result import PreparedStatement, ReadPause, Result, ResultColumn
from sql.session.ready_state import ReadyState
from sql.session.settings import SessionSettings
from storage.errors import (
    ActiveSqlTransaction,
    DivisionByZero,
    InFailedSqlTransaction,
    InvalidCatalogName,
    QueryCanceled,
)

INT4, TEXT = 23, 25


class FakeSession:
    def __init__(self, user: str, startup: dict[str, str]) -> None:
        self.user = user
        self.startup = startup
        self.in_block = False
        self.failed = False
        self.params = {
            "application_name": startup.get("application_name", ""),
            "client_encoding": "UTF8",
            "DateStyle": "ISO, MDY",
            "server_version": "15.0 (nyala 0.1.0)",
            "session_authorization": user,
            "TimeZone": "UTC",
        }
        self.settings = SessionSettings(user, {})
        self.executed: list[str] = []
        self.cancelled = False
        self.closed = False
        self.prepared_statements: dict[str, object] = {}

    @property
    def transaction_status(self) -> str:
        return "E" if self.failed else ("T" if self.in_block else "I")

    def reported_parameters(self) -> dict[str, str]:
        return dict(self.params)

    def take_notifications(self) -> list[object]:
        return []

    def on_notification(self, wake: object) -> None:
        pass

    def cancel(self) -> None:
        self.cancelled = True

    def report_idle(self) -> None:
        pass

    def ready_for_query(self) -> ReadyState:
        return ReadyState(self.transaction_status, self.reported_parameters(), [])

    def has_cursor(self, name: str) -> bool:
        return False

    def cursor_columns(self, name: str) -> tuple[ResultColumn, ...]:
        raise AssertionError("the fake session has no SQL cursors")

    sync_writes = False

    def runs_inline(self, stmt: PreparedStatement, params: Sequence[Any] = ()) -> bool:
        return stmt.sql.startswith("select short rows")

    pulls: list[int]
    """Per batch of ``select short rows N``, the thread hops taken before it was pulled."""
    hops: Any = None
    """Counts the connection's thread hops (the test's executor), when a test wants them."""

    def batchable(self, stmt: PreparedStatement) -> bool:
        return False

    def fail_statement(self) -> None:
        if self.in_block:
            self.failed = True

    def sync(self) -> None:
        self.syncs = getattr(self, "syncs", 0) + 1

    def sync_ready(self) -> ReadyState | None:
        if self.sync_writes:
            return None
        self.sync()
        return self.ready_for_query()

    def close(self) -> None:
        self.closed = True

    def execute(self, sql: str) -> Iterator[Result]:
        statements = [s.strip() for s in sql.split(";") if s.strip()]
        if not statements:
            yield Result(is_empty_query=True)
            return
        for statement in statements:
            yield self._run(statement, [])

    def prepare(self, sql: str, param_oids: Sequence[int]) -> PreparedStatement:
        text = sql.strip().rstrip(";")
        if not text:
            return PreparedStatement(sql, tuple(param_oids), None, is_empty_query=True)
        count = len(set(re.findall(r"\$(\d+)", text)))
        oids = [*param_oids, *([0] * (count - len(param_oids)))]
        oids = [oid or (TEXT if "::text" in text else INT4) for oid in oids]
        return PreparedStatement(sql, tuple(oids), self._columns(text, oids))

    def execute_prepared(
        self, stmt: PreparedStatement, params: Sequence[object], inline: bool = False
    ) -> Result:
        return self._run(stmt.sql.strip().rstrip(";"), list(params))

    def _columns(self, text: str, oids: list[int]) -> tuple[ResultColumn, ...] | None:
        if text.startswith(("select rows", "select short rows")):
            return (ResultColumn("n", INT4),)
        if text.startswith("select $"):
            return tuple(ResultColumn(f"p{i + 1}", oid) for i, oid in enumerate(oids))
        if text == "select pg_sleep":
            return (ResultColumn("pg_sleep", TEXT),)
        return None

    def _run(self, text: str, params: list[object]) -> Result:
        self.executed.append(text)
        if self.failed and text not in ("commit", "rollback"):
            raise InFailedSqlTransaction("current transaction is aborted")
        if text == "begin":
            notices = [ActiveSqlTransaction("already")] if self.in_block else []
            self.in_block = True
            return Result(command_tag="BEGIN", notices=notices)
        if text in ("commit", "rollback"):
            tag = "ROLLBACK" if self.failed else text.upper()
            self.in_block = self.failed = False
            return Result(command_tag=tag)
        if text == "fail":
            if self.in_block:
                self.failed = True
            raise DivisionByZero("division by zero")
        if text.startswith("set app "):
            self.params["application_name"] = text.removeprefix("set app ")
            return Result(command_tag="SET")
        if text == "insert":
            return Result(command_tag="INSERT 0 1")
        if text == "select pg_sleep":
            if self.cancelled:
                raise QueryCanceled("canceling statement due to user request")
            return Result(columns=self._columns(text, []), batches=iter([]))
        if text.startswith("select rows"):
            count = int(text.split()[2])
            return Result(columns=self._columns(text, []), batches=_batches(count))
        if text.startswith("select short rows"):
            pause = ReadPause()
            batches = self._paused(_batches(int(text.split()[3])), pause)
            return Result(columns=self._columns(text, []), batches=batches, pause=pause)
        if text.startswith("select $"):
            columns = self._columns(text, [c for c in _param_oids(params)])
            arrays = [pa.array([p]) for p in params]
            batch = pa.RecordBatch.from_arrays(arrays, names=[c.name for c in columns or ()])
            return Result(columns=columns, batches=iter([batch]))
        raise AssertionError(f"the fake session does not know {text!r}")

    def _paused(
        self, batches: Iterator[pa.RecordBatch], pause: ReadPause
    ) -> Iterator[pa.RecordBatch]:
        """The first batch is short; before the rest the read says it stops being short."""
        self.pulls = []
        for i, batch in enumerate(batches):
            if i == 1:
                pause.is_due = True
                yield batch.slice(0, 0)
            self.pulls.append(self.hops.calls if self.hops is not None else -1)
            yield batch


def _param_oids(params: list[object]) -> list[int]:
    return [INT4 if isinstance(p, int) else TEXT for p in params]


def _batches(count: int) -> Iterator[pa.RecordBatch]:
    for start in range(0, count, 2):
        values = list(range(start + 1, min(start + 2, count) + 1))
        yield pa.RecordBatch.from_arrays([pa.array(values, pa.int32())], names=["n"])


class FakeDatabase:
    name = "nyala"

    def __init__(self) -> None:
        self.sessions: list[FakeSession] = []

    def session(
        self,
        user: str,
        database: str,
        startup_params: dict[str, str],
        client: object = None,
    ) -> FakeSession:
        if database != self.name:
            raise InvalidCatalogName(f'database "{database}" does not exist')
        session = FakeSession(user, startup_params)
        self.sessions.append(session)
        return session
