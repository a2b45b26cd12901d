"""MaintenanceManager: background threads that run the best-scoring flush or compaction, Kudu's way.

Every maintenance operation (``MaintenanceOp``: a flush, a delta compaction,
history GC, per tablet) reports whether it can run, a score and why.  Each of
``maintenance_threads`` workers wakes every polling interval (or when woken:
a commit that filled a MemRowSet), takes the runnable op with the highest
score whose tablet no other worker is busy with, and performs it.  Ops do
their own locking; none holds a tablet lock across file I/O.

What it knows is shown as it happens: ``status()`` lists the registered ops
with their scores and reasons, the running ones and the recent ones with
duration and bytes read and written (the ``nyala_maintenance`` system view).
"""

from __future__ import annotations

import bisect
import collections
import dataclasses
import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

from storage.data_type import TabletId

log = logging.getLogger(__name__)

RECENT_OPS = 64
CLEANUP_KINDS = frozenset(
    {"MinorDeltaCompactionOp", "MajorDeltaCompactionOp", "UndoDeltaGCOp", "CompactRowSetsOp"}
)
"""The ops that do what VACUUM does in PostgreSQL: fold or drop old row versions (a flush
only writes the MemRowSet out)."""


@dataclass(frozen=True, slots=True)
class OpStats:
    """An op's current standing: whether it can run, how much running it would help, why."""

    runnable: bool
    score: float
    reason: str


@dataclass(frozen=True, slots=True)
class OpResult:
    """What a run of an op cost."""

    bytes_read: int = 0
    bytes_written: int = 0
    detail: str = ""


class MaintenanceOp(ABC):
    """One kind of background work on one tablet."""

    kind: str = ""

    def __init__(self, tablet_id: TabletId) -> None:
        self.tablet_id = tablet_id

    @property
    def name(self) -> str:
        return f"{self.kind}({self.tablet_id})"

    @abstractmethod
    def stats(self) -> OpStats:
        """Score the op now; cheap (called every polling interval)."""

    @abstractmethod
    def perform(self) -> OpResult:
        """Do the work; crash-safe on its own (temporary files, one metadata swap)."""


@dataclass(frozen=True, slots=True)
class OpRecord:
    """A registered, running or finished op as the status view shows it."""

    op: str
    kind: str
    tablet_id: int
    state: str
    score: float
    reason: str
    started_at: float | None = None
    duration_s: float | None = None
    bytes_read: int | None = None
    bytes_written: int | None = None
    error: str | None = None


DURATION_BUCKETS_S = (0.01, 0.05, 0.25, 1.0, 5.0, 30.0, 120.0, 600.0)
"""Upper bounds of the op-duration histogram ``OpTotals`` keeps (seconds; +Inf follows)."""


@dataclass(slots=True)
class OpTotals:
    """Everything one kind of op has done since the engine opened (for /metrics)."""

    runs: int = 0
    failures: int = 0
    seconds: float = 0.0
    bytes_read: int = 0
    bytes_written: int = 0
    buckets: list[int] = field(default_factory=lambda: [0] * (len(DURATION_BUCKETS_S) + 1))
    """Runs per duration bucket (not cumulative), the last one past every bound."""

    def add(self, record: OpRecord) -> None:
        seconds = record.duration_s or 0.0
        self.runs += 1
        self.failures += record.error is not None
        self.seconds += seconds
        self.bytes_read += record.bytes_read or 0
        self.bytes_written += record.bytes_written or 0
        self.buckets[bisect.bisect_left(DURATION_BUCKETS_S, seconds)] += 1


OpSource = Callable[[], list[MaintenanceOp] | None]
"""Every op that could run now (the engine lists its tablets' ops); None once the engine is
gone (a test that never closed it), which stops the workers."""


