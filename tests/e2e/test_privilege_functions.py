"""The has_*_privilege functions beyond tables and columns, compared with PostgreSQL 15; and the
privileges time travel and nyala's system views ask for.

Sequences have ACLs of their own (a SERIAL's sequence belongs to its table's
owner); functions, types and languages are PUBLIC's to use; tablespaces and
parameters give non-superusers nothing; no foreign-data wrapper or server
exists.  Each function is called in its forms (role or not, by name or OID)
and with the names PostgreSQL refuses.
"""

from __future__ import annotations

import psycopg
import pytest

from tests.e2e.test_privileges import Roles, _connect

pytestmark = pytest.mark.e2e

SEQ = "ps_id_seq"
STEPS = [
    ("su", "create table ps (id serial primary key, v int)"),
    ("su", "create table pi (id int generated always as identity primary key, v int)"),
    ("su", f"grant usage on sequence {SEQ} to priv_bob"),
    ("su", f"grant select on sequence {SEQ} to priv_carol with grant option"),
    ("su", "grant insert on ps, pi to priv_bob, priv_carol"),
    (
        "su",
        f"select has_sequence_privilege('priv_bob', '{SEQ}', 'usage'),"
        f" has_sequence_privilege('priv_bob', '{SEQ}', 'select'),"
        f" has_sequence_privilege('priv_carol', '{SEQ}', 'select with grant option'),"
        f" has_sequence_privilege('priv_carol', '{SEQ}', 'update, usage')",
    ),
    (
        "su",
        f"select has_sequence_privilege('priv_bob', '{SEQ}'::regclass, 'usage'),"
        " has_sequence_privilege((select oid from pg_roles where rolname = 'priv_bob'),"
        f" '{SEQ}', 'usage'), has_sequence_privilege('{SEQ}', 'update')",
    ),
    (
        "bob",
        f"select has_sequence_privilege('{SEQ}', 'usage'),"
        f" has_sequence_privilege('public.{SEQ}', 'update')",
    ),
    ("su", "select has_sequence_privilege('priv_bob', 'ps', 'usage')"),
    ("su", "select has_sequence_privilege('priv_bob', 'nosuch', 'usage')"),
    ("su", f"select has_sequence_privilege('priv_bob', '{SEQ}', 'insert')"),
    ("su", "select has_sequence_privilege('priv_bob', 'pi_id_seq', 'usage')"),
    ("su", "select has_sequence_privilege('priv_bob', 999999::oid, 'usage')"),
    ("su", "select has_sequence_privilege('priv_bob', 1259::oid, 'usage')"),
    ("bob", "insert into ps (v) values (1)"),
    ("carol", "insert into ps (v) values (1)"),
    ("carol", "insert into pi (v) values (1)"),
    ("su", "alter table ps owner to priv_alice"),
    ("alice", f"select has_sequence_privilege('{SEQ}', 'update')"),
    ("bob", f"select has_sequence_privilege('{SEQ}', 'usage')"),
    (
        "su",
        "select has_function_privilege('priv_bob', 'abs(integer)', 'execute'),"
        " has_function_privilege('pg_catalog.abs(bigint)', 'execute'),"
        " has_function_privilege('priv_bob', 'abs(int)', 'execute with grant option')",
    ),
    ("su", "select has_function_privilege('abs(bigint, int)', 'execute')"),
    ("su", "select has_function_privilege('priv_bob', 'nosuch()', 'execute')"),
    ("su", "select has_function_privilege('abs', 'execute')"),
    ("su", "select has_function_privilege('priv_bob', 'abs(int)', 'usage')"),
    ("su", "select has_function_privilege(99999999::oid, 'execute')"),
    (
        "su",
        "select has_type_privilege('priv_bob', 'integer', 'usage'),"
        " has_type_privilege('int4', 'usage'), has_type_privilege(99999::oid, 'usage'),"
        " has_type_privilege(23, 'usage'),"
        " has_type_privilege('priv_bob', 'text[]', 'usage with grant option')",
    ),
    ("su", "select has_type_privilege('nosuch', 'usage')"),
    (
        "su",
        "select has_language_privilege('priv_bob', 'sql', 'usage'),"
        " has_language_privilege('plpgsql', 'usage'), has_language_privilege('priv_bob', 'c',"
        " 'usage'), has_language_privilege('priv_bob', 14, 'usage'),"
        " has_language_privilege(99999, 'usage')",
    ),
    ("su", "select has_language_privilege('nosuch', 'usage')"),
    (
        "su",
        "select has_tablespace_privilege('priv_bob', 'pg_default', 'create'),"
        " has_tablespace_privilege('pg_global', 'create'),"
        " has_tablespace_privilege(1663::oid, 'create'),"
        " has_tablespace_privilege(99999::oid, 'create')",
    ),
    ("su", "select has_tablespace_privilege('nosuch', 'create')"),
    (
        "su",
        "select has_schema_privilege('priv_bob', 'public', 'usage'),"
        " has_schema_privilege('pg_catalog', 'usage'),"
        " has_schema_privilege('priv_bob', 'pg_catalog', 'create'),"
        " has_schema_privilege(99999::oid, 'usage'),"
        " has_schema_privilege('priv_bob', 'information_schema', 'usage'),"
        " has_schema_privilege('priv_bob', 2200::oid, 'usage'),"
        " has_schema_privilege('priv_bob', 11::oid, 'create')",
    ),
    ("su", "select has_schema_privilege('priv_bob', 'nosuch', 'usage')"),
    (
        "su",
        "select has_database_privilege('priv_bob', 'nyala', 'connect'),"
        " has_database_privilege('nyala', 'create'),"
        " has_database_privilege('priv_bob', 'nyala', 'temp')",
    ),
    (
        "su",
        "select has_parameter_privilege('priv_bob', 'work_mem', 'set'),"
        " has_parameter_privilege('priv_bob', 'log_statement', 'alter system'),"
        " has_parameter_privilege('work_mem', 'alter system')",
    ),
    ("su", "select has_parameter_privilege('work_mem', 'usage')"),
    ("bob", "select has_parameter_privilege('work_mem', 'set')"),
    ("su", "select has_foreign_data_wrapper_privilege('priv_bob', 'nosuch', 'usage')"),
    ("su", "select has_server_privilege('priv_bob', 'nosuch', 'usage')"),
    (
        "su",
        "select has_foreign_data_wrapper_privilege(99999::oid, 'usage'),"
        " has_server_privilege(99999::oid, 'usage')",
    ),
]


