"""Python's cyclic garbage collector paused while bulk work allocates row objects.

A MemRowSet holds one tracked Python object per row, and none of them is part of a
reference cycle.  While a bulk insert or a flush allocates or walks a million of them,
the collector's young and full passes are triggered again and again and traverse them
all: profiled, it was 60% of a 1M-row load's CPU.  The collector is paused only
around such CPU-bound stretches, never across a wait, so cyclic garbage made by other
threads meanwhile is collected moments later; reference counting frees everything else
as usual.  Pauses nest across threads: the collector runs again when the last one ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

BULK_ROWS = 256
"""Batches at least this large pause the collector; smaller ones allocate too little to matter."""

_lock = threading.Lock()
_holders = 0
_resume = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """Run the block with the cyclic collector paused (if it was enabled)."""
    global _holders, _resume
    with _lock:
        if _holders == 0:
            _resume = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _resume:
                gc.enable()
