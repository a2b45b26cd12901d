"""Prepared transactions that change roles, memberships and privileges.

PREPARE TRANSACTION keeps a transaction's CREATE/ALTER/DROP ROLE, GRANT and
REVOKE (nobody sees them meanwhile); COMMIT PREPARED applies them with its
rows, ROLLBACK PREPARED drops them.  The scenario is compared with
PostgreSQL 15 (run with ``max_prepared_transactions``); a restart while
prepared keeps the changes waiting, on nyala alone (kill -9).
"""

from __future__ import annotations

import psycopg
import pytest

from tests.support.servers import TEST_SETTINGS, PostgresServer, missing_postgres_reason

pytestmark = pytest.mark.e2e

ROLES = "select rolname, rolcanlogin from pg_roles where rolname like 'tpa%' order by 1"
MEMBERS = (
    "select r.rolname, m.rolname from pg_auth_members x join pg_roles r on r.oid = x.roleid"
    " join pg_roles m on m.oid = x.member where r.rolname like 'tpa%' order by 1, 2"
)
CAN_READ = "select has_table_privilege('tpa_r', 'tpa', 'select')"
CHECKS = [ROLES, MEMBERS, CAN_READ, "select * from tpa order by 1"]

SCENARIO = [
    "create table tpa (id int)",
    "create role tpa_r nologin",
    "begin",
    "create role tpa_new login",
    "grant select on tpa to tpa_r",
    "grant tpa_r to tpa_new",
    "insert into tpa values (1)",
    "prepare transaction 'acc1'",
    *CHECKS,
    "select gid from pg_prepared_xacts where gid like 'acc%'",
    "commit prepared 'acc1'",
    *CHECKS,
    "begin",
    "revoke select on tpa from tpa_r",
    "alter role tpa_new nologin",
    "revoke tpa_r from tpa_new",
    "insert into tpa values (2)",
    "prepare transaction 'acc2'",
    *CHECKS,
    "rollback prepared 'acc2'",
    *CHECKS,
    "begin",
    "savepoint s",
    "create role tpa_gone",
    "rollback to savepoint s",
    "drop role tpa_new",
    "revoke select on tpa from tpa_r",
    "prepare transaction 'acc3'",
    *CHECKS,
    "commit prepared 'acc3'",
    *CHECKS,
    "drop table tpa",
    "drop role tpa_r",
]


@pytest.fixture(scope="module")
def postgres_2pc():
    reason = missing_postgres_reason()
    if reason is not None:
        pytest.skip(reason)
    with PostgresServer({**TEST_SETTINGS, "max_prepared_transactions": "10"}) as server:
        yield server


def _play(dsn: str) -> list[tuple]:
    out = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in SCENARIO:
            try:
                cur = conn.execute(statement)
                answer = (cur.statusmessage, cur.fetchall() if cur.description else None)
            except psycopg.Error as exc:
                answer = (exc.sqlstate, None)
            out.append((statement[:50], *answer, conn.info.transaction_status.name))
    return out


def test_role_and_privilege_changes_in_prepared_transactions_as_postgres(
    nyala_server, postgres_2pc
):
    mine = _play(nyala_server.dsn)
    assert mine == _play(postgres_2pc.dsn)
    assert ("prepare transaction 'acc1'", "PREPARE TRANSACTION", None, "IDLE") in mine
    assert ("commit prepared 'acc3'", "COMMIT PREPARED", None, "IDLE") in mine


def test_prepared_role_changes_survive_a_restart_until_committed(fresh_nyala_server):
    server = fresh_nyala_server
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("create table tpa (id int)")
        conn.execute("create role tpa_r nologin")
        for gid, statements in [
            ("keep", ["create role tpa_new login", "grant select on tpa to tpa_r",
                      "grant tpa_r to tpa_new", "insert into tpa values (1)"]),
            ("drop", ["create role tpa_never", "grant insert on tpa to tpa_r"]),
        ]:  # fmt: skip
            conn.execute("begin")
            for statement in statements:
                conn.execute(statement)
            conn.execute(f"prepare transaction '{gid}'")
    server.kill9()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert [r[0] for r in conn.execute("select gid from pg_prepared_xacts order by 1")] == [
            "drop",
            "keep",
        ]
        assert conn.execute(ROLES).fetchall() == [("tpa_r", False)]
        assert conn.execute(CAN_READ).fetchone() == (False,)
        conn.execute("commit prepared 'keep'")
        conn.execute("rollback prepared 'drop'")
    server.kill9()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute("select count(*) from pg_prepared_xacts").fetchone() == (0,)
        assert conn.execute(ROLES).fetchall() == [("tpa_new", True), ("tpa_r", False)]
        assert conn.execute(MEMBERS).fetchall() == [("tpa_r", "tpa_new")]
        assert conn.execute(CAN_READ).fetchone() == (True,)
        assert conn.execute("select has_table_privilege('tpa_r', 'tpa', 'insert')").fetchone() == (
            False,
        )
        assert conn.execute("select * from tpa").fetchall() == [(1,)]
