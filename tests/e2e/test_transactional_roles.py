"""Roles, memberships, GRANT/REVOKE, owners and default privileges are transactional.

Two sessions (``a`` changes, ``b`` watches) run the same statements against
nyala and PostgreSQL 15: what ``a`` does inside a block is seen by its own
checks and catalog queries (``has_table_privilege``, ``pg_roles``, SET ROLE),
not by ``b`` until COMMIT, and is gone after ROLLBACK or ROLLBACK TO
SAVEPOINT.  Then nyala alone: a concurrent CREATE ROLE of the same name waits
for the first transaction and fails with 23505 when it commits, and kill -9
keeps committed roles and grants and loses uncommitted ones.
"""

from __future__ import annotations

import contextlib
import threading

import psycopg
import pytest

from tests.support.servers import make_dsn

pytestmark = pytest.mark.e2e

ROLES = ("txr_r", "txr_s", "txr_g", "txr_m")
TABLES = ("txr_t", "txr_u")

NAMES = "select rolname, rolcanlogin from pg_roles where rolname like 'txr%' order by 1"
MEMBERS = (
    "select r.rolname, m.rolname from pg_auth_members x join pg_roles r on r.oid = x.roleid"
    " join pg_roles m on m.oid = x.member where r.rolname like 'txr%' order by 1, 2"
)
ACL = "select relname, relacl::text[] from pg_class where relname like 'txr%' order by 1"
OWNER = (
    "select r.rolname from pg_class c join pg_roles r on r.oid = c.relowner"
    " where c.relname = 'txr_t'"
)
CAN_READ = "select has_table_privilege('txr_r', 'txr_t', 'select')"

STEPS = [
    ("a", "create table txr_t (id int, v int)"),
    ("a", "insert into txr_t values (1, 1)"),
    # Rolled back: the role, its grant and its SET ROLE are seen only inside the block.
    ("a", "begin"),
    ("a", "create role txr_r login"),
    ("a", NAMES),
    ("b", NAMES),
    ("a", "grant select on txr_t to txr_r"),
    ("a", CAN_READ),
    ("b", CAN_READ),
    ("a", "set role txr_r"),
    ("a", "select current_user, count(*) from txr_t"),
    ("a", "update txr_t set v = 2"),
    ("a", "rollback"),
    ("a", "select current_user"),
    ("a", NAMES),
    ("a", CAN_READ),
    # Autocommit: one Query's statements are one transaction.
    ("a", "create role txr_m; select 1 / 0"),
    ("b", NAMES),
    # Savepoints, then a commit.
    ("a", "begin"),
    ("a", "create role txr_r login"),
    ("a", "savepoint s"),
    ("a", "create role txr_s"),
    ("a", "grant txr_s to txr_r"),
    ("a", "alter role txr_r nologin"),
    ("a", "grant select (id) on txr_t to txr_r"),
    ("a", NAMES),
    ("a", MEMBERS),
    ("a", "select has_column_privilege('txr_r', 'txr_t', 'id', 'select')"),
    ("a", "rollback to savepoint s"),
    ("a", NAMES),
    ("a", MEMBERS),
    ("a", "select has_column_privilege('txr_r', 'txr_t', 'id', 'select')"),
    ("a", "grant select, insert on txr_t to txr_r"),
    ("a", "create role txr_g"),
    ("a", "grant txr_g to txr_r"),
    ("b", NAMES),
    ("b", MEMBERS),
    ("b", ACL),
    ("a", "commit"),
    ("b", NAMES),
    ("b", MEMBERS),
    ("b", ACL),
    ("b", CAN_READ),
    # REVOKE, membership REVOKE and DROP ROLE, rolled back.
    ("a", "begin"),
    ("a", "revoke insert on txr_t from txr_r"),
    ("a", "revoke txr_g from txr_r"),
    ("a", "drop role txr_g"),
    ("a", ACL),
    ("a", MEMBERS),
    ("b", NAMES),
    ("b", ACL),
    ("a", "rollback"),
    ("b", NAMES),
    ("b", MEMBERS),
    ("b", ACL),
    # ALTER ... OWNER TO and schema and database grants.
    ("a", "begin"),
    ("a", "alter table txr_t owner to txr_r"),
    ("a", "grant create on schema public to txr_r"),
    ("a", "revoke temporary on database nyala from public"),
    ("a", OWNER),
    ("a", "select has_schema_privilege('txr_r', 'public', 'create')"),
    ("b", OWNER),
    ("b", "select has_schema_privilege('txr_r', 'public', 'create')"),
    ("b", "select has_database_privilege('txr_g', 'nyala', 'temporary')"),
    ("a", "commit"),
    ("b", OWNER),
    ("b", "select has_schema_privilege('txr_r', 'public', 'create')"),
    ("b", "select has_database_privilege('txr_g', 'nyala', 'temporary')"),
    ("a", "begin"),
    ("a", "alter table txr_t owner to nyala"),
    ("a", "revoke create on schema public from txr_r"),
    ("a", "grant temporary on database nyala to public"),
    ("a", "commit"),
    ("b", OWNER),
    # ALTER DEFAULT PRIVILEGES: rolled back, then committed.
    ("a", "begin"),
    ("a", "alter default privileges grant select on tables to txr_g"),
    ("a", "create table txr_u (id int)"),
    ("a", ACL),
    ("a", "rollback"),
    ("a", "create table txr_u (id int)"),
    ("b", ACL),
    ("a", "drop table txr_u"),
    ("a", "begin"),
    ("a", "alter default privileges grant select on tables to txr_g"),
    ("b", "select count(*) from pg_default_acl"),
    ("a", "commit"),
    ("b", "create table txr_u (id int)"),
    ("b", ACL),
    ("a", "alter default privileges revoke select on tables from txr_g"),
]