def _scenario(server) -> list[object]:
    roles = Roles(server)
    try:
        return [(who, sql, roles.run(who, sql)) for who, sql in STEPS]
    finally:
        roles.close(("ps", "pi"))


def test_has_privilege_functions_match_postgresql(nyala_server, postgres_server):
    nyala = _scenario(nyala_server)
    assert nyala == _scenario(postgres_server)
    outcome = {sql: result for _, sql, result in nyala}
    assert outcome["select has_sequence_privilege('priv_bob', 'ps', 'usage')"] == "42809"
    assert outcome["insert into ps (v) values (1)"] == "42501"  # carol, without USAGE


def test_time_travel_and_system_views_check_as_plain_reads(nyala_server):
    """A read as of an earlier time needs what a read now needs (column privileges too);
    nyala's system views, like PostgreSQL's statistics views, are PUBLIC's to read."""
    roles = Roles(nyala_server)
    try:
        su, bob = roles.su, roles.conns["bob"]
        su.execute("create table tt_priv (id int primary key, a int, b int)")
        su.execute("insert into tt_priv values (1, 10, 100)")
        (instant,) = su.execute("select now()::text").fetchone()
        su.execute("update tt_priv set a = 11")
        past = f"tt_priv for system_time as of '{instant}'"
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute(f"select id from {past}")
        su.execute("grant select (id, a) on tt_priv to priv_bob")
        assert bob.execute(f"select id, a from {past}").fetchall() == [(1, 10)]
        for sql in (f"select b from {past}", f"select * from {past}"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                bob.execute(sql)
        rows = bob.execute(
            "select table_name, rows from nyala_tablets where table_name = 'tt_priv'"
        ).fetchall()
        assert rows == [("tt_priv", 1)]
        assert bob.execute("select count(*) from nyala_maintenance").fetchone() is not None
    finally:
        roles.close(("tt_priv",))


def test_sequence_grants_survive_a_restart(fresh_nyala_server):
    with _connect(fresh_nyala_server) as su:
        su.execute("create role priv_erin login")
        su.execute("create table kept_seq (id serial primary key, v int)")
        su.execute("grant insert on kept_seq to priv_erin")
        su.execute("grant usage on sequence kept_seq_id_seq to priv_erin")
    fresh_nyala_server.restart()
    with _connect(fresh_nyala_server, "priv_erin") as erin:
        assert erin.execute(
            "select has_sequence_privilege('kept_seq_id_seq', 'usage'),"
            " has_sequence_privilege('kept_seq_id_seq', 'update')"
        ).fetchone() == (True, False)
        erin.execute("insert into kept_seq (v) values (1)")
