"""pg_proc, pg_aggregate, pg_operator and pg_cast list only what nyala answers as PostgreSQL 15 does.

Every signature in sql/planner/pg_signatures.txt is called on nyala and on a
real PostgreSQL 15 with sample values and with NULLs of its argument types
(tests/support/signature_probe.py); both must give the same result type and
value, or the same SQLSTATE.  The catalogs then show exactly those rows, and
the queries sqlsmith starts with run.
"""

from __future__ import annotations

import psycopg
import pytest

from sql.planner.pg_signatures import signatures
from tests.support import signature_probe
from tests.support.servers import NyalaServer, PostgresServer

pytestmark = pytest.mark.e2e


def _kept_oids() -> dict[str, set[int]]:
    table = signatures()
    return {
        "f": {r.oid for r in table.routines if r.kind == "f"},
        "a": {r.oid for r in table.routines if r.kind == "a"},
        "o": {o.oid for o in table.operators},
        "c": {c.oid for c in table.casts},
    }


def test_every_listed_signature_answers_as_postgresql(
    nyala_server: NyalaServer, postgres_server: PostgresServer
) -> None:
    kept = _kept_oids()
    with (
        psycopg.connect(postgres_server.dsn, autocommit=True) as pg,
        psycopg.connect(nyala_server.dsn, autocommit=True) as nyala,
    ):
        probes = [p for p in signature_probe.candidates(pg) if int(str(p.row[0])) in kept[p.kind]]
        assert len(probes) == sum(len(oids) for oids in kept.values())
        wrong = [d for p in probes if (d := signature_probe.disagreement(p, pg, nyala))]
    assert wrong == []


def test_catalogs_show_the_signatures(nyala_server: NyalaServer) -> None:
    table = signatures()
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        procs = conn.execute(
            "select count(*) filter (where prokind = 'f'), count(*) filter (where prokind = 'a') "
            "from pg_catalog.pg_proc"
        ).fetchone()
        assert procs == (
            sum(r.kind == "f" for r in table.routines),
            sum(r.kind == "a" for r in table.routines),
        )
        # Each aggregate has its pg_aggregate row; each operator and cast names known types.
        assert conn.execute(
            "select count(*) from pg_aggregate a join pg_proc p on p.oid = a.aggfnoid"
        ).fetchone() == (sum(r.kind == "a" for r in table.routines),)
        assert conn.execute(
            "select count(*) from pg_operator o join pg_type l on l.oid = o.oprleft "
            "join pg_type r on r.oid = o.oprright join pg_type t on t.oid = o.oprresult"
        ).fetchone() == (len(table.operators),)
        assert conn.execute(
            "select count(*) from pg_cast c join pg_type s on s.oid = c.castsource "
            "join pg_type t on t.oid = c.casttarget"
        ).fetchone() == (len(table.casts),)
        abs_rows = conn.execute(
            "select prorettype::regtype::text, proargtypes from pg_proc where proname = 'abs'"
        ).fetchall()
        assert ("integer", "23") in abs_rows  # an oidvector reads as its text, as on PostgreSQL


SQLSMITH_START_UP = (
    "select case typnamespace when 'pg_catalog'::regnamespace then quote_ident(typname) "
    "else format('%I.%I', typnamespace::regnamespace, typname) end, oid, typdelim, typrelid, "
    "typelem, typarray, typtype from pg_type",
    "select oprname, oprleft, oprright, oprresult from pg_catalog.pg_operator "
    "where 0 not in (oprresult, oprright, oprleft)",
    "select (select nspname from pg_namespace where oid = pronamespace), oid, prorettype, "
    "proname from pg_proc where prorettype::regtype::text not in ('event_trigger', 'trigger', "
    "'opaque', 'internal') and proname <> 'pg_event_trigger_table_rewrite_reason' "
    "and proname !~ '^ri_fkey_' and not (proretset or prokind = 'a' or prokind = 'w')",
    "select unnest(proargtypes) from pg_proc where oid = '1394'",
)


def test_sqlsmith_start_up_queries_run(nyala_server: NyalaServer) -> None:
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        for query in SQLSMITH_START_UP:
            assert conn.execute(query).fetchall(), query
        names = {row[0] for row in conn.execute(SQLSMITH_START_UP[0]).fetchall()}
        assert {"bool", "int4", "internal", "anyarray"} <= names


def test_regnamespace_input_as_postgresql(
    nyala_server: NyalaServer, postgres_server: PostgresServer
) -> None:
    for server in (nyala_server, postgres_server):
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            assert conn.execute("select 'pg_catalog'::regnamespace::oid").fetchone() == (11,)
            assert conn.execute("select 'public'::regnamespace::text").fetchone() == ("public",)
            with pytest.raises(psycopg.errors.InvalidSchemaName):
                conn.execute("select 'no_such_schema'::regnamespace")