def _cleanup(conn: psycopg.Connection) -> None:
    for table in TABLES:
        conn.execute(f"drop table if exists {table}")
    for role in ROLES:
        with contextlib.suppress(psycopg.Error):
            conn.execute(f"alter default privileges revoke all on tables from {role}")
        with contextlib.suppress(psycopg.Error):
            conn.execute(f"revoke all on schema public from {role}")
        conn.execute(f"drop role if exists {role}")
    conn.execute("grant temporary on database nyala to public")


def _run(conn: psycopg.Connection, sql: str) -> object:
    try:
        cur = conn.execute(sql)
        return cur.fetchall() if cur.description else cur.statusmessage
    except psycopg.Error as exc:
        return exc.sqlstate


def _scenario(server) -> list[tuple[str, str, object]]:
    conns = {who: psycopg.connect(server.dsn, autocommit=True) for who in ("a", "b")}
    try:
        _cleanup(conns["a"])
        return [(who, sql, _run(conns[who], sql)) for who, sql in STEPS]
    finally:
        conns["a"].execute("rollback")
        conns["a"].execute("reset role")
        _cleanup(conns["a"])
        for conn in conns.values():
            conn.close()


def test_role_and_privilege_changes_are_transactional_as_in_postgresql(
    nyala_server, postgres_server
):
    nyala = _scenario(nyala_server)
    postgres = _scenario(postgres_server)
    assert [(n, p) for n, p in zip(nyala, postgres, strict=True) if n != p] == []
    # The scenario shows what it means to: the rolled-back role is gone, the committed kept.
    assert ("a", NAMES, []) in nyala[:16]
    assert ("b", CAN_READ, [(True,)]) in nyala


def _owners_after_a_savepoint(server) -> list[object]:
    su = psycopg.connect(server.dsn, autocommit=True)
    try:
        su.execute("drop table if exists txr_o1, txr_o2")
        su.execute("drop role if exists txr_o")
        su.execute("create role txr_o login")
        su.execute("grant create on schema public to txr_o")
        with psycopg.connect(
            make_dsn(server.host, server.port, "txr_o", "nyala"), autocommit=True
        ) as own:
            out = [
                _run(own, sql)
                for sql in (
                    "begin",
                    "create table txr_o1 (id int)",
                    "savepoint s",
                    "create table txr_o2 (id int)",
                    "rollback to savepoint s",
                    "insert into txr_o1 values (1)",
                    "commit",
                    "insert into txr_o1 values (2)",
                )
            ]
        out.append(
            _run(
                su,
                "select c.relname, r.rolname from pg_class c join pg_roles r"
                " on r.oid = c.relowner where c.relname like 'txr_o%' order by 1",
            )
        )
        return out
    finally:
        su.execute("drop table if exists txr_o1, txr_o2")
        su.execute("revoke create on schema public from txr_o")
        su.execute("drop role if exists txr_o")
        su.close()


def test_a_table_created_before_a_savepoint_keeps_its_owner_as_in_postgresql(
    nyala_server, postgres_server
):
    nyala = _owners_after_a_savepoint(nyala_server)
    assert nyala == _owners_after_a_savepoint(postgres_server)
    assert nyala[-1] == [("txr_o1", "txr_o")]


def test_a_concurrent_create_role_of_the_same_name_waits_then_fails(fresh_nyala_server):
    """As in PostgreSQL, the second CREATE ROLE waits for the open transaction holding the
    name and fails with 23505 (pg_authid's unique index) once it commits
    (tests/e2e/test_two_phase_roles.py compares this with PostgreSQL, prepared ones too)."""
    with (
        psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as first,
        psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as second,
    ):
        first.execute("begin")
        first.execute("create role txr_twice login")
        second.execute("begin")
        second.execute("create table txr_side (id int)")
        outcome: list[object] = []

        def create() -> None:
            try:
                second.execute("create role txr_twice")
                outcome.append("created")
            except psycopg.Error as exc:
                outcome.append(exc.sqlstate)

        waiter = threading.Thread(target=create)
        waiter.start()
        waiter.join(1.0)
        assert waiter.is_alive() and not outcome, "the second CREATE ROLE waits for the first"
        first.execute("commit")
        waiter.join(30)
        assert outcome == ["23505"]
        second.execute("rollback")
        assert first.execute(
            "select rolcanlogin from pg_roles where rolname = 'txr_twice'"
        ).fetchall() == [(True,)]
        # The failed transaction rolled back whole, its table too.
        assert first.execute("select to_regclass('txr_side')").fetchone() == (None,)


def test_kill9_keeps_committed_roles_and_grants_and_loses_the_rest(nyala_server_factory):
    server = nyala_server_factory()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("create table txr_k (id int)")
        conn.execute("begin")
        conn.execute("create role txr_kept login")
        conn.execute("grant select on txr_k to txr_kept")
        conn.execute("commit")
    open_block = psycopg.connect(server.dsn, autocommit=True)
    open_block.execute("begin")
    open_block.execute("create role txr_lost login")
    open_block.execute("grant insert on txr_k to txr_kept")
    open_block.execute("grant txr_kept to txr_lost")
    server.kill9()
    with contextlib.suppress(psycopg.Error):
        open_block.close()
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute(
            "select rolname from pg_roles where rolname like 'txr%' order by 1"
        ).fetchall() == [("txr_kept",)]
        assert conn.execute(
            "select has_table_privilege('txr_kept', 'txr_k', 'select'),"
            " has_table_privilege('txr_kept', 'txr_k', 'insert')"
        ).fetchone() == (True, False)
        assert conn.execute("select count(*) from pg_auth_members").fetchone() == (0,)
