"""Waiting until a nyala server's maintenance manager has gone quiet, for tests and the bench.

A figure or a check taken while flushes and compactions of rows just written still run
would see them half done; ``nyala_maintenance`` says when none runs and none scores above
zero.
"""

from __future__ import annotations

import time
from typing import Any

import psycopg

_BUSY = (
    "select count(*) from nyala_maintenance "
    "where state = 'running' or (state = 'registered' and score > 0)"
)


def wait_for_quiet_maintenance(
    conn: psycopg.Connection[Any], timeout_s: float, poll_s: float = 0.5
) -> float:
    """Seconds until nyala runs no maintenance op and scores none worth running, two polls
    in a row; TimeoutError when ``timeout_s`` passes first."""
    started = time.monotonic()
    quiet = 0
    while quiet < 2:
        if time.monotonic() - started > timeout_s:
            raise TimeoutError(f"nyala's maintenance still busy after {timeout_s:.0f} s")
        busy = conn.execute(_BUSY).fetchone()
        quiet = quiet + 1 if busy is not None and busy[0] == 0 else 0
        time.sleep(poll_s)
    return time.monotonic() - started
