"""Column privileges (``GRANT SELECT (a, b) ON t``), compared with PostgreSQL 15 as several roles.

Each scenario runs the same statements against nyala and PostgreSQL and
compares rows, SQLSTATEs and warnings: the GRANTs and REVOKEs themselves,
the ACLs in pg_attribute.attacl, information_schema.column_privileges, the
has_column_privilege/has_any_column_privilege functions, and what each kind
of statement may then do (SELECT, INSERT, UPDATE, DELETE, RETURNING, ON
CONFLICT, COPY, views).
"""

from __future__ import annotations

import psycopg
import pytest

from tests.e2e.test_privileges import Roles, _connect, _pipelined_insert

pytestmark = pytest.mark.e2e

ATTACL = (
    "select attname, attacl::text[] from pg_attribute"
    " where attrelid = 'pc'::regclass and attnum > 0 and not attisdropped order by attnum"
)

GRANTS = [
    ("su", "create table pc (id int primary key, a int, b int, c text)"),
    ("su", "insert into pc values (1, 10, 100, 'x'), (2, 20, 200, 'y')"),
    ("su", "grant select (id, a), insert (id, a), update (b) on pc to priv_bob"),
    ("su", "select relacl from pg_class where relname = 'pc'"),
    ("su", ATTACL),
    ("su", "grant delete (a) on pc to priv_bob"),
    ("su", "grant select (nosuch) on pc to priv_bob"),
    ("su", "grant select (a) on schema public to priv_bob"),
    ("su", "grant all (c) on pc to priv_carol"),
    ("su", "grant all privileges (a) on pc to priv_alice"),
    ("su", ATTACL),
    ("su", "revoke select (a) on pc from priv_bob"),
    ("su", "revoke insert on pc from priv_bob"),
    ("su", "revoke all (a) on pc from priv_alice"),
    ("su", ATTACL),
    ("su", "grant select (a) on pc to priv_bob with grant option"),
    ("bob", "grant select (a) on pc to priv_carol"),
    ("bob", "grant select (b) on pc to priv_carol"),
    ("bob", "grant select on pc to priv_carol"),
    ("carol", "grant select (a) on pc to priv_alice"),
    ("su", ATTACL),
    ("su", "revoke grant option for select (a) on pc from priv_bob"),
    ("su", "revoke select on pc from priv_bob"),
    ("su", "revoke select on pc from priv_bob cascade"),
    ("su", ATTACL),
    ("su", "alter table pc owner to priv_alice"),
    ("su", ATTACL),
    ("alice", "grant select (id) on pc to public"),
    ("su", "alter table pc drop column c"),
    ("su", "alter table pc add column c text"),
    ("su", ATTACL),
]


def _scenario(server, steps: list[tuple[str, str]], tables: tuple[str, ...]) -> list[object]:
    roles = Roles(server)
    try:
        return [(who, sql, roles.run(who, sql)) for who, sql in steps]
    finally:
        roles.su.execute("drop view if exists pcv")
        roles.close(tables)


def test_column_grants_and_revokes_match_postgresql(nyala_server, postgres_server):
    nyala = _scenario(nyala_server, GRANTS, ("pc",))
    postgres = _scenario(postgres_server, GRANTS, ("pc",))
    assert nyala == postgres
    assert ("su", "revoke select on pc from priv_bob", "2BP01") in nyala


