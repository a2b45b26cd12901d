"""A crash at any point of a transaction's role and privilege changes keeps all of it or none.

One transaction creates and fills a table, creates a login role, grants it
SELECT on the new table and INSERT on an old one, makes it a member of an
existing role, alters that role and drops another.  The process dies
(``os._exit``, as kill -9 leaves it) with the block still open, just after
its WAL commit record is durable but before any file is rewritten, after
``catalog.json`` and before ``roles.json``, and between ``roles.json`` and
``privileges.json``; then a real server is killed at several moments after
COMMIT is sent.  Each restart must show the rows, the table, the roles and
the grants of the transaction all together, or none of them.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests.support.crash_points import kill9_during_commits, reopened, run_to_point

pytestmark = [pytest.mark.e2e]

SETUP = [
    "create table acr_old (id int primary key)",
    "insert into acr_old values (1)",
    "create role acr_group nologin",
    "create role acr_doomed",
    "grant select on acr_old to acr_doomed",
    "revoke select on acr_old from acr_doomed",
]

TRANSACTION = [
    "begin",
    "create table acr_new (id int primary key, v text)",
    "insert into acr_new select g, 'v' || g from generate_series(1, 200) g",
    "create role acr_user login password 'pw'",
    "grant select on acr_new to acr_user",
    "grant insert on acr_old to acr_user",
    "grant acr_group to acr_user",
    "alter role acr_group login",
    "drop role acr_doomed",
]

CRASH_HOOKS = """
from catalog.logged_document import LoggedDocument
from catalog.store import CatalogStore
if point == "after_wal":
    CatalogStore.save_after_wal = lambda self, doc: os._exit(9)
written = []
def write_after_wal(self, doc, write=LoggedDocument.write_after_wal):
    if point == "after_catalog" or (point == "between_files" and written):
        os._exit(9)
    written.append(self.path.name)
    write(self, doc)
LoggedDocument.write_after_wal = write_after_wal
"""


STATE = {
    "roles": "select rolname, rolcanlogin from pg_roles where rolname like 'acr%' order by 1",
    "members": "select r.rolname as role, m.rolname as member from pg_auth_members x"
    " join pg_roles r on r.oid = x.roleid join pg_roles m on m.oid = x.member order by 1, 2",
    "acl": "select relname, relacl::text[] from pg_class where relname like 'acr%' and relkind = 'r'"
    " order by 1",
    "tables": "select relname from pg_class where relnamespace = 2200 and relkind = 'r' order by 1",
    "old": "select id from acr_old order by id",
}

BEFORE = {
    "roles": [("acr_doomed", False), ("acr_group", False)],
    "members": [],
    "acl": [("acr_old", ["nyala=arwdDxt/nyala"])],
    "tables": [("acr_old",)],
    "old": [(1,)],
}
AFTER = {
    "roles": [("acr_group", True), ("acr_user", True)],
    "members": [("acr_group", "acr_user")],
    "acl": [
        ("acr_new", ["nyala=arwdDxt/nyala", "acr_user=r/nyala"]),
        ("acr_old", ["nyala=arwdDxt/nyala", "acr_user=a/nyala"]),
    ],
    "tables": [("acr_new",), ("acr_old",)],
    "old": [(1,)],
    "new": [(200, "v1")],
}


def _state(rows) -> dict[str, object]:
    state = {key: rows(sql) for key, sql in STATE.items()}
    # In process a text[] comes back as its text form; through psycopg as a list.
    state["acl"] = [
        (name, acl.strip("{}").split(",") if isinstance(acl, str) else acl)
        for name, acl in state["acl"]
    ]
    if ("acr_new",) in state["tables"]:  # type: ignore[operator]
        state["new"] = rows("select count(*), min(v) from acr_new")
    return state


def _open_state(data: Path) -> dict[str, object]:
    with reopened(data) as (_, rows):
        return _state(rows)


@pytest.mark.parametrize(
    ("point", "committed"),
    [
        ("open", False),
        ("after_wal", True),
        ("after_catalog", True),
        ("between_files", True),
        ("none", True),
    ],
)
def test_a_crash_at_each_point_of_a_commit_with_roles_and_grants(tmp_path, point, committed):
    data = tmp_path / "data"
    run_to_point(data, point, "setup", SETUP, CRASH_HOOKS)
    code = run_to_point(data, point, "txn", TRANSACTION, CRASH_HOOKS)
    assert code == (0 if point == "none" else 9)
    assert _open_state(data) == (AFTER if committed else BEFORE)
    # The restart wrote the WAL's copies to the files: a second open shows the same.
    assert _open_state(data) == (AFTER if committed else BEFORE)


KILL_DELAYS_S = (0.0, 0.002, 0.01, 0.05)


@pytest.mark.slow
def test_kill9_during_a_commit_with_roles_and_grants_is_all_or_nothing(nyala_server_factory):
    server = nyala_server_factory()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        user = conn.execute("select current_user").fetchone()[0]
        for sql in SETUP:
            conn.execute(sql)
    before = {k: v for k, v in BEFORE.items()}
    before["acl"] = [("acr_old", [f"{user}=arwdDxt/{user}"])]
    after = {k: v for k, v in AFTER.items()}
    after["acl"] = [
        ("acr_new", [f"{user}=arwdDxt/{user}", f"acr_user=r/{user}"]),
        ("acr_old", [f"{user}=arwdDxt/{user}", f"acr_user=a/{user}"]),
    ]

    def judge(rows, delay: float) -> bool:
        state = _state(rows)
        assert state in (before, after), (delay, state)
        return state == after

    kill9_during_commits(server, TRANSACTION[1:], KILL_DELAYS_S, judge)
