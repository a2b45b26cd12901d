"""GRANT, REVOKE, owners and the checks every statement kind makes, compared with PostgreSQL 15.

Each scenario runs the same statements, as several roles, against nyala and
PostgreSQL and compares what happened: rows, SQLSTATEs, warnings and the
ACLs as pg_class.relacl and has_table_privilege show them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from server import messages as m
from tests.support.raw_client import RawClient, errors
from tests.support.servers import make_dsn

pytestmark = pytest.mark.e2e

ROLES = ("priv_alice", "priv_bob", "priv_carol")


def _connect(server, user: str | None = None) -> psycopg.Connection:
    dsn = server.dsn if user is None else make_dsn(server.host, server.port, user, "nyala")
    return psycopg.connect(dsn, autocommit=True)


class Roles:
    """One connection per role (``su`` the superuser), each noting the warnings it gets."""

    def __init__(self, server) -> None:
        self.su = _connect(server)
        self.warnings: list[str] = []
        for role in ROLES:
            self.su.execute(f"drop role if exists {role}")
            self.su.execute(f"create role {role} login")
        self.conns = {"su": self.su} | {r.removeprefix("priv_"): _connect(server, r) for r in ROLES}
        for conn in self.conns.values():
            conn.add_notice_handler(
                lambda d: (
                    self.warnings.append(d.sqlstate or "")
                    if d.severity_nonlocalized == "WARNING"
                    else None
                )
            )

    def run(self, who: str, sql: str) -> object:
        self.warnings.clear()
        try:
            cur = self.conns[who].execute(sql)
            out: object = cur.fetchall() if cur.description else cur.statusmessage
        except psycopg.Error as exc:
            out = exc.sqlstate
        return (out, *self.warnings) if self.warnings else out

    def close(self, tables: tuple[str, ...]) -> None:
        for table in tables:
            self.su.execute(f"drop table if exists {table}")
        roles = ", ".join(ROLES)
        # The shared PostgreSQL keeps other tests' tables, which ON ALL TABLES reaches too.
        self.su.execute(f"revoke all on all tables in schema public from {roles}")
        self.su.execute(f"revoke all on schema public from {roles}")
        for name, conn in self.conns.items():
            if name != "su":
                conn.close()
        for role in ROLES:
            self.su.execute(f"drop role {role}")
        self.su.close()


def _scenario(server, steps: list[tuple[str, str]], tables: tuple[str, ...]) -> list[object]:
    roles = Roles(server)
    try:
        return [(who, sql, roles.run(who, sql)) for who, sql in steps]
    finally:
        roles.close(tables)


ACL = "select relname, relacl::text[] from pg_class where relname in ('pg1', 'pg2') order by 1"

GRANTS = [
    ("su", "create table pg1 (id int primary key, v int)"),
    ("su", "insert into pg1 values (1, 10), (2, 20)"),
    ("alice", "select * from pg1"),
    ("alice", "insert into pg1 values (3, 30)"),
    ("alice", "grant select on pg1 to priv_bob"),
    ("alice", "create table pg2 (x int)"),
    ("su", ACL),
    ("su", "grant select, update on pg1 to priv_alice with grant option"),
    ("su", "grant create on schema public to priv_alice"),
    ("alice", "select * from pg1 order by id"),
    ("alice", "update pg1 set v = v + 1 where id = 1"),
    ("alice", "update pg1 set v = 0"),
    ("alice", "delete from pg1 where id = 2"),
    ("alice", "grant select on pg1 to priv_bob"),
    ("alice", "grant delete on pg1 to priv_bob"),
    ("alice", "grant select, delete on pg1 to priv_bob"),
    ("bob", "select * from pg1 order by id"),
    ("bob", "grant select on pg1 to priv_carol"),
    ("alice", "create table pg2 (x int)"),
    ("alice", "insert into pg2 values (1)"),
    ("alice", "grant all on pg2 to public"),
    ("alice", "revoke insert on pg2 from public"),
    ("carol", "select * from pg2"),
    ("carol", "insert into pg2 values (2)"),
    ("carol", "drop table pg2"),
    ("su", ACL),
    (
        "su",
        "select has_table_privilege('priv_bob', 'pg1', 'select'),"
        " has_table_privilege('priv_bob', 'pg1', 'update'),"
        " has_table_privilege('priv_alice', 'pg1', 'update with grant option'),"
        " has_table_privilege('priv_carol', 'pg2', 'delete'),"
        " has_schema_privilege('priv_alice', 'public', 'create'),"
        " has_schema_privilege('priv_bob', 'public', 'create, usage')",
    ),
    ("bob", "select has_table_privilege('pg1', 'select'), has_table_privilege('pg1', 'insert')"),
    ("su", "revoke grant option for select on pg1 from priv_alice"),
    ("su", "revoke grant option for select on pg1 from priv_alice cascade"),
    ("su", ACL),
    ("bob", "select * from pg1"),
    ("alice", "revoke all on pg1 from priv_bob"),
    ("su", "revoke all on pg1 from priv_alice"),
    ("su", "grant usage on pg1 to priv_bob"),
    ("su", "grant create on schema public to priv_nobody"),
    ("su", "grant select on pg_nosuch to priv_bob"),
    ("su", "grant select on nosuch.pg1 to priv_bob"),
    ("su", "grant select on pg1, pg2 to priv_carol, public"),
    ("su", ACL),
    ("alice", "drop table pg1"),
    ("alice", "alter table pg1 add column w int"),
    ("alice", "comment on table pg1 is 'x'"),
    ("su", "grant select on all tables in schema public to priv_bob"),
    ("su", ACL),
    ("alice", "drop table pg2"),
]


def test_grant_and_revoke_as_several_roles_match_postgresql(nyala_server, postgres_server):
    tables = ("pg1", "pg2")
    nyala = _scenario(nyala_server, GRANTS, tables)
    postgres = _scenario(postgres_server, GRANTS, tables)
    assert nyala == postgres
    assert ("alice", "select * from pg1", "42501") in nyala


MATRIX_STATEMENTS = [
    "select v from pm",
    "select count(*) from pm",
    "insert into pm values (5, 5)",
    "insert into pm values (6, 6) returning id",
    "insert into pm values (1, 1) on conflict (id) do update set v = excluded.v",
    "update pm set v = 0",
    "update pm set v = v + 1",
    "update pm set v = 0 where id = 1",
    "delete from pm",
    "delete from pm where id = 1",
    "truncate pm",
    "copy pm to stdout",
    "copy (select id from pm) to stdout",
    "copy pm from stdin",
    "drop table pm",
    "alter table pm add column w int",
    "comment on table pm is 'x'",
    "create table pm_new (id int)",
    "explain select * from pm",
]
MATRIX_GRANTS = ["", "select", "insert", "update", "delete", "truncate", "select, insert, update"]


def _matrix(server) -> Iterator[tuple[str, str, str]]:
    roles = Roles(server)
    su, bob = roles.su, roles.conns["bob"]
    try:
        su.execute("create table pm (id int primary key, v int)")
        su.execute("insert into pm values (1, 1), (2, 2)")
        for grant in MATRIX_GRANTS:
            su.execute("revoke all on pm from priv_bob")
            if grant:
                su.execute(f"grant {grant} on pm to priv_bob")
            for sql in MATRIX_STATEMENTS:
                bob.autocommit = False
                try:
                    with bob.cursor() as cur:
                        if sql.endswith("from stdin"):
                            with cur.copy(sql) as copy:
                                copy.write_row((9, 9))
                        elif sql.endswith("to stdout"):
                            with cur.copy(sql) as copy:
                                list(copy)
                        else:
                            cur.execute(sql)
                    outcome = "ok"
                except psycopg.Error as exc:
                    outcome = exc.sqlstate or "?"
                bob.rollback()
                bob.autocommit = True
                yield grant or "nothing", sql, outcome
    finally:
        roles.close(("pm", "pm_new"))


def test_each_statement_kind_checks_what_postgresql_checks(nyala_server, postgres_server):
    nyala = list(_matrix(nyala_server))
    postgres = list(_matrix(postgres_server))
    assert [n for n, p in zip(nyala, postgres, strict=True) if n != p] == []
    denied = {(g, s) for g, s, outcome in nyala if outcome == "42501"}
    assert ("nothing", "select v from pm") in denied and (
        "select",
        "select v from pm",
    ) not in denied


def test_privileges_survive_a_restart(fresh_nyala_server):
    with _connect(fresh_nyala_server) as su:
        su.execute("create role priv_dora login")
        su.execute("create table kept (id int primary key)")
        su.execute("grant select, insert on kept to priv_dora with grant option")
    fresh_nyala_server.restart()
    with _connect(fresh_nyala_server) as su:
        assert su.execute(
            "select relacl::text[] from pg_class where relname = 'kept'"
        ).fetchone() == (["nyala=arwdDxt/nyala", "priv_dora=a*r*/nyala"],)
    with _connect(fresh_nyala_server, "priv_dora") as dora:
        dora.execute("insert into kept values (1)")
        assert dora.execute("select id from kept").fetchall() == [(1,)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            dora.execute("delete from kept")


@pytest.mark.usefixtures("psql")
def test_psql_dp_and_z_show_the_acls_as_postgresql_does(nyala_server, postgres_server):
    setup = [
        "create role priv_viewer login",
        "create table priv_shown (id int primary key, v int)",
        "create table priv_plain (id int primary key)",
        "grant select, insert on priv_shown to priv_viewer with grant option",
        "grant select on priv_shown to public",
    ]
    outputs = []
    for server in (nyala_server, postgres_server):
        server.psql([a for s in setup for a in ("-c", s)], check=True)
        try:
            shown = server.psql(["-c", r"\dp priv_*", "-c", r"\z priv_shown"], check=True)
            outputs.append(shown.stdout)
        finally:
            server.psql(
                ["-c", "drop table priv_shown", "-c", "drop table priv_plain",
                 "-c", "drop role priv_viewer"],
                check=True,
            )  # fmt: skip
    assert outputs[0] == outputs[1]
    assert "priv_viewer=a*r*/nyala" in outputs[0]


def test_a_role_with_privileges_cannot_be_dropped(nyala_server, postgres_server):
    steps = [
        ("su", "create table priv_dep (id int primary key)"),
        ("su", "grant select on priv_dep to priv_bob"),
        ("su", "grant create on schema public to priv_alice"),
        ("alice", "create table priv_dep2 (id int primary key)"),
        ("su", "drop role priv_bob"),
        ("su", "drop role priv_alice"),
        ("su", "revoke select on priv_dep from priv_bob"),
        ("su", "revoke create on schema public from priv_alice"),
        ("su", "drop role priv_bob"),
        ("su", "drop role priv_alice"),
        ("su", "drop table priv_dep2"),
        ("su", "drop role priv_alice"),
        ("su", "create role priv_alice login"),
        ("su", "create role priv_bob login"),
    ]
    tables = ("priv_dep", "priv_dep2")
    nyala = _scenario(nyala_server, steps, tables)
    assert nyala == _scenario(postgres_server, steps, tables)
    assert nyala[4][2] == "2BP01"


README = Path(__file__).resolve().parents[2] / "README.md"
LEAST_PRIVILEGE_ROLES = ("migrator", "app", "reporting", "support")


def _readme_blocks() -> list[tuple[str, list[str]]]:
    """The README's least-privilege setup: (role, statements) per SQL block."""
    section = README.read_text().split("## Privileges\n", 1)[1].split("\n## ", 1)[0]
    out = []
    for block in section.split("```sql\n")[1:]:
        body = block.split("```", 1)[0]
        who = body.splitlines()[0].removeprefix("-- as ").split(":")[0].strip()
        text = "\n".join(line.split("--", 1)[0] for line in body.splitlines())
        out.append((who, [s.strip() for s in text.split(";") if s.strip()]))
    return out


