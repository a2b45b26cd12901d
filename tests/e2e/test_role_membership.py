"""Role membership, INHERIT, SET ROLE, SESSION AUTHORIZATION and the predefined roles,
compared with PostgreSQL 15.

The same steps run as several roles on nyala and on PostgreSQL; rows, SQLSTATEs and
warnings must agree, and so must psql's ``\\du`` of the roles involved.
"""

from __future__ import annotations

import psycopg
import pytest

from server import messages as m
from tests.e2e.test_privileges import README, _connect, _scenario
from tests.support.differential import both, outcome
from tests.support.raw_client import RawClient, errors

pytestmark = pytest.mark.e2e

MEMBERS = (
    "select r.rolname, m.rolname, a.admin_option from pg_auth_members a"
    " join pg_roles r on r.oid = a.roleid join pg_roles m on m.oid = a.member"
    " where m.rolname like 'priv%' order by 1, 2"
)

MEMBERSHIP = [
    ("su", "drop role if exists priv_team"),
    ("su", "create role priv_team"),
    ("su", "create table pr1 (id int primary key, v int)"),
    ("su", "insert into pr1 values (1, 10)"),
    ("su", "grant select on pr1 to priv_team"),
    ("alice", "select * from pr1"),
    ("su", "grant priv_team to priv_alice"),
    ("alice", "select * from pr1"),
    ("alice", "select has_table_privilege('pr1', 'select'), current_user, session_user"),
    ("su", "select has_table_privilege('priv_alice', 'pr1', 'select')"),
    ("su", "grant priv_team to priv_alice"),
    ("su", "grant priv_team to priv_team"),
    ("su", "grant priv_alice to priv_team"),
    ("su", "grant priv_nosuch to priv_alice"),
    ("su", "grant priv_team to priv_nosuch"),
    ("alice", "grant priv_team to priv_bob"),
    ("su", "grant priv_team to priv_alice with admin option"),
    ("alice", "grant priv_team to priv_bob"),
    ("bob", "select v from pr1"),
    ("su", MEMBERS),
    # NOINHERIT: the membership allows SET ROLE but gives no privileges by itself.
    ("su", "alter role priv_carol noinherit"),
    ("su", "grant priv_team to priv_carol"),
    ("carol", "select * from pr1"),
    ("carol", "set role priv_team"),
    ("carol", "select current_user, session_user"),
    ("carol", "show role"),
    ("carol", "select * from pr1"),
    ("carol", "insert into pr1 values (5, 50)"),
    ("carol", "reset role"),
    ("carol", "select * from pr1"),
    ("carol", "begin"),
    ("carol", "set local role priv_team"),
    ("carol", "select count(*) from pr1"),
    ("carol", "commit"),
    ("carol", "select count(*) from pr1"),
    ("carol", "begin"),
    ("carol", "set role priv_team"),
    ("carol", "rollback"),
    ("carol", "select current_user"),
    ("carol", "select rolname, rolinherit from pg_roles where rolname like 'priv%' order by 1"),
    (
        "su",
        "select pg_has_role('priv_alice', 'priv_team', 'member'),"
        " pg_has_role('priv_alice', 'priv_team', 'usage'),"
        " pg_has_role('priv_alice', 'priv_team', 'member with admin option'),"
        " pg_has_role('priv_carol', 'priv_team', 'member'),"
        " pg_has_role('priv_carol', 'priv_team', 'usage'),"
        " pg_has_role('priv_bob', 'priv_team', 'usage with admin option'),"
        " pg_has_role('priv_bob', 'priv_alice', 'member')",
    ),
    ("carol", "select pg_has_role('priv_team', 'member'), pg_has_role('priv_team', 'usage')"),
    ("su", "select pg_has_role('priv_team', 'priv_alice', 'sing')"),
    (
        "alice",
        "select has_database_privilege('nyala', 'connect'),"
        " has_database_privilege('priv_bob', 'nyala', 'create'),"
        " has_database_privilege('nyala', 'temp, create')",
    ),
    ("alice", "select has_database_privilege('nyala_nosuch', 'connect')"),
    ("bob", "set role priv_alice"),
    ("bob", "set role priv_nosuch"),
    ("bob", "set role none"),
    ("carol", "set session authorization priv_bob"),
    ("carol", "set session authorization priv_carol"),
    # A superuser may become any role, and then has only its privileges.
    ("su", "set session authorization priv_bob"),
    ("su", "select current_user, session_user"),
    ("su", "select v from pr1"),
    ("su", "create role priv_never"),
    ("su", "set role priv_team"),
    ("su", "set role priv_alice"),
    ("su", "set session authorization default"),
    ("su", "set role priv_alice"),
    ("su", "select current_user, session_user"),
    ("su", "create table pr2 (id int)"),
    ("su", "drop table pr1"),
    ("su", "reset role"),
    ("su", "select current_user"),
    ("alice", "revoke priv_team from priv_bob"),
    ("bob", "select v from pr1"),
    ("su", "revoke admin option for priv_team from priv_alice"),
    ("alice", "grant priv_team to priv_bob"),
    ("su", "revoke priv_team from priv_bob"),
    ("su", MEMBERS),
    # The predefined roles.
    ("su", "grant pg_read_all_data to priv_bob"),
    ("bob", "select v from pr1"),
    ("bob", "insert into pr1 values (2, 20)"),
    ("su", "grant pg_write_all_data to priv_bob"),
    ("bob", "insert into pr1 values (2, 20)"),
    ("bob", "update pr1 set v = 21 where id = 2"),
    ("bob", "delete from pr1 where id = 2"),
    ("bob", "truncate pr1"),
    ("bob", "drop table pr1"),
    ("alice", "grant pg_read_all_data to priv_carol"),
    ("su", "revoke pg_read_all_data, pg_write_all_data from priv_bob"),
    ("bob", "select v from pr1"),
    ("su", "create role pg_mine"),
    ("su", "drop role pg_signal_backend"),
    (
        "su",
        "select rolname, rolcanlogin from pg_roles where rolname in"
        " ('pg_read_all_data', 'pg_write_all_data', 'pg_signal_backend') order by 1",
    ),  # fmt: skip
    ("su", "drop role priv_team"),
    ("su", "drop table pr1"),
    ("su", "drop role priv_team"),
    ("su", MEMBERS),
]


