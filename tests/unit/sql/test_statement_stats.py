from __future__ import annotations

import numpy as np
import pytest

from sql.execution.statement_stats import StatementStats


def test_times_are_summarised_as_postgresql_reports_them() -> None:
    stats = StatementStats()
    times = [3.0, 1.0, 4.0, 1.5, 9.0]
    for t in times:
        stats.record("alice", 7, "select $1", t, 2, True)
    (entry,) = stats.entries()
    assert (entry.calls, entry.rows, entry.min_ms, entry.max_ms) == (5, 10, 1.0, 9.0)
    assert entry.total_ms == pytest.approx(sum(times))
    assert entry.mean_ms == pytest.approx(np.mean(times))
    assert entry.stddev_ms == pytest.approx(np.std(times))


def test_reset_by_user_or_query_or_all() -> None:
    stats = StatementStats()
    for user in ("alice", "bob"):
        for queryid in (1, 2):
            stats.record(user, queryid, "q", 1.0, 0, True)
    stats.reset(user="alice")
    assert sorted((e.user, e.queryid) for e in stats.entries()) == [("bob", 1), ("bob", 2)]
    stats.reset(queryid=1)
    assert [(e.user, e.queryid) for e in stats.entries()] == [("bob", 2)]
    before = stats.stats_reset
    stats.reset()
    assert stats.entries() == [] and stats.stats_reset >= before


def test_the_least_called_are_evicted_past_the_capacity() -> None:
    stats = StatementStats(capacity=20)
    for queryid in range(20):
        for _ in range(queryid + 1):
            stats.record("u", queryid, "q", 1.0, 0, True)
    stats.record("u", 99, "new", 1.0, 0, True)
    kept = {e.queryid for e in stats.entries()}
    assert 0 not in kept and 99 in kept and 19 in kept
    assert stats.dealloc == 1
