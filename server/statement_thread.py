"""A connection's statement thread: its calls run there one after another, in order.

Every autocommit write's commit takes a hop to this thread, so a hop must be
cheap: a ``queue.SimpleQueue`` (C, no Python-level Condition) handing over the
call itself, where ``ThreadPoolExecutor.submit`` made a concurrent Future, a
work item and an idle-semaphore check under a Condition for each.  The caller
hears back through its own means (``Connection._run`` wraps the call so it
answers with one ``call_soon_threadsafe``).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Protocol


class Runs(Protocol):
    """Where a connection's statement calls run (tests run them in place)."""

    def submit(self, fn: Callable[[], object], /) -> object: ...

    def shutdown(self, wait: bool = True) -> None: ...


class StatementThread:
    """One thread, started at the first call, that runs the calls submitted in order (a
    daemon: a connection still open when the server process exits does not hold it up)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._calls: queue.SimpleQueue[Callable[[], object] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._is_shut_down = False

    def submit(self, fn: Callable[[], object], /) -> None:
        """Run ``fn`` on the thread after the calls before it; it must catch its own errors."""
        if self._is_shut_down:
            raise RuntimeError("cannot schedule new calls after shutdown")
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
            self._thread.start()
        self._calls.put(fn)

    def shutdown(self, wait: bool = True) -> None:
        """Let the thread end once the calls already submitted have run."""
        if self._is_shut_down:
            return
        self._is_shut_down = True
        if self._thread is None:
            return
        self._calls.put(None)
        if wait:
            self._thread.join()

    def _serve(self) -> None:
        calls = self._calls
        while (fn := calls.get()) is not None:
            fn()
