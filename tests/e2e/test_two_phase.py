"""Two-phase commit: PREPARE TRANSACTION, COMMIT PREPARED, ROLLBACK PREPARED, pg_prepared_xacts.

The statement-by-statement behaviour (command tags, SQLSTATEs, the transaction
status after each) is compared with PostgreSQL 15 run with
``max_prepared_transactions``; durability is checked with kill -9.
"""

from __future__ import annotations

import psycopg
import pytest

from tests.support.servers import TEST_SETTINGS, PostgresServer, missing_postgres_reason

pytestmark = pytest.mark.e2e

SCENARIO = [
    "create table tp (id int primary key, v text)",
    "prepare transaction 'outside'",
    "begin", "insert into tp values (1, 'one')", "prepare transaction 'g1'",
    "select * from tp",
    "begin", "insert into tp values (2, 'two')", "prepare transaction 'g1'",
    "select gid, owner, database from pg_prepared_xacts",
    "begin", "commit prepared 'g1'", "rollback",
    "commit prepared 'g1'", "commit prepared 'g1'", "select * from tp",
    "rollback prepared 'nope'",
    "begin", "select 1/0", "prepare transaction 'g3'", "select count(*) from pg_prepared_xacts",
    "begin", "update tp set v = 'uno' where id = 1", "prepare transaction 'g4'",
    "select * from tp", "rollback prepared 'g4'", "select * from tp",
    "begin", "prepare transaction '" + "x" * 200 + "'",
    "begin", "delete from tp", "prepare transaction ''", "commit prepared ''",
    "select count(*) from tp",
    "drop table tp",
]  # fmt: skip


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
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.sqlstate or ""))
        for statement in SCENARIO:
            try:
                cur = conn.execute(statement)
                answer = (cur.statusmessage, cur.fetchall() if cur.description else None)
            except psycopg.Error as exc:
                answer = (exc.sqlstate, None)
            out.append((statement[:40], *answer, conn.info.transaction_status.name, notices[:]))
            notices.clear()
    return out


def test_two_phase_commit_as_postgres(nyala_server, postgres_2pc):
    assert _play(nyala_server.dsn) == _play(postgres_2pc.dsn)


def test_prepared_transactions_survive_kill_9(fresh_nyala_server):
    server = fresh_nyala_server
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(
            "create table kp (id int primary key, v text) partition by hash (id) partitions 3"
        )
        conn.execute("insert into kp select g, 'base' from generate_series(1, 30) g")
        for gid, statement in [
            ("ins", "insert into kp select g, 'new' from generate_series(100, 140) g"),
            ("upd", "update kp set v = 'changed' where id <= 10"),
            ("del", "delete from kp where id > 20 and id <= 30"),
            ("done", "insert into kp values (500, 'committed before the crash')"),
        ]:
            conn.execute("begin")
            conn.execute(statement)
            conn.execute(f"prepare transaction '{gid}'")
        conn.execute("commit prepared 'done'")
        conn.execute("checkpoint")
    server.kill9()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        gids = [r[0] for r in conn.execute("select gid from pg_prepared_xacts order by gid")]
        assert gids == ["del", "ins", "upd"]
        assert conn.execute("select count(*), min(v), max(v) from kp").fetchone() == (
            31,
            "base",
            "committed before the crash",
        )
        conn.execute("commit prepared 'ins'")
        conn.execute("rollback prepared 'upd'")
    server.kill9()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert [r[0] for r in conn.execute("select gid from pg_prepared_xacts")] == ["del"]
        conn.execute("commit prepared 'del'")
        assert conn.execute("select count(*) from kp").fetchone() == (30 + 41 + 1 - 10,)
        assert conn.execute("select count(*) from kp where v = 'changed'").fetchone() == (0,)


def test_a_prepared_transactions_row_locks_survive_kill_9(fresh_nyala_server):
    """FOR KEY SHARE taken by a foreign-key check and FOR SHARE are not writes; a prepared
    transaction still holds them after a restart, as PostgreSQL's does."""
    server = fresh_nyala_server
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("create table lp (id int primary key, v int)")
        conn.execute("create table lc (id int primary key, p int references lp)")
        conn.execute("insert into lp values (1, 10), (2, 20)")
        conn.execute("begin")
        conn.execute("insert into lc values (100, 1)")
        conn.execute("select v from lp where id = 2 for share").fetchall()
        conn.execute("prepare transaction 'locks'")
    server.kill9()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("set lock_timeout = '300ms'")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            conn.execute("delete from lp where id = 1")  # the child's parent, FOR KEY SHARE
        with pytest.raises(psycopg.errors.LockNotAvailable):
            conn.execute("update lp set v = 21 where id = 2")  # FOR SHARE
        conn.execute("update lp set v = 11 where id = 1")  # no key changes: no wait
        conn.execute("commit prepared 'locks'")
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute("delete from lp where id = 1")
        conn.execute("update lp set v = 21 where id = 2")
