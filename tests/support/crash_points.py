"""Crashing a commit at a chosen point, in process or by kill -9 of a real server.

The in-process form runs statements in a child Python process over the data
directory and ends it with ``os._exit(9)`` (what kill -9 leaves) at a point
the test names, by patching the function the commit calls there; the
kill -9 form sends COMMIT on one connection and kills the server after a
delay.  Each test supplies its statements, its points and what it checks.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg

from sql.session.database import Database
from tests.support.servers import NyalaServer

ROOT = Path(__file__).resolve().parents[2]

_PRELUDE = """
import os, sys
from pathlib import Path
from sql.session.database import Database

data, point, phase = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
db = Database.open(data)
db.roles.bootstrap("nyala", None)
session = db.session("nyala", "nyala", {})

def run(sql):
    for result in session.execute(sql):
        list(result.batches or ())

for sql in sys.stdin.read().split(";\\n"):
    if sql.strip():
        run(sql)
if phase == "setup":
    os._exit(0)
if point == "open":
    os._exit(9)
"""

_COMMIT = """
run("commit")
os._exit(0)
"""


def run_to_point(
    data: Path, point: str, phase: str, statements: list[str], crash_hooks: str
) -> int:
    """Run ``statements`` on ``data`` in a child process, then (phase "txn") COMMIT with
    ``crash_hooks`` installed: Python that sees ``point`` and patches what the commit calls
    to ``os._exit(9)``.  Point "open" dies with the block open; "none" commits.  Returns
    the exit code, 0 or 9."""
    done = subprocess.run(
        [sys.executable, "-c", _PRELUDE + crash_hooks + _COMMIT, str(data), point, phase],
        input=";\n".join(statements),
        text=True,
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode in (0, 9), done.stderr
    return done.returncode


@contextlib.contextmanager
def reopened(data: Path) -> Iterator[tuple[Database, Callable[[str], list[tuple[Any, ...]]]]]:
    """The database after the crash, opened in this process, and a function giving a
    query's rows as tuples."""
    db = Database.open(data, fsync=False)
    try:
        session = db.session("nyala", "nyala", {})

        def rows(sql: str) -> list[tuple[Any, ...]]:
            (result,) = list(session.execute(sql))
            out: list[tuple[Any, ...]] = []
            for batch in result.batches or ():
                out += [tuple(r.values()) for r in batch.to_pylist()]
            return out

        yield db, rows
    finally:
        db.close()


def kill9_during_commits(
    server: NyalaServer,
    statements: list[str],
    delays: tuple[float, ...],
    judge: Callable[[Callable[[str], list[tuple[Any, ...]]], float], bool],
) -> None:
    """For each delay: run ``statements`` in a block, send COMMIT, kill -9 the server after
    the delay and restart it.  ``judge(rows, delay)`` checks what the restart shows and says
    whether the transaction committed (it must have if COMMIT was acknowledged); the loop stops at the first commit
    (the transaction cannot run twice), and fails if none survived even the longest delay."""
    for delay in delays:
        conn = psycopg.connect(server.dsn)
        for sql in statements:
            conn.execute(sql)
        done = threading.Event()

        def commit(connection: psycopg.Connection = conn, finished: threading.Event = done) -> None:
            with contextlib.suppress(psycopg.Error):
                connection.commit()
                finished.set()

        worker = threading.Thread(target=commit)
        worker.start()
        time.sleep(delay)
        server.kill9()
        worker.join(timeout=60)
        with contextlib.suppress(psycopg.Error):
            conn.close()
        server.start()
        with psycopg.connect(server.dsn, autocommit=True) as check:
            committed = judge(lambda sql, c=check: c.execute(sql).fetchall(), delay)
        if done.is_set():
            assert committed, f"COMMIT was acknowledged but lost (delay {delay})"
        if committed:
            return
    raise AssertionError("no commit survived even the longest delay")