CHECKS = [
    ("su", "create table pc (id int primary key, a int, b int, c text)"),
    ("su", "insert into pc values (1, 10, 100, 'x'), (2, 20, 200, 'y')"),
    ("su", "create view pcv as select id, a, c from pc"),
    ("su", "grant select (id, a), insert (id, a), update (b) on pc to priv_bob"),
    ("su", "grant select (a) on pcv to priv_carol"),
    ("bob", "select * from pc"),
    ("bob", "select id, a from pc order by id"),
    ("bob", "select id from pc where b = 1"),
    ("bob", "select id from pc order by c"),
    ("bob", "select count(*) from pc"),
    ("bob", "select 1 from pc"),
    ("carol", "select count(*) from pc"),
    ("bob", "select x.a from pc x join pc y on x.id = y.id order by 1"),
    ("bob", "select x.a from pc x join pc y on x.b = y.id"),
    ("bob", "select (select max(c) from pc) from pc"),
    ("bob", "insert into pc (id, a) values (3, 30)"),
    ("bob", "insert into pc values (4, 40)"),
    ("bob", "insert into pc values (5, 50, 500)"),
    ("bob", "insert into pc (id, a) values (6, default)"),
    ("bob", "insert into pc (id, a) values (7, 70) returning id"),
    ("bob", "insert into pc (id, a) values (8, 80) returning b"),
    ("bob", "insert into pc (id, a) values (1, 1) on conflict (id) do nothing"),
    ("bob", "insert into pc (id, a) values (1, 1) on conflict do nothing"),
    ("bob", "insert into pc (id, a) values (1, 1) on conflict (id) do update set b = 5"),
    ("bob", "insert into pc (id, a) values (1, 1) on conflict (id) do update set b = excluded.a"),
    ("bob", "insert into pc (id, a) values (1, 1) on conflict (id) do update set b = excluded.b"),
    ("bob", "insert into pc (id, a) values (1, 1) on conflict (id) do update set a = 5"),
    ("bob", "insert into pc (id) select id + 100 from pc"),
    ("bob", "insert into pc (id) select id + 200 from pc where b > 0"),
    ("bob", "update pc set b = 1"),
    ("bob", "update pc set b = a where id = 1"),
    ("bob", "update pc set b = b + 1"),
    ("bob", "update pc set a = 1"),
    ("bob", "update pc set b = 2 where id = 2 returning id"),
    ("bob", "update pc set b = 2 returning c"),
    ("bob", "update pc set b = (select max(x.c)::int from pc x)"),
    ("bob", "delete from pc"),
    ("bob", "delete from pc where id = 1"),
    ("carol", "select a from pcv order by a"),
    ("carol", "select count(*) from pcv"),
    ("carol", "select * from pcv"),
    ("carol", "select a from pcv where c = 'x'"),
    ("su", "select id, a, b from pc order by id"),
    ("su", "revoke update (b) on pc from priv_bob"),
    ("bob", "update pc set b = 1"),
    ("su", "grant update on pc to priv_bob"),
    ("bob", "update pc set b = 3 where id = 1"),
    ("bob", "update pc set b = 3 where c = 'x'"),
    ("su", "grant select (c) on pc to public"),
    ("bob", "update pc set b = 4 where c = 'x'"),
    ("carol", "select c from pc order by c"),
    ("carol", "select c from pc for share"),
    ("bob", "select id from pc where id = 1 for update"),
    ("bob", "select id from pc where id = 1 for key share"),
    ("su", "revoke update on pc from priv_bob"),
    ("bob", "select id from pc where id = 1 for no key update"),
    ("su", "select id, a, b from pc order by id"),
]


def test_each_statement_checks_the_columns_it_uses_as_postgresql_does(
    nyala_server, postgres_server
):
    nyala = _scenario(nyala_server, CHECKS, ("pc",))
    postgres = _scenario(postgres_server, CHECKS, ("pc",))
    assert nyala == postgres
    assert ("bob", "select * from pc", "42501") in nyala
    assert ("bob", "select count(*) from pc", [(2,)]) in nyala


def _copy(conn: psycopg.Connection, sql: str) -> object:
    try:
        with conn.cursor() as cur, cur.copy(sql) as copy:
            if "from stdin" in sql:
                copy.write_row((9, 90))
                return "copied"
            return sorted(bytes(row) for row in copy)
    except psycopg.Error as exc:
        return exc.sqlstate


def _copies(server) -> list[object]:
    roles = Roles(server)
    try:
        su, bob = roles.su, roles.conns["bob"]
        su.execute("create table pcc (id int primary key, a int, b int)")
        su.execute("insert into pcc values (1, 10, 100)")
        su.execute("grant select (id, a), insert (id, a) on pcc to priv_bob")
        return [
            _copy(bob, sql)
            for sql in (
                "copy pcc (id, a) to stdout",
                "copy pcc to stdout",
                "copy pcc (id, b) to stdout",
                "copy (select id, a from pcc) to stdout",
                "copy (select b from pcc) to stdout",
                "copy pcc (id, a) from stdin",
                "copy pcc (id, b) from stdin",
                "copy pcc from stdin",
            )
        ]
    finally:
        roles.close(("pcc",))


