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


def test_a_batch_of_calls_sums_up_as_the_calls_one_by_one() -> None:
    """A pipelined batch records its calls at once (``record_many``): the same figures as
    recording each call with the same time."""
    one_by_one, at_once = StatementStats(), StatementStats()
    for stats in (one_by_one, at_once):
        stats.record("alice", 7, "insert", 5.0, 1, True)
    for t in (0.25, 0.25, 0.25):
        one_by_one.record("alice", 7, "insert", t, 1, True)
    at_once.record_many("alice", 7, "insert", 0.25, [1, 1, 1])
    at_once.record_many("bob", 7, "insert", 0.5, [2, 0])
    (expected,) = one_by_one.entries()
    got, bob = at_once.entries()
    assert (got.calls, got.rows, got.min_ms, got.max_ms) == (4, 4, 0.25, 5.0)
    assert (got.total_ms, got.mean_ms) == pytest.approx((expected.total_ms, expected.mean_ms))
    assert got.stddev_ms == pytest.approx(expected.stddev_ms)
    assert (bob.calls, bob.rows, bob.min_ms, bob.max_ms, bob.stddev_ms) == (2, 2, 0.5, 0.5, 0.0)
