"""DDL that takes ACCESS EXCLUSIVE (a rewrite, DROP TABLE, TRUNCATE, ALTER TABLE) waits for a
transaction that only holds row locks on the table, on nyala as on PostgreSQL 15, where the
row locker holds ROW SHARE on it: it fails with 55P03 under lock_timeout, and goes ahead once
the locker ends.  CREATE INDEX (SHARE) does not wait for it."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.sessions import blocked, connect, pool, server  # noqa: F401

pytestmark = pytest.mark.e2e

TABLE_PREFIX = "rww_"
_T, _K, _C = "rww_t", "rww_k", "rww_c"

HOLDS = {
    "for_update": "select v from {t} where id = 1 for update",
    "for_no_key_update": "select v from {t} where id = 1 for no key update",
    "for_share": "select v from {t} where id = 1 for share",
    "for_key_share": "select v from {t} where id = 1 for key share",
}
"""What the locker runs on table ``t``, in an open transaction."""

DDLS = {
    "alter_column_type": f"alter table {_T} alter column v type bigint",
    "add_primary_key": f"alter table {_K} add primary key (id)",
    "drop_table": f"drop table {_K}",
    "truncate": f"truncate {_T}, {_C}",
    "add_column": f"alter table {_T} add column w int",
}
"""The DDL, and which table it is about."""


def _target(ddl: str) -> str:
    return _K if _K in DDLS[ddl] else _T


@pytest.fixture
def sessions(connect) -> tuple[psycopg.Connection, psycopg.Connection]:  # noqa: ANN001
    """The row locker ``a`` and the DDL session ``b``, over a keyed table ``rww_t``, a keyless
    ``rww_k`` and a child ``rww_c`` referencing ``rww_t``, each holding rows 1 and 2."""
    a, b = connect(), connect()
    a.execute(f"drop table if exists {_C}, {_T}, {_K}")
    a.execute(f"create table {_T} (id int primary key, v int)")
    a.execute(f"create table {_K} (id int, v int)")
    a.execute(f"create table {_C} (id int primary key, p int references {_T})")
    a.execute(f"insert into {_T} values (1, 10), (2, 20)")
    a.execute(f"insert into {_K} values (1, 10), (2, 20)")
    return a, b


def _outcome(conn: psycopg.Connection, sql: str) -> str:
    try:
        conn.execute(sql)
    except psycopg.Error as exc:
        return str(exc.sqlstate)
    return "ok"


@pytest.mark.parametrize("hold", list(HOLDS))
@pytest.mark.parametrize("ddl", list(DDLS))
def test_lock_timeout_fails_the_ddl_while_the_row_locker_is_open(sessions, hold, ddl):
    a, b = sessions
    a.execute("begin")
    a.execute(HOLDS[hold].format(t=_target(ddl)))
    b.execute("set lock_timeout = '300ms'")
    assert _outcome(b, DDLS[ddl]) == "55P03"
    a.execute("commit")
    assert _outcome(b, DDLS[ddl]) == "ok"


@pytest.mark.parametrize("ddl", list(DDLS))
def test_the_ddl_waits_for_the_row_locker_then_goes_ahead(sessions, pool, ddl):
    a, b = sessions
    target = _target(ddl)
    a.execute("begin")
    a.execute(f"select v from {target} where id = 2 for update")
    pending = pool.submit(lambda: b.execute(DDLS[ddl]))
    assert blocked(pending)
    # The locker's own statements on the table go on meanwhile.
    assert a.execute(f"select v from {target} where id = 1 for share").fetchall() == [(10,)]
    a.execute(f"update {target} set v = 21 where id = 2")
    a.execute("commit")
    pending.result(timeout=30)
    if ddl in ("truncate", "drop_table"):
        return
    assert b.execute(f"select id, v from {target} order by id").fetchall() == [(1, 10), (2, 21)]


def test_a_foreign_key_check_makes_a_rewrite_of_the_parent_wait(sessions, pool):
    a, b = sessions
    a.execute("begin")
    a.execute(f"insert into {_C} values (10, 1)")
    b.execute("set lock_timeout = '300ms'")
    assert _outcome(b, f"alter table {_T} alter column v type bigint") == "55P03"
    b.execute("set lock_timeout = '10s'")
    pending = pool.submit(lambda: b.execute(f"alter table {_T} alter column v type bigint"))
    assert blocked(pending)
    a.execute("commit")
    pending.result(timeout=30)
    assert b.execute(f"select count(*) from {_C}").fetchone() == (1,)


def test_create_index_does_not_wait_for_row_lockers(sessions):
    a, b = sessions
    a.execute("begin")
    a.execute(f"select v from {_T} where id = 1 for update")
    a.execute(f"select v from {_K} where id = 1 for share")
    b.execute("set lock_timeout = '300ms'")
    assert _outcome(b, f"create index rww_t_v on {_T} (v)") == "ok"
    assert _outcome(b, f"create index rww_k_v on {_K} (v)") == "ok"
    a.execute("commit")
