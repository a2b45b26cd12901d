"""BackendRegistry: every session of a database, what it is doing now, and how to stop it.

pg_stat_activity, pg_locks, pg_blocking_pids and pg_cancel_backend /
pg_terminate_backend read this registry; each session registers one
``Backend`` when it starts and removes it when it closes.  A session writes
its own entry (state, query, times) and other sessions only read it, so no
lock is held while a statement runs; the registry's lock guards only the map.
The server supplies ``cancel`` and ``terminate``, which reach the client's
connection; an embedded session (no server) can only be cancelled.
"""

from __future__ import annotations

import datetime as dt
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from storage.transaction import Transaction

_EMBEDDED_PIDS = itertools.count(1 << 30)
"""Process ids for sessions opened without a server (the server hands out smaller ones)."""


class TransactionSource(Protocol):
    """What a backend's transaction block shows: the transaction and when it started."""

    @property
    def txn(self) -> Transaction | None: ...

    @property
    def started(self) -> dt.datetime | None: ...


@dataclass(frozen=True, slots=True)
class ClientLink:
    """What the server tells a new session about its client: the process id it reported
    in BackendKeyData, the peer address, and how to cancel or end the connection."""

    process_id: int
    client_addr: str | None
    client_port: int | None
    cancel: Callable[[], object]
    terminate: Callable[[], object]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


_IDLE_STATES = {"I": "idle", "T": "idle in transaction"}


@dataclass(slots=True)
class CopyProgress:
    """A running COPY as pg_stat_progress_copy shows it; its session bumps the counters once
    per CopyData message and per batch written, and clears ``running`` when it ends."""

    relid: int
    command: str
    type: str
    bytes_processed: int = 0
    bytes_total: int = 0
    tuples_processed: int = 0
    tuples_excluded: int = 0
    running: bool = True


@dataclass(eq=False, slots=True)
class Backend:
    """One session as pg_stat_activity shows it; ``state`` etc. are written by its own session."""

    pid: int
    user: str
    database: str
    block: TransactionSource
    cancel: Callable[[], object]
    terminate: Callable[[], object]
    application_name: str = ""
    client_addr: str | None = None
    client_port: int | None = None
    backend_start: dt.datetime = field(default_factory=_now)
    state: str = "idle"
    query: str = ""
    _query_start_s: float | None = field(default=None, init=False)
    _state_change_s: float = field(default_factory=time.time, init=False)
    """When the statement began and the state last changed, as ``time.time()``: a float
    per statement, a datetime only when pg_stat_activity is read."""
    closed: threading.Event = field(default_factory=threading.Event)
    terminated: bool = False
    """pg_terminate_backend() ended it (pg_stat_database.sessions_killed)."""
    copy: CopyProgress | None = None
    """Its COPY, while one runs."""

    @property
    def query_start(self) -> dt.datetime | None:
        started = self._query_start_s
        return None if started is None else dt.datetime.fromtimestamp(started, dt.UTC)

    @property
    def state_change(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self._state_change_s, dt.UTC)

    def begin_statement(self, query: str) -> None:
        now = time.time()
        self.query, self._query_start_s, self.state, self._state_change_s = (
            query, now, "active", now
        )  # fmt: skip

    def go_idle(self, transaction_status: str) -> None:
        """Back at ReadyForQuery: idle, idle in a block, or idle in a failed block."""
        state = _IDLE_STATES.get(transaction_status, "idle in transaction (aborted)")
        if state != self.state:
            self.state, self._state_change_s = state, time.time()

    @property
    def transaction(self) -> Transaction | None:
        return self.block.txn

    @property
    def xact_start(self) -> dt.datetime | None:
        """When the transaction began; a statement outside any block is its own transaction."""
        if self.block.txn is not None and self.block.started is not None:
            return self.block.started
        return self.query_start if self.state == "active" else None


class BackendRegistry:
    """The database's backends by process id; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._backends: dict[int, Backend] = {}

    @staticmethod
    def embedded_pid() -> int:
        return next(_EMBEDDED_PIDS)

    def add(self, backend: Backend) -> None:
        with self._lock:
            self._backends[backend.pid] = backend

    def remove(self, backend: Backend) -> None:
        with self._lock:
            if self._backends.get(backend.pid) is backend:
                del self._backends[backend.pid]
        backend.closed.set()

    def get(self, pid: int) -> Backend | None:
        with self._lock:
            return self._backends.get(pid)

    def all(self) -> list[Backend]:
        with self._lock:
            return sorted(self._backends.values(), key=lambda b: b.backend_start)
