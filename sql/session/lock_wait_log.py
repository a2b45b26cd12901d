"""log_lock_waits: a row-lock wait longer than deadlock_timeout is logged in PostgreSQL's words.

A writer waiting for another transaction's row waits, as pg_locks shows it,
for a ShareLock on the holder's transaction; so the lines read as
PostgreSQL's do (logger ``nyala.locks``, level INFO, as its LOG lines):

    process 4711 still waiting for ShareLock on transaction 748 after 1000.132 ms
    (detail: Process holding the lock: 4710. Wait queue: 4711.)
    process 4711 acquired ShareLock on transaction 748 after 5012.345 ms

The storage calls ``waiting`` every tenth of a second while a wait lasts (with
the cancel check) and ``ended`` when it is over, so nothing runs when no one
waits, and the settings are read only while someone does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from sql.execution.backends import BackendRegistry
from sql.session.settings import SessionSettings, duration_ms
from storage.mvcc import TxnState
from storage.waits_for import WaitsForGraph

log = logging.getLogger("nyala.locks")


class LockWaitLog:
    """One session's lock-wait lines; ``pid`` is the process id it reports."""

    def __init__(
        self,
        settings: SessionSettings,
        backends: BackendRegistry,
        waits_for: WaitsForGraph,
        pid: Callable[[], int],
    ) -> None:
        self._settings = settings
        self._backends = backends
        self._waits_for = waits_for
        self._pid = pid
        self._logged: tuple[float, int] | None = None
        """(start, holder's transaction id) of the wait logged as still waiting."""

    def waiting(self, waiter: TxnState) -> None:
        """Log the wait once it has lasted deadlock_timeout, if log_lock_waits is on."""
        since = self._waits_for.waiting_since(waiter)
        holder = self._waits_for.waiting_for(waiter)
        if since is None or holder is None or (self._logged and self._logged[0] == since):
            return
        if self._settings.get("log_lock_waits") != "on":
            return
        elapsed_ms = (time.monotonic() - since) * 1000
        if elapsed_ms < duration_ms(self._settings.get("deadlock_timeout")):
            return
        self._logged = (since, holder.txn_id)
        pids = {b.transaction.txn_id: b.pid for b in self._backends.all() if b.transaction}
        holders = [str(pids[holder.txn_id])] if holder.txn_id in pids else []
        queue = [
            str(pids[w.txn_id]) for w in self._waits_for.waiters_of(holder) if w.txn_id in pids
        ]
        log.info(
            "process %d still waiting for ShareLock on transaction %d after %.3f ms"
            " (detail: Process holding the lock: %s. Wait queue: %s.)",
            self._pid(), holder.txn_id, elapsed_ms, ", ".join(holders), ", ".join(queue),
        )  # fmt: skip

    def ended(self, acquired: bool) -> None:
        """The wait is over: when it was logged and the lock came, say after how long."""
        logged, self._logged = self._logged, None
        if logged is None or not acquired:
            return
        elapsed_ms = (time.monotonic() - logged[0]) * 1000
        log.info(
            "process %d acquired ShareLock on transaction %d after %.3f ms",
            self._pid(), logged[1], elapsed_ms,
        )  # fmt: skip
