"""LISTEN, NOTIFY and UNLISTEN: notifications between a database's sessions.

As in PostgreSQL, both sides are transactional: a NOTIFY is sent when its
transaction commits (identical ones once), a LISTEN or UNLISTEN takes effect
then, and a rollback drops them.  Delivered notifications wait in the
listener's queue until the server sends them as NotificationResponse, which
it does between transactions; ``wake`` tells the server of new ones when the
connection is idle.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from dataclasses import dataclass

PAYLOAD_LIMIT = 8000
"""PostgreSQL's limit on a NOTIFY payload, in bytes."""


@dataclass(frozen=True, slots=True)
class Notification:
    process_id: int
    channel: str
    payload: str


class NotificationHub:
    """Which listeners listen on which channel, for one database."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[str, set[Listener]] = {}

    def subscribe(self, listener: Listener, channel: str) -> None:
        with self._lock:
            self._listeners.setdefault(channel, set()).add(listener)

    def unsubscribe(self, listener: Listener, channel: str | None) -> None:
        """Stop ``listener`` listening on ``channel`` (None: on every channel)."""
        with self._lock:
            for name in [channel] if channel is not None else list(self._listeners):
                members = self._listeners.get(name)
                if members is not None:
                    members.discard(listener)
                    if not members:
                        del self._listeners[name]

    def publish(self, notifications: list[Notification]) -> None:
        for notification in notifications:
            with self._lock:
                members = list(self._listeners.get(notification.channel, ()))
            for listener in members:
                listener.deliver(notification)


class Listener:
    """One session's side: its queue, and what its open transaction will do at commit."""

    def __init__(self, hub: NotificationHub, process_id: Callable[[], int]) -> None:
        self._hub = hub
        self._process_id = process_id
        self._queue: collections.deque[Notification] = collections.deque()
        self._channels: set[str] = set()
        self._staged_notifies: dict[tuple[str, str], None] = {}
        self._staged_listens: list[tuple[bool, str | None]] = []
        self.wake: Callable[[], None] = lambda: None
        """Set by the server: called (from any thread) when a notification arrives."""

    def deliver(self, notification: Notification) -> None:
        self._queue.append(notification)
        self.wake()

    def take(self) -> list[Notification]:
        """The notifications to send now, oldest first."""
        taken = []
        while self._queue:
            taken.append(self._queue.popleft())
        return taken

    def listen(self, channel: str) -> None:
        self._staged_listens.append((True, channel))

    def unlisten(self, channel: str | None) -> None:
        self._staged_listens.append((False, channel))

    def notify(self, channel: str, payload: str) -> None:
        self._staged_notifies[(channel, payload)] = None  # once per transaction, in order

    def end_transaction(self, committed: bool) -> None:
        if not self._staged_listens and not self._staged_notifies:
            return  # most transactions neither LISTEN nor NOTIFY
        staged_listens, self._staged_listens = self._staged_listens, []
        notifies, self._staged_notifies = self._staged_notifies, {}
        if not committed:
            return
        for is_listen, channel in staged_listens:
            if is_listen and channel is not None:
                self._channels.add(channel)
                self._hub.subscribe(self, channel)
            elif channel is None:
                self._channels.clear()
                self._hub.unsubscribe(self, None)
            else:
                self._channels.discard(channel)
                self._hub.unsubscribe(self, channel)
        pid = self._process_id()
        self._hub.publish([Notification(pid, c, p) for c, p in notifies])

    def close(self) -> None:
        self._hub.unsubscribe(self, None)
        self._channels.clear()

    @property
    def channels(self) -> list[str]:
        """pg_listening_channels()."""
        return sorted(self._channels)
