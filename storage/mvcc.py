"""MVCC: commit timestamps, the safe time that snapshots read at, and transaction state.

Every committed change carries the commit timestamp of its transaction.  A
snapshot is a timestamp S; a reader sees a change iff it was committed at a
timestamp <= S, or it is the reader's own uncommitted write.  Kudu's
MvccSnapshot also carries a set of in-flight timestamps; we avoid that by
only handing out *safe* snapshots: S = ``safe_time()`` is below every commit
still in flight, so "committed at <= S" is all a reader needs to know.

A commit goes: ``start_commit()`` assigns ts and marks it in flight -> the
WAL record is written and synced -> the transaction's ``TxnState`` is
stamped with ts (all its writes become visible together) ->
``finish_commit(ts)`` -> ``wait_for_safe_time(ts)``, so the client's next
statement, which snapshots at ``safe_time()``, sees its own commit.

A small timeline (T1 and T2 commit concurrently; R1..R3 are new snapshots)::

    time ->   10         11          12          13           14
    T1        start(10)  ...wal sync............ finish(10)
    T2                   start(11)   finish(11)
    snapshot  R1=9                   R2=9        R3=13 (now)
                                     ^ 10 still in flight, so 11 is not yet safe

R2 must not see T2 (ts 11): T1 (ts 10) might still land below it, and a
snapshot must never gain rows below its timestamp.  Once T1 finishes,
safe time jumps past both.  T2's client waits in ``wait_for_safe_time(11)``
until then, so its next statement sees its own write.
"""

from __future__ import annotations

import enum
import itertools
import threading

from storage.timestamp import HybridClock, Timestamp

_txn_ids = itertools.count(1)
_progress_lock = threading.Lock()


class TxnStatus(enum.Enum):
    IN_PROGRESS = "in progress"
    COMMITTED = "committed"
    ABORTED = "aborted"


class TxnState:
    """The shared fate of one transaction's writes: every row version it wrote points here.

    ``commit_ts`` is None until commit, then set exactly once, which makes all
    of the transaction's provisional writes visible at the same instant.
    Writers blocked on this transaction's row locks wait on ``wait_progress``:
    a ROLLBACK TO SAVEPOINT gives some of them up before the transaction ends.
    The events waiters block on are made by the first waiter: most transactions (every
    autocommit statement's) have none, and an Event costs more than the rest of a state.
    """

    __slots__ = ("txn_id", "commit_ts", "status", "early_releases", "_done", "_progress")

    def __init__(self, txn_id: int | None = None) -> None:
        self.txn_id = next(_txn_ids) if txn_id is None else txn_id
        self.commit_ts: Timestamp | None = None
        self.status = TxnStatus.IN_PROGRESS
        self._done: threading.Event | None = None
        self.early_releases = 0
        """How often the transaction gave up row locks before ending (ROLLBACK TO SAVEPOINT)."""
        self._progress: threading.Event | None = None

    @classmethod
    def committed_at(cls, ts: Timestamp) -> TxnState:
        """A state for writes replayed from the WAL, already committed at ``ts``."""
        state = cls()
        state.commit_ts = ts
        state.status = TxnStatus.COMMITTED
        return state

    @property
    def is_done(self) -> bool:
        return self.status is not TxnStatus.IN_PROGRESS

    def is_visible(self, snapshot: Timestamp, reader: TxnState | None) -> bool:
        """Whether a write by this transaction is visible at ``snapshot`` to ``reader``."""
        return self is reader or (self.commit_ts is not None and self.commit_ts <= snapshot)

    def mark_committed(self, ts: Timestamp | None) -> None:
        """Stamp the commit timestamp (None for a transaction that wrote nothing)."""
        assert self.status is TxnStatus.IN_PROGRESS, "a transaction finishes once"
        self.commit_ts = ts
        self.status = TxnStatus.COMMITTED
        self._wake_done()

    def mark_aborted(self) -> None:
        assert self.status is TxnStatus.IN_PROGRESS, "a transaction finishes once"
        self.status = TxnStatus.ABORTED
        self._wake_done()

    def wait_done(self, timeout_s: float | None = None) -> bool:
        """Block until the transaction commits or aborts; False on timeout."""
        with _progress_lock:
            if self.is_done:
                return True
            event = self._done
            if event is None:
                event = self._done = threading.Event()
        return event.wait(timeout_s)

    def released_early(self) -> None:
        """Some row locks went before the end (ROLLBACK TO SAVEPOINT): wake their waiters."""
        self.early_releases += 1
        self._wake_progress()

    def wait_progress(self, timeout_s: float | None = None) -> bool:
        """Block until the transaction ends or gives up some row locks; False on timeout."""
        with _progress_lock:
            event = self._progress
            if event is None:
                event = self._progress = threading.Event()
        return self.is_done or event.wait(timeout_s)

    def _wake_done(self) -> None:
        """Wake every waiter: the status is set before the lock is taken, so a waiter
        that found it unset under the lock made its event before this reads it."""
        with _progress_lock:
            done, self._done = self._done, None
            progress, self._progress = self._progress, None
        if done is not None:
            done.set()
        if progress is not None:
            progress.set()

    def _wake_progress(self) -> None:
        with _progress_lock:
            event, self._progress = self._progress, None
        if event is not None:
            event.set()

    def __repr__(self) -> str:
        return f"TxnState({self.txn_id}, {self.status.value}, commit_ts={self.commit_ts})"


class MvccManager:
    """Assigns commit timestamps and tracks which are in flight; thread-safe.

    Invariant: ``safe_time()`` never decreases, and every commit with a
    timestamp at or below it has been applied (its TxnState stamped).
    """

    def __init__(self, clock: HybridClock) -> None:
        self._clock = clock
        self._cond = threading.Condition(threading.Lock())
        self._in_flight: set[Timestamp] = set()
        self._safe_floor = Timestamp(0)

    @property
    def clock(self) -> HybridClock:
        return self._clock

    def start_commit(self) -> Timestamp:
        """Assign a commit timestamp and mark it in flight."""
        with self._cond:
            ts = self._clock.now()
            self._in_flight.add(ts)
            return ts

    def finish_commit(self, ts: Timestamp) -> None:
        """Mark the commit at ``ts`` applied and wake anyone waiting for safe time."""
        with self._cond:
            self._in_flight.remove(ts)
            self._cond.notify_all()

    def abort_commit(self, ts: Timestamp) -> None:
        """Forget a commit that failed before it was applied (its WAL write failed)."""
        self.finish_commit(ts)

    def safe_time(self) -> Timestamp:
        """The newest timestamp at or below which every commit is applied: new snapshots use it."""
        with self._cond:
            return self._safe_time_locked()

    def _safe_time_locked(self) -> Timestamp:
        # Taking now() under the lock orders this against start_commit: a commit not yet
        # in flight will get a larger timestamp than the snapshot handed out here.
        safe = Timestamp(min(self._in_flight) - 1) if self._in_flight else self._clock.now()
        if safe > self._safe_floor:
            self._safe_floor = safe
        return self._safe_floor

    def wait_for_safe_time(self, ts: Timestamp) -> None:
        """Block until ``safe_time() >= ts``: every commit at or below ``ts`` is applied."""
        with self._cond:
            while any(t <= ts for t in self._in_flight):
                self._cond.wait()

    def in_flight_count(self) -> int:
        with self._cond:
            return len(self._in_flight)