def test_role_membership_matches_postgresql(nyala_server, postgres_server):
    tables = ("pr1", "pr2")
    nyala = both(
        lambda server: _scenario(server, MEMBERSHIP, tables), nyala_server, postgres_server
    )
    outcome = {(who, sql): out for who, sql, out in nyala}
    assert outcome[("alice", "select * from pr1")] == [(1, 10)]
    assert outcome[("carol", "set role priv_team")] == "SET"


@pytest.mark.usefixtures("psql")
def test_psql_du_shows_memberships_as_postgresql_does(nyala_server, postgres_server):
    setup = [
        "create role priv_du_team nologin",
        "create role priv_du_app login noinherit",
        "create role priv_du_admin superuser",
        "grant priv_du_team to priv_du_app",
        "grant pg_read_all_data to priv_du_app",
    ]

    def du(server) -> str:
        server.psql([a for s in setup for a in ("-c", s)], check=True)
        try:
            return server.psql(["-c", r"\du priv_du*"], check=True).stdout
        finally:
            for role in ("priv_du_app", "priv_du_team", "priv_du_admin"):
                server.psql(["-c", f"drop role {role}"], check=True)

    assert "{pg_read_all_data,priv_du_team}" in both(du, nyala_server, postgres_server)


def test_memberships_survive_a_restart(fresh_nyala_server):
    with _connect(fresh_nyala_server) as su:
        su.execute("create role priv_keep_team")
        su.execute("create role priv_keep login noinherit")
        su.execute("grant priv_keep_team to priv_keep with admin option")
        su.execute("create table kept_m (id int primary key)")
        su.execute("grant select on kept_m to priv_keep_team")
    fresh_nyala_server.restart()
    with _connect(fresh_nyala_server, "priv_keep") as keep:
        assert keep.execute(
            "select rolinherit from pg_roles where rolname = 'priv_keep'"
        ).fetchone() == (False,)
        assert keep.execute("select admin_option from pg_auth_members").fetchall() == [(True,)]
        keep.execute("set role priv_keep_team")
        assert keep.execute("select count(*) from kept_m").fetchone() == (0,)