def test_copy_checks_its_columns_as_postgresql_does(nyala_server, postgres_server):
    nyala = _copies(nyala_server)
    assert nyala == _copies(postgres_server)
    assert nyala[1] == "42501" and nyala[5] == "copied"


FUNCTIONS = [
    ("su", "create table pc (id int primary key, a int, b int, c text)"),
    ("su", "create view pcv as select id, a from pc"),
    ("su", "grant select (id, a), insert (id, a), update (b) on pc to priv_bob"),
    ("su", "grant references (a) on pcv to priv_carol"),
    ("su", "grant select on pc to priv_alice"),
    (
        "bob",
        "select has_column_privilege('pc', 'a', 'select'),"
        " has_column_privilege('pc', 'b', 'select'), has_column_privilege('pc', 'b', 'update')",
    ),
    (
        "su",
        "select has_column_privilege('priv_bob', 'pc', 'a', 'select'),"
        " has_column_privilege('priv_bob', 'pc', 'c', 'select, update'),"
        " has_column_privilege('priv_bob', 'pc', 'b', 'update with grant option'),"
        " has_column_privilege('priv_alice', 'pc', 'c', 'select'),"
        " has_column_privilege('priv_alice', 'pc', 'c', 'insert')",
    ),
    (
        "su",
        "select has_column_privilege('priv_bob', 'pc'::regclass, 2::int2, 'select'),"
        " has_column_privilege('priv_bob', 'pc'::regclass, 99::int2, 'select'),"
        " has_column_privilege((select oid from pg_roles where rolname = 'priv_bob'),"
        " 'pc', 'id', 'insert'), has_column_privilege('pc', 'c', 'select')",
    ),
    (
        "su",
        "select has_any_column_privilege('priv_bob', 'pc', 'update'),"
        " has_any_column_privilege('priv_bob', 'pc'::regclass, 'references'),"
        " has_any_column_privilege('priv_carol', 'pcv', 'references'),"
        " has_any_column_privilege('priv_alice', 'pc', 'select')",
    ),
    ("carol", "select has_any_column_privilege('pc', 'select')"),
    ("su", "select has_column_privilege('priv_bob', 'pc', 'nosuch', 'select')"),
    ("su", "select has_column_privilege('priv_bob', 'pc_nosuch', 'a', 'select')"),
    ("su", "select has_column_privilege('priv_bob', 'pc', 'a', 'delete')"),
    ("su", "select has_column_privilege('priv_nosuch', 'pc', 'a', 'select')"),
    (
        "su",
        "select table_name, column_name, grantor, grantee, privilege_type, is_grantable"
        " from information_schema.column_privileges where table_name in ('pc', 'pcv')"
        " order by 1, 2, 3, 4, 5, 6",
    ),
    (
        "carol",
        "select table_name, column_name, grantee, privilege_type, is_grantable"
        " from information_schema.column_privileges where table_name in ('pc', 'pcv')"
        " order by 1, 2, 3, 4, 5",
    ),
    (
        "bob",
        "select table_name, column_name, grantee, privilege_type"
        " from information_schema.role_column_grants where table_name in ('pc', 'pcv')"
        " order by 1, 2, 3, 4",
    ),
]


def test_column_privilege_functions_and_views_match_postgresql(nyala_server, postgres_server):
    nyala = _scenario(nyala_server, FUNCTIONS, ("pc",))
    postgres = _scenario(postgres_server, FUNCTIONS, ("pc",))
    assert nyala == postgres
    assert nyala[5][2] == [(True, False, True)]


def test_column_privileges_survive_a_restart(fresh_nyala_server):
    with _connect(fresh_nyala_server) as su:
        su.execute("create role priv_dora login")
        su.execute("create table kept_cols (id int primary key, secret text, open text)")
        su.execute("insert into kept_cols values (1, 's', 'o')")
        su.execute("grant select (id, open), update (open) on kept_cols to priv_dora")
    fresh_nyala_server.restart()
    with _connect(fresh_nyala_server) as su:
        assert su.execute(
            "select attname, attacl::text[] from pg_attribute where attrelid = 'kept_cols'::regclass"
            " and attacl is not null order by attnum"
        ).fetchall() == [("id", ["priv_dora=r/nyala"]), ("open", ["priv_dora=rw/nyala"])]
    with _connect(fresh_nyala_server, "priv_dora") as dora:
        assert dora.execute("select id, open from kept_cols").fetchall() == [(1, "o")]
        dora.execute("update kept_cols set open = 'p' where id = 1")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            dora.execute("select secret from kept_cols")


