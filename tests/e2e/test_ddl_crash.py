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

from pathlib import Path

import psycopg
import pytest

from tests.support.crash_points import kill9_during_commits, reopened, run_to_point

pytestmark = [pytest.mark.e2e]

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
    "create index made_note on made (note)",
    "create unique index keep_extra on keep (extra)",
    "alter table keep add constraint keep_extra_positive check (extra > 0)",
    "create table child (id int primary key, keep_id int references keep (id) on delete cascade)",
    "insert into child values (1, 7)",
    "create sequence made_seq start 10",
    "comment on table keep is 'kept'",
]

CRASH_HOOKS = """
from catalog.store import CatalogStore
from storage.engine import StorageEngine
if point == "after_wal":
    CatalogStore.save_after_wal = lambda self, doc: os._exit(9)
if point == "before_drop":
    StorageEngine.drop_tablet = lambda self, tablet_id: os._exit(9)
"""


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
    state["constraints"] = {
        r[0] for r in rows("select conname from pg_constraint where connamespace = 2200")
    }
    state["comment"] = rows("select obj_description('keep'::regclass, 'pg_class')")
    if "keep_extra" in names:
        state["by_index"] = rows("select id from keep where extra = 7")
        state["child"] = rows("select id, keep_id from child")
        state["next"] = rows("select nextval('made_seq')")
    return state


BEFORE = {
    "keep": [(1, "v1"), (2, "v2"), (3, "v3")],
    "ranged": [(1, 1)],
    "doomed": [(1,), (2,)],
    "comment": [(None,)],
}
AFTER = {
    "keep": [(1, 1), (2, 2), (3, 3)],
    "ranged": [(1, 1), (150, 2)],
    "made": [(300, "n")],
    "made_view": [(300,)],
    "comment": [("kept",)],
    "by_index": [(7,)],
    "child": [(1, 7)],
    "next": [(10,)],
}
NEW_RELATIONS = {"made", "made_view", "made_note", "keep_extra", "child", "made_seq"}


def _check(state: dict[str, object], committed: bool) -> None:
    expected = AFTER if committed else BEFORE
    for key, value in expected.items():
        assert state[key] == value, (key, committed, state)
    relations = state["relations"]
    assert isinstance(relations, set)
    assert (NEW_RELATIONS & relations) == (NEW_RELATIONS if committed else set())
    assert ("doomed" in relations) is not committed
    constraints = state["constraints"]
    assert isinstance(constraints, set)
    assert ("keep_extra_positive" in constraints) is committed
    assert ("child_keep_id_fkey" in constraints) is committed


def _open_state(data: Path) -> tuple[dict[str, object], set[int], set[int]]:
    with reopened(data) as (db, rows):
        state = _state(rows)
        tables = db.catalog.tables()
        named = {t for table in tables for t in table.tablet_ids}
        named |= {index.tablet_id for table in tables for index in table.indexes}
        present = set(db.engine.tablet_ids())
        return state, named, present


@pytest.mark.parametrize(
    ("point", "committed"),
    [("open", False), ("after_wal", True), ("before_drop", True), ("none", True)],
)
def test_a_crash_at_each_point_of_a_ddl_transaction(tmp_path, point, committed):
    data = tmp_path / "data"
    run_to_point(data, point, "setup", SETUP, CRASH_HOOKS)
    code = run_to_point(data, point, "txn", TRANSACTION, CRASH_HOOKS)
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

    def judge(rows, delay: float) -> bool:
        state = _state(rows)
        committed = "made" in state["relations"]  # type: ignore[operator]
        _check(state, committed)
        return committed

    kill9_during_commits(server, TRANSACTION[1:], KILL_DELAYS_S, judge)
