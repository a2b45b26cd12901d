"""TabletRegistry: a database's open tablets by id.

The engine creates, drops and flushes tablets; transactions only look them up.
The registry is the one place both meet, so a transaction needs nothing else
of the engine to find a tablet.  Once closed, it refuses new tablets.  A tablet
found corrupt when the database opened is offline: it is not among the open
tablets, every access to it is XX001 naming it and the damage, and dropping it
removes its files.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from storage.data_type import TabletId
from storage.errors import AdminShutdown, DataCorrupted, InternalError, UndefinedTable
from storage.tablet.tablet import Tablet


class TabletRegistry:
    """The open tablets by id; thread-safe."""

    def __init__(
        self, tablets: dict[TabletId, Tablet], offline: dict[TabletId, str] | None = None
    ) -> None:
        self._tablets = tablets
        self.offline: dict[TabletId, str] = dict(offline or {})
        """Tablets that did not open, with what was wrong."""
        self._lock = threading.Lock()
        self._is_closed = False

    def tablet(self, tablet_id: TabletId) -> Tablet:
        """The tablet with this id (UndefinedTable if there is none, DataCorrupted if it is
        offline)."""
        tablet = self.find(tablet_id)
        if tablet is None:
            reason = self.offline.get(tablet_id)
            if reason is not None:
                raise DataCorrupted(f"tablet {tablet_id} is offline: {reason}")
            raise UndefinedTable(f"tablet {tablet_id} does not exist")
        return tablet

    def find(self, tablet_id: TabletId) -> Tablet | None:
        """The open tablet with this id, or None (also for an offline one).  No lock: one
        ``dict.get`` is atomic under the GIL, and the writers below change the dict with
        single ``dict`` operations, so a reader sees a tablet before or after a change."""
        return self._tablets.get(tablet_id)

    def __contains__(self, tablet_id: TabletId) -> bool:
        return tablet_id in self._tablets

    def __len__(self) -> int:
        with self._lock:
            return len(self._tablets)

    def tablet_ids(self) -> list[TabletId]:
        with self._lock:
            return sorted(self._tablets)

    def tablets(self) -> list[Tablet]:
        with self._lock:
            return list(self._tablets.values())

    @property
    def is_closed(self) -> bool:
        return self._is_closed

    def add(self, tablet_id: TabletId, build: Callable[[], Tablet]) -> None:
        """Register the tablet ``build`` makes; it runs under the lock, so two creators of one
        id cannot both build it."""
        with self._lock:
            self.check_open()
            if tablet_id in self._tablets:
                raise InternalError(f"tablet {tablet_id} already exists")
            self._tablets[tablet_id] = build()

    def remove(self, tablet_id: TabletId, destroy: Callable[[], None]) -> None:
        """Unregister a tablet, then run ``destroy`` (removing its files) under the lock."""
        with self._lock:
            if self._tablets.pop(tablet_id, None) is None and (
                self.offline.pop(tablet_id, None) is None
            ):
                raise UndefinedTable(f"tablet {tablet_id} does not exist")
            destroy()

    def close(self) -> bool:
        """Refuse new tablets from now on; False if already closed."""
        with self._lock:
            if self._is_closed:
                return False
            self._is_closed = True
            return True

    def check_open(self) -> None:
        """Raise AdminShutdown (57P01) once the registry is closed."""
        if self._is_closed:
            raise AdminShutdown("the storage engine is shut down")