@pytest.mark.usefixtures("psql")
def test_psql_dp_shows_column_privileges_as_postgresql_does(nyala_server, postgres_server):
    setup = [
        "create role priv_viewer login",
        "create table priv_cols (id int primary key, v int, w text)",
        "grant select (id, v), update (w) on priv_cols to priv_viewer",
        "grant references (v) on priv_cols to public",
    ]
    outputs = []
    for server in (nyala_server, postgres_server):
        server.psql([a for s in setup for a in ("-c", s)], check=True)
        try:
            shown = server.psql(["-c", r"\dp priv_cols", "-c", r"\z priv_cols"], check=True)
            outputs.append(shown.stdout)
        finally:
            server.psql(["-c", "drop table priv_cols", "-c", "drop role priv_viewer"], check=True)
    assert outputs[0] == outputs[1]
    assert "priv_viewer=w/nyala" in outputs[0]


COLUMN_ATTACL = (
    "select attrelid::regclass::text, attname, attacl::text[] from pg_attribute"
    " where attrelid in ('po'::regclass, 'pa'::regclass) and attacl is not null order by 1, 2"
)
OWNED = [
    ("su", "create table po (id int primary key, a int)"),
    ("su", "grant create on schema public to priv_alice"),
    ("alice", "create table pa (id int primary key, a int)"),
    ("alice", "grant select (a) on pa to priv_bob with grant option"),
    ("bob", "grant select (a) on pa to priv_carol"),
    ("su", "grant select (a), update (id) on po to priv_bob"),
    ("su", "drop role priv_bob"),
    ("su", COLUMN_ATTACL),
    ("su", "reassign owned by priv_alice to nyala"),
    ("su", COLUMN_ATTACL),
    ("su", "drop owned by priv_bob"),
    ("su", COLUMN_ATTACL),
    ("su", "drop role priv_bob"),
    ("su", "create role priv_bob login"),
    ("su", "revoke create on schema public from priv_alice"),
]


def test_drop_and_reassign_owned_reach_column_grants(nyala_server, postgres_server):
    nyala = _scenario(nyala_server, OWNED, ("pa", "po"))
    assert nyala == _scenario(postgres_server, OWNED, ("pa", "po"))
    assert nyala[6][2] == "2BP01" and nyala[12][2] == "DROP ROLE"


def test_pipelined_inserts_check_their_columns(nyala_server, postgres_server):
    """The batched path for a run of Bind/Execute of one INSERT checks columns as one
    statement does."""

    def scenario(server) -> list[object]:
        roles = Roles(server)
        try:
            su = roles.su
            su.execute("create table priv_paths (id int primary key, v int, w int)")
            su.execute("grant insert (id, v) on priv_paths to priv_bob")
            out: list[object] = [_pipelined_insert(server, range(10))]
            su.execute("revoke insert (v) on priv_paths from priv_bob")
            out.append(_pipelined_insert(server, range(10, 20)))
            out.append(su.execute("select count(*) from priv_paths").fetchone())
            return out
        finally:
            roles.close(("priv_paths",))

    nyala = scenario(nyala_server)
    assert nyala == scenario(postgres_server)
    assert nyala == [[None], ["42501"], (10,)]


def test_upsert_needs_insert_and_update_on_its_columns(nyala_server):
    """nyala's UPSERT (no PostgreSQL counterpart) inserts its columns and updates the
    non-key ones: it needs INSERT on the first and UPDATE on the second."""
    roles = Roles(nyala_server)
    try:
        su, bob = roles.su, roles.conns["bob"]
        su.execute("create table pu (id int primary key, a int, b int)")
        su.execute("grant insert (id, a), update (a) on pu to priv_bob")
        bob.execute("upsert into pu (id, a) values (1, 2)")
        bob.execute("upsert into pu (id, a) values (1, 3)")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute("upsert into pu (id, b) values (1, 3)")
        su.execute("revoke update (a) on pu from priv_bob")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute("upsert into pu (id, a) values (1, 4)")
        assert su.execute("select * from pu").fetchall() == [(1, 3, None)]
    finally:
        roles.close(("pu",))