README_ROLES = ("analysts", "dana", "ops")
README_CHECKS = [
    ("dana", "select count(*) from metrics"),
    ("dana", "insert into metrics values ('2024-01-01', 1)"),
    ("ops", "select count(*) from metrics"),
    ("ops", "set role dana"),
    ("ops", "set role analysts"),
    ("ops", "insert into metrics values ('2024-01-01', 1)"),
]


def _readme_membership(server) -> list[object]:
    """The README's role membership example, statement by statement, then checks."""
    section = README.read_text().split("## Role membership and SET ROLE\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    out: list[object] = []
    with _connect(server) as su:
        su.execute("drop table if exists metrics")
        for role in README_ROLES:
            su.execute(f"drop role if exists {role}")
        conns: dict[str, psycopg.Connection] = {"a superuser": su}
        try:
            steps = []
            for block in section.split("```sql\n")[1:]:
                body = block.split("```", 1)[0]
                who = body.splitlines()[0].removeprefix("-- as ").strip()
                text = "\n".join(line.split("--", 1)[0] for line in body.splitlines())
                steps += [(who, s.strip()) for s in text.split(";") if s.strip()]
            for who, sql in [*steps, *README_CHECKS]:
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
            su.execute("drop table if exists metrics")
            for role in README_ROLES:
                su.execute(f"drop role if exists {role}")
    return out


def test_the_readme_role_membership_example(nyala_server, postgres_server):
    nyala = both(_readme_membership, nyala_server, postgres_server)
    outcome = {(who, sql): result for who, sql, result in reversed(nyala)}  # the first of each
    assert outcome[("dana", "select count(*) from metrics")] == [(0,)]
    assert nyala[-6] == ("dana", "select count(*) from metrics", "42501")  # after the REVOKE
    assert outcome[("ops", "select current_user, session_user")] == [("analysts", "ops")]
    assert outcome[("dana", "insert into metrics values ('2024-01-01', 1)")] == "42501"


VIEWS = [
    ("su", "create table pv1 (id int primary key, secret text)"),
    ("su", "insert into pv1 values (1, 's'), (2, 't')"),
    ("su", "grant create on schema public to priv_alice"),
    ("su", "grant select on pv1 to priv_alice"),
    ("alice", "create view pv_alice as select id from pv1"),
    ("bob", "select * from pv_alice"),
    ("alice", "grant select on pv_alice to priv_bob"),
    ("bob", "select * from pv_alice order by id"),
    ("bob", "select * from pv1"),
    ("bob", "select count(*) from pv_alice where id > 1"),
    ("su", "revoke select on pv1 from priv_alice"),
    ("bob", "select * from pv_alice"),
    ("su", "select * from pv_alice"),
    ("su", "create view pv_su as select id from pv1"),
    ("su", "grant select on pv_su to priv_bob"),
    ("bob", "select * from pv_su order by id"),
    ("bob", "select count(*) from pv_su join pv_alice using (id)"),
    ("alice", "create view pv_nested as select * from pv_su"),
    ("alice", "select * from pv_nested"),
    ("su", "grant select on pv_su to priv_alice"),
    ("alice", "select * from pv_nested order by id"),
    ("bob", "select * from pv_nested"),
    ("alice", "grant select on pv_nested to priv_team"),
    ("su", "create role priv_team"),
    ("alice", "grant select on pv_nested to priv_team"),
    ("su", "grant priv_team to priv_bob"),
    ("bob", "select count(*) from pv_nested"),
    ("su", "select relname, relacl::text[] from pg_class where relname like 'pv%' order by 1"),
    ("su", "select viewname, viewowner from pg_views where viewname like 'pv%' order by 1"),
    ("su", "select has_table_privilege('priv_bob', 'pv_alice', 'select')"),
    ("bob", "drop view pv_alice"),
    ("bob", "create or replace view pv_alice as select 1 as id"),
    ("alice", "create or replace view pv_alice as select id from pv1 where id > 0"),
    ("su", "select relname, relacl::text[] from pg_class where relname = 'pv_alice'"),
    ("alice", "drop view pv_nested"),
    ("alice", "drop view pv_alice"),
    ("su", "drop view pv_su"),
    ("su", "drop role priv_team"),
    ("su", "revoke create on schema public from priv_alice"),
]


def test_views_are_read_as_their_owner_as_in_postgresql(nyala_server, postgres_server):
    for server in (nyala_server, postgres_server):
        with _connect(server) as su:
            for view in ("pv_nested", "pv_alice", "pv_su"):
                su.execute(f"drop view if exists {view}")
            su.execute("drop role if exists priv_team")
    nyala = both(lambda server: _scenario(server, VIEWS, ("pv1",)), nyala_server, postgres_server)
    outcome = {(who, sql): out for who, sql, out in nyala}
    assert outcome[("bob", "select * from pv_alice order by id")] == [(1,), (2,)]
    assert outcome[("su", "select * from pv_alice")] == "42501"


SEQUENCES = [
    ("su", "create table ps1 (id serial primary key, v int)"),
    ("su", "grant select, insert on ps1 to priv_alice"),
    ("alice", "insert into ps1 (v) values (1)"),
    ("alice", "insert into ps1 values (100, 1)"),
    ("alice", "select nextval('ps1_id_seq')"),
    ("alice", "select currval('ps1_id_seq')"),
    ("su", "grant usage on sequence ps1_id_seq to priv_alice"),
    ("alice", "insert into ps1 (v) values (2) returning id"),
    ("alice", "select currval('ps1_id_seq')"),
    ("alice", "select setval('ps1_id_seq', 50)"),
    ("su", "grant update on sequence ps1_id_seq to priv_bob"),
    ("bob", "select setval('ps1_id_seq', 50)"),
    ("bob", "select nextval('ps1_id_seq')"),
    ("bob", "select currval('ps1_id_seq')"),
    ("su", "grant select on sequence public.ps1_id_seq to priv_bob with grant option"),
    ("bob", "select currval('ps1_id_seq')"),
    ("bob", "grant select on sequence ps1_id_seq to priv_carol"),
    ("su", "select relname, relacl::text[] from pg_class where relname = 'ps1_id_seq'"),
    ("su", "grant insert on sequence ps1_id_seq to priv_bob"),
    ("su", "grant usage on sequence ps_nosuch to priv_bob"),
    ("su", "grant all on all sequences in schema public to priv_carol"),
    ("carol", "select nextval('ps1_id_seq')"),
    ("su", "revoke all on all sequences in schema public from priv_carol"),
    ("carol", "select nextval('ps1_id_seq')"),
    ("su", "revoke usage on sequence ps1_id_seq from priv_alice"),
    ("alice", "insert into ps1 (v) values (3)"),
    ("su", "grant pg_write_all_data to priv_alice"),
    ("alice", "insert into ps1 (v) values (4) returning id"),
    ("su", "revoke pg_write_all_data from priv_alice"),
    ("su", "create table ps2 (id int generated always as identity, v int)"),
    ("su", "grant insert on ps2 to priv_alice"),
    ("alice", "insert into ps2 (v) values (1)"),
    ("su", "revoke all on sequence ps1_id_seq from priv_bob cascade"),
]


def test_sequence_privileges_match_postgresql(nyala_server, postgres_server):
    tables = ("ps1", "ps2")
    nyala = both(lambda server: _scenario(server, SEQUENCES, tables), nyala_server, postgres_server)
    outcome = {(who, sql): out for who, sql, out in nyala}
    assert outcome[("alice", "insert into ps1 (v) values (1)")] == "42501"
    assert outcome[("alice", "insert into ps1 (v) values (2) returning id")] == [(1,)]


def _connect_outcome(server, user: str) -> str:
    """The SQLSTATE of the FATAL error a start-up as ``user`` gets, or "ok" (libpq hides
    it, so the start-up is spoken directly)."""
    client = RawClient(server.host, server.port)
    try:
        client.send(m.StartupMessage(parameters={"user": user, "database": "nyala"}))
        messages = []
        while (message := client.receive()) is not None:
            messages.append(message)
            if isinstance(message, m.ReadyForQuery):
                return "ok"
        return ",".join(code or "?" for code in errors(messages))
    finally:
        client.close()


def _connect_scenario(server) -> list[object]:
    out: list[object] = []
    with _connect(server) as su:
        for role in ("priv_conn_app", "priv_conn_group"):
            su.execute(f"drop role if exists {role}")
        su.execute("create role priv_conn_app login")
        su.execute("create role priv_conn_group")
        try:
            out.append(_connect_outcome(server, "priv_conn_app"))
            su.execute("revoke connect on database nyala from public")
            out.append(su.execute("select datacl::text[] from pg_database"
                                  " where datname = 'nyala'").fetchone())  # fmt: skip
            out.append(_connect_outcome(server, "priv_conn_app"))
            su.execute("grant connect on database nyala to priv_conn_group")
            su.execute("grant priv_conn_group to priv_conn_app")
            out.append(_connect_outcome(server, "priv_conn_app"))
            su.execute("revoke priv_conn_group from priv_conn_app")
            out.append(_connect_outcome(server, "priv_conn_app"))
            out.append(_connect_outcome(server, su.info.user))
            for sql in (
                "grant select on database nyala to priv_conn_app",
                "grant connect on database nyala_nosuch to priv_conn_app",
                "grant connect, temporary on database nyala to priv_conn_app",
            ):
                try:
                    out.append(su.execute(sql).statusmessage)
                except psycopg.Error as exc:
                    out.append(exc.sqlstate)
            out.append(_connect_outcome(server, "priv_conn_app"))
        finally:
            su.execute("grant connect on database nyala to public")
            su.execute("revoke all on database nyala from priv_conn_app, priv_conn_group")
            for role in ("priv_conn_app", "priv_conn_group"):
                su.execute(f"drop role {role}")
    return out


def test_connect_on_the_database_matches_postgresql(nyala_server, postgres_server):
    nyala = both(_connect_scenario, nyala_server, postgres_server)
    assert nyala[2] == "42501" and nyala[3] == "ok"


OWNED_ACL = (
    "select relname, relacl::text[] from pg_class"
    " where relname in ('po1', 'po2', 'po_v', 'po1_id_seq') order by 1"
)
OWNED = [
    ("su", "grant create on schema public to priv_alice"),
    ("alice", "create table po1 (id serial primary key)"),
    ("alice", "create view po_v as select id from po1"),
    ("alice", "grant select on po1 to priv_bob with grant option"),
    ("alice", "grant usage on sequence po1_id_seq to priv_bob"),
    ("bob", "grant select on po1 to priv_carol"),
    ("su", "create table po2 (id int primary key)"),
    ("su", "grant select, insert on po2 to priv_bob with grant option"),
    ("bob", "grant select on po2 to priv_carol"),
    ("carol", "reassign owned by priv_alice to priv_carol"),
    ("alice", "reassign owned by priv_alice to priv_carol"),
    ("su", "drop role priv_alice"),
    ("su", "reassign owned by priv_alice to priv_carol"),
    ("su", OWNED_ACL),
    ("su", "select viewname, viewowner from pg_views where viewname = 'po_v'"),
    ("carol", "insert into po1 values (default) returning id"),
    ("carol", "drop table po1"),
    ("su", "drop owned by priv_bob"),
    ("su", OWNED_ACL),
    ("carol", "select count(*) from po2"),
    ("su", "drop owned by priv_carol"),
    ("su", "select count(*) from pg_class where relname in ('po1', 'po_v', 'po1_id_seq')"),
    ("su", "drop owned by priv_nosuch"),
    ("su", "reassign owned by priv_bob to priv_nosuch"),
    ("su", "revoke create on schema public from priv_alice"),
    ("su", "drop role priv_alice"),
    ("su", "create role priv_alice login"),
]


def test_reassign_and_drop_owned_match_postgresql(nyala_server, postgres_server):
    tables = ("po2", "po1")
    nyala = both(lambda server: _scenario(server, OWNED, tables), nyala_server, postgres_server)
    outcome = {(who, sql): out for who, sql, out in nyala}
    assert outcome[("su", "drop owned by priv_carol")] == "DROP OWNED"


def test_nyala_paths_check_privileges_too(nyala_server):
    """Arrow COPY (the Spark data source's path), time travel, the session-wide read
    timestamp and catalog queries that join a user table are checked like any read."""
    with _connect(nyala_server) as su:
        su.execute("drop role if exists priv_paths_reader")
        su.execute("create role priv_paths_reader login")
        su.execute("create table priv_np (id int primary key, v int)")
        su.execute("insert into priv_np values (1, 1)")
        (instant,) = su.execute("select now()::text").fetchone()
        try:
            with _connect(nyala_server, "priv_paths_reader") as reader:
                statements = [
                    f"select * from priv_np for system_time as of '{instant}'",
                    "select c.relname, t.v from pg_class c join priv_np t on t.id = 1"
                    " where c.relname = 'priv_np'",
                ]
                outcomes: list[object] = []
                for sql in statements:
                    outcomes.append(outcome(reader, sql))
                for sql in ("copy priv_np to stdout (format arrow)",
                            "copy priv_np from stdin (format arrow)"):  # fmt: skip
                    try:
                        with reader.cursor() as cur, cur.copy(sql) as copy:
                            if "to stdout" in sql:
                                b"".join(bytes(block) for block in copy)
                        outcomes.append("ok")
                    except psycopg.Error as exc:
                        outcomes.append(exc.sqlstate)
                reader.execute("set nyala.read_timestamp = '2020-01-01 00:00:00+00'")
                outcomes.append(outcome(reader, "select count(*) from priv_np"))
                reader.execute("reset nyala.read_timestamp")
                assert outcomes == ["42501"] * 5
                su.execute("grant select, insert on priv_np to priv_paths_reader")
                assert outcome(reader, statements[1]) == [("priv_np", 1)]
                assert outcome(reader, statements[0]) == [(1, 1)]
        finally:
            su.execute("drop table priv_np")
            su.execute("drop role priv_paths_reader")


DEFAULT_ACLS = (
    "select r.rolname, d.defaclnamespace <> 0, d.defaclobjtype, d.defaclacl::text[]"
    " from pg_default_acl d join pg_roles r on r.oid = d.defaclrole"
    " where r.rolname like 'priv%' order by 1, 2, 3"
)
PD_ACL = (
    "select relname, relacl::text[] from pg_class"
    " where relname in ('pd1', 'pd1_id_seq', 'pd2', 'pd3') order by 1"
)
DEFAULTS = [
    ("su", "grant create on schema public to priv_alice"),
    ("alice", "alter default privileges grant select on tables to priv_bob"),
    ("alice", "alter default privileges in schema public grant insert on tables to priv_carol"),
    ("alice", "alter default privileges grant usage on sequences to priv_bob"),
    ("bob", "alter default privileges for role priv_alice grant select on tables to priv_bob"),
    ("su", "alter default privileges for role priv_alice revoke all on tables from priv_nosuch"),
    ("su", "alter default privileges in schema nosuch grant select on tables to priv_bob"),
    ("su", DEFAULT_ACLS),
    ("alice", "create table pd1 (id serial primary key)"),
    ("su", PD_ACL),
    ("bob", "select * from pd1"),
    ("carol", "insert into pd1 (id) values (1)"),
    ("bob", "select nextval('pd1_id_seq')"),
    ("su", "drop role priv_alice"),
    ("alice", "alter default privileges revoke select on tables from priv_bob"),
    ("alice", "alter default privileges revoke usage on sequences from priv_bob"),
    ("alice", "alter default privileges in schema public revoke insert on tables from priv_carol"),
    ("su", DEFAULT_ACLS),
    ("alice", "create table pd2 (id int)"),
    ("su", "alter default privileges for role priv_alice revoke all on tables from priv_alice"),
    ("alice", "create table pd3 (id int)"),
    ("su", PD_ACL),
    ("alice", "select * from pd3"),
    ("alice", "alter default privileges grant all on tables to priv_alice"),
    ("su", DEFAULT_ACLS),
    ("su", "revoke create on schema public from priv_alice"),
]


def test_alter_default_privileges_matches_postgresql(nyala_server, postgres_server):
    tables = ("pd1", "pd2", "pd3")
    nyala = both(lambda server: _scenario(server, DEFAULTS, tables), nyala_server, postgres_server)
    outcome = {(who, sql): out for who, sql, out in nyala}
    assert outcome[("bob", "select * from pd1")] == []
