"""Timestamp and HybridClock: the database's one source of MVCC timestamps.

A ``Timestamp`` is a 64-bit hybrid time (Kudu's HybridTime): the wall clock in
microseconds since the Unix epoch, shifted left by 12 bits, plus a 12-bit
logical counter in the low bits.

    +-------------------------------------------+----------------+
    | physical: microseconds since 1970 (52 bits)| logical (12)   |
    +-------------------------------------------+----------------+

Timestamps compare like the instants they stand for, so a snapshot taken "as
of" a wall-clock time is just ``from_micros(us)`` (time travel).  When the
wall clock stalls or steps back, the logical part keeps ``now()`` strictly
increasing; 4096 ticks per microsecond is far more than Python can issue.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable
from typing import NewType

Timestamp = NewType("Timestamp", int)

LOGICAL_BITS = 12
_LOGICAL_MASK = (1 << LOGICAL_BITS) - 1

MIN_TIMESTAMP = Timestamp(0)
MAX_TIMESTAMP = Timestamp((1 << 63) - 1)

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def from_micros(micros: int, logical: int = 0) -> Timestamp:
    """Build the timestamp of a wall-clock instant in microseconds since the Unix epoch.

    Example:
        >>> from_micros(1, 2)
        4098
    """
    assert 0 <= logical <= _LOGICAL_MASK, "the logical part has 12 bits"
    return Timestamp((micros << LOGICAL_BITS) | logical)


def to_micros(ts: Timestamp) -> int:
    """Return the physical part of ``ts``: microseconds since the Unix epoch."""
    return ts >> LOGICAL_BITS


def logical_part(ts: Timestamp) -> int:
    return ts & _LOGICAL_MASK


def from_datetime(when: dt.datetime) -> Timestamp:
    """Timestamp of ``when`` (a naive datetime is taken as UTC)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    delta = when - _EPOCH
    return from_micros((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)


def to_datetime(ts: Timestamp) -> dt.datetime:
    """The UTC-aware wall-clock instant of ``ts`` (the logical part is dropped)."""
    return _EPOCH + dt.timedelta(microseconds=to_micros(ts))


def _wall_clock_micros() -> int:
    return time.time_ns() // 1000


class HybridClock:
    """Issues strictly increasing hybrid timestamps; thread-safe.

    ``update(ts)`` moves the clock past a timestamp seen elsewhere (a replayed
    WAL record), so a restart on a machine whose wall clock went backwards
    never issues a timestamp below one already committed.
    """

    def __init__(self, wall_clock_micros: Callable[[], int] = _wall_clock_micros) -> None:
        self._wall_clock_micros = wall_clock_micros
        self._lock = threading.Lock()
        self._last = MIN_TIMESTAMP

    def now(self) -> Timestamp:
        """Return a timestamp greater than every one returned or seen before."""
        physical = Timestamp(self._wall_clock_micros() << LOGICAL_BITS)
        with self._lock:
            if physical <= self._last:
                physical = Timestamp(self._last + 1)
            self._last = physical
            return physical

    def update(self, ts: Timestamp) -> None:
        """Make every later ``now()`` greater than ``ts``."""
        with self._lock:
            if ts > self._last:
                self._last = ts

    def last(self) -> Timestamp:
        """The newest timestamp issued or seen, without issuing one."""
        with self._lock:
            return self._last