LEAST_PRIVILEGE_CHECKS = [
    ("app", "insert into customers values (1, 'ada')"),
    ("app", "insert into orders values (1, 1, 9.50)"),
    ("app", "update orders set amount = amount + 1 where id = 1"),
    ("app", "select name, amount from customers join orders on customer_id = customers.id"),
    ("app", "delete from orders where id = 1"),
    ("app", "truncate orders"),
    ("app", "drop table orders"),
    ("app", "alter table orders add column note text"),
    ("app", "create table scratch (id int)"),
    ("reporting", "select count(*) from customers"),
    ("reporting", "insert into customers values (2, 'bob')"),
    ("reporting", "update customers set name = 'x'"),
    ("reporting", "delete from customers"),
    ("support", "select id, name from customers order by id"),
    ("support", "select * from customers"),
    ("support", "select id from customers where email is null"),
    ("support", "select count(*) from orders"),
    ("support", "update customers set name = 'Ada' where id = 1"),
    ("support", "update customers set id = 3 where id = 1"),
    ("support", "delete from customers where id = 1"),
    ("support", "insert into customers (id, name) values (5, 'eve')"),
    ("support", "select has_column_privilege('customers', 'name', 'update')"),
    ("migrator", "alter table orders add column note text"),
    ("migrator", "select count(*) from orders"),
    ("migrator", "drop table orders"),
    ("migrator", "drop table customers"),
    ("migrator", "create table audit (id int primary key)"),
    ("reporting", "select count(*) from audit"),
    ("app", "select count(*) from audit"),
]


