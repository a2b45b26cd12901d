import threading

from storage.mvcc import MvccManager, TxnState, TxnStatus
from storage.timestamp import HybridClock


def _manager() -> MvccManager:
    ticks = iter(range(1_000, 10_000))
    return MvccManager(HybridClock(lambda: next(ticks)))


def test_safe_time_stays_below_the_oldest_commit_in_flight():
    mvcc = _manager()
    t1 = mvcc.start_commit()
    t2 = mvcc.start_commit()
    assert t1 < t2
    assert mvcc.safe_time() == t1 - 1
    mvcc.finish_commit(t2)
    assert mvcc.safe_time() == t1 - 1  # t2 is applied, but t1 could still land below it
    mvcc.finish_commit(t1)
    assert mvcc.safe_time() > t2


def test_safe_time_never_goes_backwards_and_later_commits_land_above_it():
    mvcc = _manager()
    snapshot = mvcc.safe_time()
    ts = mvcc.start_commit()
    assert ts > snapshot
    assert mvcc.safe_time() >= snapshot
    mvcc.finish_commit(ts)


def test_visibility_timeline():
    """T1 commits at 10, T2 writes but is in flight; readers at several snapshots."""
    t1, t2, reader = TxnState(), TxnState(), TxnState()
    t1.mark_committed(10)
    assert not t1.is_visible(9, None)
    assert t1.is_visible(10, None) and t1.is_visible(11, reader)
    assert not t2.is_visible(100, None)
    assert t2.is_visible(0, t2)  # a transaction sees its own writes at any snapshot
    t2.mark_committed(12)
    assert not t2.is_visible(11, reader) and t2.is_visible(12, reader)


def test_committer_waits_until_earlier_commits_are_applied():
    mvcc = _manager()
    slow = mvcc.start_commit()
    fast = mvcc.start_commit()
    mvcc.finish_commit(fast)
    returned = threading.Event()

    def wait_for_fast() -> None:
        mvcc.wait_for_safe_time(fast)
        returned.set()

    thread = threading.Thread(target=wait_for_fast)
    thread.start()
    assert not returned.wait(0.05)
    mvcc.finish_commit(slow)
    assert returned.wait(5)
    thread.join()
    assert mvcc.safe_time() >= fast


def test_txn_state_finishes_once_and_wakes_waiters():
    state = TxnState()
    assert not state.wait_done(0.001)
    state.mark_aborted()
    assert state.wait_done(0) and state.status is TxnStatus.ABORTED and state.is_done
    replayed = TxnState.committed_at(42)
    assert replayed.is_done and replayed.commit_ts == 42


def test_waiters_that_block_before_the_end_all_wake_when_it_comes():
    """The event waiters block on is made by the first of them: waiters before the commit
    (a row's line of writers) all wake at it, one after it returns at once, and a commit
    racing the waiters' arrival loses none of them."""
    for _ in range(50):
        state = TxnState()
        woke: list[bool] = []
        threads = [
            threading.Thread(target=lambda s=state, w=woke: w.append(s.wait_done(10)))
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        state.mark_committed(7)
        for thread in threads:
            thread.join()
        assert woke == [True] * 4
        assert state.wait_done(0) and state.commit_ts == 7
