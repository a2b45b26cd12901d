"""A CREATE ROLE waits for the transaction, open or prepared, that holds the name, as in
PostgreSQL (its unique index on pg_authid.rolname): 23505 once that one commits, success
once it rolls back, 55P03 on lock_timeout; so COMMIT PREPARED never fails on a role
another transaction created meanwhile.  Run on nyala and on PostgreSQL 15 with
``max_prepared_transactions``; the outcomes must be the same."""

from __future__ import annotations

import threading
from collections.abc import Callable

import psycopg
import pytest

from tests.support.servers import TEST_SETTINGS, PostgresServer, missing_postgres_reason

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def postgres_2pc():
    reason = missing_postgres_reason()
    if reason is not None:
        pytest.skip(reason)
    with PostgresServer({**TEST_SETTINGS, "max_prepared_transactions": "10"}) as server:
        yield server


def _blocked(conn: psycopg.Connection, sql: str) -> tuple[threading.Thread, list[object]]:
    """Run ``sql`` on ``conn`` in a thread; the outcome list gets 'ok' or its SQLSTATE."""
    outcome: list[object] = []

    def run() -> None:
        try:
            conn.execute(sql)
            outcome.append("ok")
        except psycopg.Error as exc:
            outcome.append(exc.sqlstate)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(1.0)
    return thread, outcome


def _scenario(dsn: str) -> list[object]:
    seen: list[object] = []
    with (
        psycopg.connect(dsn, autocommit=True) as a,
        psycopg.connect(dsn, autocommit=True) as b,
    ):

        def prepared_then(end: str, second: str, check: Callable[[], object]) -> None:
            a.execute("begin")
            a.execute("create role tpr_role")
            a.execute("prepare transaction 'tpr'")
            thread, outcome = _blocked(b, second)
            seen.append(("waits", thread.is_alive()))
            a.execute(f"{end} prepared 'tpr'")
            thread.join(30)
            seen.append((end, second, outcome, check()))

        names = lambda: a.execute(  # noqa: E731
            "select rolname from pg_roles where rolname like 'tpr%' order by 1"
        ).fetchall()
        prepared_then("commit", "create role tpr_role", names)
        a.execute("drop role tpr_role")
        prepared_then("rollback", "create role tpr_role login", names)
        a.execute("drop role tpr_role")
        # In a block: the wait ends in 42710, which fails the block.
        b.execute("begin")
        b.execute("create role tpr_other")
        prepared_then("commit", "create role tpr_role", names)
        seen.append(("block", b.info.transaction_status.name))
        b.execute("rollback")
        seen.append(("after rollback", names()))
        a.execute("drop role tpr_role")
        # lock_timeout while a prepared transaction holds the name.
        a.execute("begin")
        a.execute("create role tpr_role")
        a.execute("prepare transaction 'tpr'")
        b.execute("set lock_timeout = '200ms'")
        try:
            b.execute("create role tpr_role")
            seen.append(("lock_timeout", "ok"))
        except psycopg.Error as exc:
            seen.append(("lock_timeout", exc.sqlstate))
        b.execute("reset lock_timeout")
        a.execute("commit prepared 'tpr'")
        seen.append(("committed", names()))
        # An open transaction holding the name: the same wait.
        a.execute("drop role tpr_role")
        a.execute("begin")
        a.execute("create role tpr_role")
        thread, outcome = _blocked(b, "create role tpr_role")
        seen.append(("open waits", thread.is_alive()))
        a.execute("rollback")
        thread.join(30)
        seen.append(("open rolled back", outcome, names()))
        a.execute("drop role tpr_role")
    return seen


def test_create_role_waits_for_the_holder_of_the_name_as_in_postgresql(
    fresh_nyala_server, postgres_2pc
):
    theirs = _scenario(postgres_2pc.dsn)
    ours = _scenario(fresh_nyala_server.dsn)
    assert ours == theirs
    assert ("waits", True) in ours
    assert ("commit", "create role tpr_role", ["23505"], [("tpr_role",)]) in ours
    assert ("lock_timeout", "55P03") in ours