def _least_privilege(server) -> list[object]:
    with _connect(server) as su:
        for role in LEAST_PRIVILEGE_ROLES:
            su.execute(f"drop role if exists {role}")
        out: list[object] = []
        conns: dict[str, psycopg.Connection] = {"a superuser": su}
        try:
            for who, statements in _readme_blocks():
                if who not in conns:
                    conns[who] = _connect(server, who)
                for sql in statements:
                    conns[who].execute(sql)
            for who, sql in LEAST_PRIVILEGE_CHECKS:
                if who not in conns:
                    conns[who] = _connect(server, who)
                try:
                    cur = conns[who].execute(sql)
                    out.append((who, sql, cur.fetchall() if cur.description else "ok"))
                except psycopg.Error as exc:
                    out.append((who, sql, exc.sqlstate))
        finally:
            for conn in conns.values():
                if conn is not su:
                    conn.close()
            su.execute("drop table if exists orders")
            su.execute("drop table if exists customers")
            su.execute("drop table if exists audit")
            su.execute("revoke create on schema public from migrator")
            su.execute("drop owned by migrator")  # its default privileges
            for role in LEAST_PRIVILEGE_ROLES:
                su.execute(f"drop role if exists {role}")
    return out


def test_the_readme_least_privilege_setup(nyala_server, postgres_server):
    nyala = _least_privilege(nyala_server)
    assert nyala == _least_privilege(postgres_server)
    outcome = {(who, sql): result for who, sql, result in nyala}
    assert outcome[("app", "truncate orders")] == "42501"
    assert outcome[("reporting", "delete from customers")] == "42501"
    assert outcome[("migrator", "drop table customers")] == "ok"
    assert outcome[("reporting", "select count(*) from audit")] == [(0,)]
    assert outcome[("support", "select * from customers")] == "42501"
    assert outcome[("support", "update customers set name = 'Ada' where id = 1")] == "ok"


