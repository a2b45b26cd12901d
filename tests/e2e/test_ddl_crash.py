"""A crash at any point of a transaction's DDL leaves the catalog and the tablets consistent.

One transaction creates and fills a table, adds a range partition, adds and
fills a column, drops a column, drops a table and creates a view.  The
process dies (``os._exit``, as kill -9 leaves it) at each point of its life:
with the block still open, just after its WAL record is durable but before
``catalog.json`` is rewritten, and after that but before the dropped
tablets are removed; then by kill -9 of a real server at several moments
after COMMIT is sent.  Each restart must show the whole transaction or none
of it, and no tablet that the catalog does not name.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest

from sql.session.database import Database

pytestmark = [pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]

SETUP = [
    "create table keep (id int primary key, v text)",
    "insert into keep select g, 'v' || g from generate_series(1, 50) g",
    "create table doomed (id int primary key)",
    "insert into doomed values (1), (2)",
    "create table ranged (id int primary key, v int) partition by range (id) "
    "(partition values < 100)",
    "insert into ranged values (1, 1)",
]

TRANSACTION = [
    "begin",
    "create table made (id int primary key, note text not null default 'n')",
    "insert into made (id) select g from generate_series(1, 300) g",
    "alter table keep add column extra int default 3",
    "update keep set extra = id",
    "alter table keep drop column v",
    "alter table ranged add range partition 100 <= values < 200",
    "insert into ranged values (150, 2)",
    "drop table doomed",
    "create view made_view as select count(*) as n from made",
]

SCRIPT = """
import os, sys
from pathlib import Path
from catalog.store import CatalogStore
from sql.session.database import Database
from storage.engine import StorageEngine

data, point, phase = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
db = Database.open(data)
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
if point == "after_wal":
    CatalogStore.save_after_wal = lambda self, doc: os._exit(9)
if point == "before_drop":
    StorageEngine.drop_tablet = lambda self, tablet_id: os._exit(9)
run("commit")
os._exit(0)
"""


def _run_script(data: Path, point: str, phase: str, statements: list[str]) -> int:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(data), point, phase],
        input=";\n".join(statements),
        text=True,
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode in (0, 9), done.stderr
    return done.returncode


def _state(rows: callable) -> dict[str, object]:
    """What a restart shows: which relations exist and what they hold."""
    names = {r[0] for r in rows("select relname from pg_class where relnamespace = 2200")}
    state: dict[str, object] = {"relations": names}
    state["keep"] = rows("select * from keep order by id")[:3]
    state["ranged"] = rows("select id, v from ranged order by id")
    if "made" in names:
        state["made"] = rows("select count(*), min(note) from made")
        state["made_view"] = rows("select n from made_view")
    if "doomed" in names:
        state["doomed"] = rows("select id from doomed order by id")
    return state


BEFORE = {
    "keep": [(1, "v1"), (2, "v2"), (3, "v3")],
    "ranged": [(1, 1)],
    "doomed": [(1,), (2,)],
}
AFTER = {
    "keep": [(1, 1), (2, 2), (3, 3)],
    "ranged": [(1, 1), (150, 2)],
    "made": [(300, "n")],
    "made_view": [(300,)],
}


def _check(state: dict[str, object], committed: bool) -> None:
    expected = AFTER if committed else BEFORE
    for key, value in expected.items():
        assert state[key] == value, (key, committed, state)
    relations = state["relations"]
    assert isinstance(relations, set)
    assert ("made" in relations) is committed
    assert ("doomed" in relations) is not committed


def _open_state(data: Path) -> tuple[dict[str, object], set[int], set[int]]:
    db = Database.open(data, fsync=False)
    try:
        session = db.session("nyala", "nyala", {})

        def rows(sql: str) -> list[tuple]:
            (result,) = list(session.execute(sql))
            out: list[tuple] = []
            for batch in result.batches or ():
                out += [tuple(r.values()) for r in batch.to_pylist()]
            return out

        state = _state(rows)
        named = {t for table in db.catalog.tables() for t in table.tablet_ids}
        present = set(db.engine.tablet_ids())
        return state, named, present
    finally:
        db.close()


@pytest.mark.parametrize(
    ("point", "committed"),
    [("open", False), ("after_wal", True), ("before_drop", True), ("none", True)],
)
def test_a_crash_at_each_point_of_a_ddl_transaction(tmp_path, point, committed):
    data = tmp_path / "data"
    _run_script(data, point, "setup", SETUP)
    code = _run_script(data, point, "txn", TRANSACTION)
    assert code == (0 if point == "none" else 9)
    state, named, present = _open_state(data)
    _check(state, committed)
    assert named == present, "every tablet is named by a table and every named tablet exists"


KILL_DELAYS_S = (0.0, 0.003, 0.01, 0.05, 0.3)


@pytest.mark.slow
def test_kill9_during_ddl_commit_is_all_or_nothing(nyala_server_factory):
    server = nyala_server_factory()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        for sql in SETUP:
            conn.execute(sql)
    committed = False
    for delay in KILL_DELAYS_S:
        conn = psycopg.connect(server.dsn)
        for sql in TRANSACTION[1:]:
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
            state = _state(lambda sql, c=check: c.execute(sql).fetchall())
        committed = "made" in state["relations"]  # type: ignore[operator]
        if done.is_set():
            assert committed, delay
        _check(state, committed)
        if committed:
            return  # the transaction's DDL cannot run twice; the earlier delays saw "none"
