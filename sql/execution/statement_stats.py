"""StatementStats: every statement's calls, execution times and rows since the last reset.

The database-wide store behind pg_stat_statements.  Each session records a
statement once it has finished (its rows sent, for a query) under the user,
whether it ran at top level, and its ``Fingerprint``; a failed statement is not
recorded, as in PostgreSQL.  The mean and standard deviation are kept with
Welford's update, so recording is O(1) under one short lock.  Past ``max``
entries the least-called 5% are evicted (PostgreSQL's ``dealloc``).
"""

from __future__ import annotations

import datetime as dt
import math
import threading
from dataclasses import dataclass

DEFAULT_MAX = 5000
"""pg_stat_statements.max's default."""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(slots=True)
class StatementEntry:
    """One (user, query id, top level) statement's counters; times in milliseconds."""

    user: str
    queryid: int
    toplevel: bool
    text: str
    calls: int = 0
    total_ms: float = 0.0
    min_ms: float = 0.0
    max_ms: float = 0.0
    mean_ms: float = 0.0
    sum_squares: float = 0.0
    rows: int = 0

    def add(self, elapsed_ms: float, rows: int) -> None:
        self.calls += 1
        self.rows += rows
        self.total_ms += elapsed_ms
        if self.calls == 1:
            self.min_ms = self.max_ms = self.mean_ms = elapsed_ms
            return
        if elapsed_ms < self.min_ms:
            self.min_ms = elapsed_ms
        elif elapsed_ms > self.max_ms:
            self.max_ms = elapsed_ms
        previous_mean = self.mean_ms
        self.mean_ms += (elapsed_ms - previous_mean) / self.calls
        self.sum_squares += (elapsed_ms - previous_mean) * (elapsed_ms - self.mean_ms)

    def add_many(self, elapsed_ms: float, rows: list[int]) -> None:
        """``add`` of each of ``rows`` with the same ``elapsed_ms`` (a pipelined batch's
        calls), in one step: the running mean and squares combined as for two groups."""
        count = len(rows)
        if count == 0:
            return
        if self.calls == 0:
            self.min_ms = self.max_ms = elapsed_ms
        else:
            self.min_ms = min(self.min_ms, elapsed_ms)
            self.max_ms = max(self.max_ms, elapsed_ms)
        before = self.calls
        self.calls += count
        self.rows += sum(rows)
        self.total_ms += elapsed_ms * count
        delta = elapsed_ms - self.mean_ms
        self.mean_ms += delta * count / self.calls
        self.sum_squares += delta * delta * before * count / self.calls

    @property
    def stddev_ms(self) -> float:
        """The population standard deviation, as PostgreSQL reports it."""
        return math.sqrt(self.sum_squares / self.calls) if self.calls > 1 else 0.0


class StatementStats:
    """The database's statement entries; thread-safe."""

    def __init__(self, capacity: int = DEFAULT_MAX) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, int, bool], StatementEntry] = {}
        self._capacity = capacity
        self.dealloc = 0
        self.stats_reset = _now()

    def record(
        self, user: str, queryid: int, text: str, elapsed_ms: float, rows: int, toplevel: bool
    ) -> None:
        key = (user, queryid, toplevel)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                if len(self._entries) >= self._capacity:
                    self._evict()
                entry = self._entries[key] = StatementEntry(user, queryid, toplevel, text)
            entry.add(elapsed_ms, rows)

    def record_many(
        self, user: str, queryid: int, text: str, elapsed_ms: float, rows: list[int]
    ) -> None:
        """``record`` of a top-level call per entry of ``rows``, each taking ``elapsed_ms``."""
        key = (user, queryid, True)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                if len(self._entries) >= self._capacity:
                    self._evict()
                entry = self._entries[key] = StatementEntry(user, queryid, True, text)
            entry.add_many(elapsed_ms, rows)

    def _evict(self) -> None:
        by_use = sorted(self._entries.items(), key=lambda item: item[1].calls)
        for key, _ in by_use[: max(1, len(by_use) // 20)]:
            del self._entries[key]
        self.dealloc += 1

    def entries(self) -> list[StatementEntry]:
        """A copy of every entry, so a reader never sees one half-updated."""
        with self._lock:
            return [
                StatementEntry(
                    e.user,
                    e.queryid,
                    e.toplevel,
                    e.text,
                    e.calls,
                    e.total_ms,
                    e.min_ms,
                    e.max_ms,
                    e.mean_ms,
                    e.sum_squares,
                    e.rows,
                )  # fmt: skip
                for e in self._entries.values()
            ]

    def reset(self, user: str | None = None, queryid: int | None = None) -> None:
        """Drop the entries of ``user`` and ``queryid`` (None: any); all of them resets
        ``stats_reset`` and ``dealloc`` too, as pg_stat_statements_reset() does."""
        with self._lock:
            if user is None and queryid is None:
                self._entries.clear()
                self.dealloc = 0
                self.stats_reset = _now()
                return
            for key in [
                k
                for k in self._entries
                if (user is None or k[0] == user) and (queryid is None or k[1] == queryid)
            ]:
                del self._entries[key]