def test_checks_run_at_every_execution_and_on_every_path(nyala_server, postgres_server):
    """A REVOKE reaches a statement prepared before it; pipelined INSERTs, cursors and
    EXPLAIN are checked as single statements are."""

    def scenario(server) -> list[object]:
        out: list[object] = []
        roles = Roles(server)
        try:
            su, bob = roles.su, roles.conns["bob"]
            su.execute("create table priv_paths (id int primary key, v int)")
            su.execute("grant select, insert on priv_paths to priv_bob")
            query = "select count(*) from priv_paths where id > %s"
            out.append(bob.execute(query, (0,), prepare=True).fetchone())
            su.execute("revoke select on priv_paths from priv_bob")
            for attempt in (
                lambda: bob.execute(query, (0,), prepare=True),
                lambda: bob.execute("declare c cursor with hold for select * from priv_paths"),
                lambda: bob.execute("explain select * from priv_paths"),
            ):
                try:
                    attempt()
                    out.append("ok")
                except psycopg.Error as exc:
                    out.append(exc.sqlstate)
            out.append(_pipelined_insert(server, range(20)))
            su.execute("revoke insert on priv_paths from priv_bob")
            out.append(_pipelined_insert(server, range(20, 40)))
            out.append(su.execute("select count(*) from priv_paths").fetchone())
        finally:
            roles.close(("priv_paths",))
        return out

    nyala = scenario(nyala_server)
    assert nyala == scenario(postgres_server)
    assert nyala[-3:] == [[None], ["42501"], (20,)]