class MaintenanceManager:
    """A pool of worker threads running the best op, one per tablet at a time."""

    def __init__(self, ops: OpSource, threads: int, polling_interval_ms: int) -> None:
        self._ops = ops
        self._threads = threads
        self._interval_s = polling_interval_ms / 1000
        self._cond = threading.Condition()
        self._stopping = False
        self._workers: list[threading.Thread] = []
        self._busy_tablets: set[TabletId] = set()
        self._running: dict[str, OpRecord] = {}
        self._recent: collections.deque[OpRecord] = collections.deque(maxlen=RECENT_OPS)
        self._last_scores: list[OpRecord] = []
        self._totals: dict[str, OpTotals] = {}
        self._finished: dict[TabletId, dict[str, tuple[float, int]]] = {}
        self.completed = 0

    @property
    def enabled(self) -> bool:
        return self._threads > 0

    def start(self) -> None:
        for number in range(self._threads):
            worker = threading.Thread(target=self._work, name=f"maintenance-{number}", daemon=True)
            worker.start()
            self._workers.append(worker)

    def wake(self) -> None:
        """Re-score now (a commit filled a MemRowSet)."""
        with self._cond:
            self._cond.notify()

    def shutdown(self) -> None:
        """Stop the workers, letting running ops finish."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        for worker in self._workers:
            worker.join()
        self._workers.clear()

    def _work(self) -> None:
        ran = False
        while True:
            with self._cond:
                if self._stopping:
                    return
                if not ran:  # after an op, look again at once: more may be worth doing
                    self._cond.wait(self._interval_s)
                if self._stopping:
                    return
            try:
                ran = self.run_once()
            except Exception:
                ran = False
                log.exception("maintenance scheduling failed")

    def _pick(self) -> tuple[MaintenanceOp, OpStats] | None:
        """The runnable op with the best score on a tablet nobody is busy with; marks it
        running."""
        scored = self._score()
        if scored is None:
            with self._cond:
                self._stopping = True
            return None
        with self._cond:
            candidates = [
                (s.score, op.name, op, s)
                for op, s in scored
                if s.runnable and s.score > 0 and op.tablet_id not in self._busy_tablets
            ]
            if not candidates:
                return None
            _, _, op, stats = max(candidates, key=lambda c: (c[0], c[1]))
            self._busy_tablets.add(op.tablet_id)
            self._running[op.name] = OpRecord(
                op.name, op.kind, op.tablet_id, "running", stats.score, stats.reason, time.time()
            )
            return op, stats

    def _score(self) -> list[tuple[MaintenanceOp, OpStats]] | None:
        """Score every op now and keep the scores for ``status()``; None once the engine is
        gone."""
        ops = self._ops()
        if ops is None:
            return None
        scored = []
        for op in ops:
            try:
                stats = op.stats()
            except Exception as exc:  # a tablet dropped meanwhile, say
                log.debug("scoring %s failed: %s", op.name, exc)
                continue
            scored.append((op, stats))
        with self._cond:
            self._last_scores = [
                OpRecord(op.name, op.kind, op.tablet_id, "registered", s.score, s.reason)
                for op, s in scored
            ]
        return scored

    def run_once(self) -> bool:
        """Run the best op, if one is worth running; return whether one ran."""
        picked = self._pick()
        if picked is None:
            return False
        op, stats = picked
        started = time.time()
        clock = time.monotonic()
        result, error = OpResult(), None
        try:
            result = op.perform()
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            log.exception("maintenance op %s failed", op.name)
        record = OpRecord(
            op.name,
            op.kind,
            op.tablet_id,
            "failed" if error else "done",
            stats.score,
            result.detail or stats.reason,
            started,
            time.monotonic() - clock,
            result.bytes_read,
            result.bytes_written,
            error,
        )
        with self._cond:
            self._busy_tablets.discard(op.tablet_id)
            self._running.pop(op.name, None)
            self._recent.append(record)
            self._totals.setdefault(op.kind, OpTotals()).add(record)
            if error is None:
                by_kind = self._finished.setdefault(op.tablet_id, {})
                by_kind[op.kind] = (time.time(), by_kind.get(op.kind, (0.0, 0))[1] + 1)
            self.completed += 1
            self._cond.notify_all()
        if error is None:
            log.info(
                "maintenance %s done in %.3f s (%s; read %d B, wrote %d B)",
                op.name,
                record.duration_s,
                record.reason,
                result.bytes_read,
                result.bytes_written,
            )
        return True

    def status(self) -> list[OpRecord]:
        """The registered ops as last scored (scored now when no worker runs), the running
        ones, the recent ones (newest last)."""
        if not self.enabled:
            self._score()
        with self._cond:
            return [*self._last_scores, *self._running.values(), *self._recent]

    def finished(self, tablet_id: TabletId) -> dict[str, tuple[float, int]]:
        """Per op kind, when (epoch seconds) one last finished on the tablet and how many have
        since the engine opened (pg_stat_user_tables' last_autovacuum and count)."""
        with self._cond:
            return dict(self._finished.get(tablet_id, {}))

    def totals(self) -> dict[str, OpTotals]:
        """Per op kind, what its runs have done since the engine opened (copies)."""
        with self._cond:
            return {
                kind: dataclasses.replace(t, buckets=list(t.buckets))
                for kind, t in self._totals.items()
            }

    def wait_idle(self, timeout_s: float) -> bool:
        """Block until no op is running and none is worth running (tests, CHECKPOINT)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._cond:
                running = bool(self._running)
            ops = self._ops() or []
            if not running and not any(
                s.runnable and s.score > 0 for s in (op.stats() for op in ops)
            ):
                return True
            time.sleep(0.01)
        return False