def _pipelined_insert(server, keys: range) -> list[str | None]:
    """One prepared INSERT, a Bind/Execute per key and one Sync, sent at once as priv_bob: the
    run nyala applies as one batch write (server/batches.py); the SQLSTATEs answered."""
    client = RawClient(server.host, server.port)
    try:
        client.startup(user="priv_bob")
        client.send(m.Parse("ins", "insert into priv_paths values ($1, $2)", ()), m.Sync())
        client.until_ready()
        messages: list[m.FrontendMessage] = []
        for key in keys:
            messages += [m.Bind("", "ins", (), (str(key).encode(), b"1"), ()), m.Execute("", 0)]
        client.send(*messages, m.Sync())
        return errors(client.until_ready()) or [None]
    finally:
        client.close()


def test_information_schema_grants_match_postgresql(nyala_server, postgres_server):
    views = ("table_privileges", "role_table_grants")
    steps = [
        ("su", "create table priv_is (id int primary key)"),
        ("su", "grant select, insert on priv_is to priv_bob with grant option"),
        ("su", "grant select on priv_is to public"),
        ("bob", "grant insert on priv_is to priv_carol"),
    ] + [
        (who, f"select * from information_schema.{view} where table_name = 'priv_is'"
              " order by grantor, grantee, privilege_type")
        for who in ("su", "bob", "carol", "alice")
        for view in views
    ]  # fmt: skip
    nyala = _scenario(nyala_server, steps, ("priv_is",))
    assert nyala == _scenario(postgres_server, steps, ("priv_is",))
    assert ("nyala", "priv_bob", "nyala", "public", "priv_is", "INSERT", "YES", "NO") in nyala[4][2]


def test_alter_table_owner_to_matches_postgresql(nyala_server, postgres_server):
    acl = "select relowner::regrole::text, relacl::text[] from pg_class where relname = 'priv_own'"
    steps = [
        ("su", "create table priv_own (id int primary key)"),
        ("su", "grant select on priv_own to priv_bob"),
        ("su", "grant insert on priv_own to priv_alice with grant option"),
        ("alice", "grant insert on priv_own to priv_carol"),
        ("alice", "alter table priv_own owner to priv_alice"),
        ("su", "alter table priv_own owner to priv_nobody"),
        ("su", "alter table priv_own owner to public"),
        ("su", "alter table priv_nosuch owner to priv_alice"),
        ("su", "alter table if exists priv_nosuch owner to priv_alice"),
        ("su", "alter table priv_own owner to priv_alice"),
        ("su", acl),
        ("alice", "insert into priv_own values (1)"),
        ("alice", "select * from priv_own"),
        ("alice", "alter table priv_own owner to priv_bob"),
        ("alice", "alter table priv_own owner to current_user"),
        ("alice", "drop table priv_own"),
    ]
    nyala = _scenario(nyala_server, steps, ("priv_own",))
    assert nyala == _scenario(postgres_server, steps, ("priv_own",))
    assert nyala[-1][2] == "DROP TABLE"
