"""SQL-level PREPARE and protocol-level Parse share one namespace of named statements, on
nyala as on PostgreSQL 15: a statement prepared one way is executed and dropped the other."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import pq

from tests.support.servers import NyalaServer, PostgresServer

pytestmark = pytest.mark.e2e


def _session(server: NyalaServer | PostgresServer) -> list[object]:
    """What one connection sees when it mixes SQL PREPARE with protocol Parse/Bind/Close."""
    seen: list[object] = []
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("prepare shared (int) as select $1 * 2 as doubled")
        pgconn = conn.pgconn
        result = pgconn.exec_prepared(b"shared", [b"21"])
        seen.append((result.status == pq.ExecStatus.TUPLES_OK, result.get_value(0, 0)))
        result = pgconn.prepare(b"shared", b"select 1")
        seen.append(result.error_field(pq.DiagnosticField.SQLSTATE))
        result = pgconn.prepare(b"parsed", b"select $1::text || '!'", [25])
        seen.append(result.status == pq.ExecStatus.COMMAND_OK)
        seen.append(conn.execute("execute parsed ('hi')").fetchone())
        seen.append(
            conn.execute(
                "select name, from_sql, parameter_types from pg_prepared_statements order by name"
            ).fetchall()
        )
        with pytest.raises(psycopg.errors.DuplicatePreparedStatement):
            conn.execute("prepare parsed as select 2")
        conn.execute("deallocate parsed")
        result = pgconn.exec_prepared(b"parsed", [b"x"])
        seen.append(result.error_field(pq.DiagnosticField.SQLSTATE))
        result = pgconn.describe_prepared(b"shared")
        seen.append((result.nparams, result.param_type(0), result.fname(0)))
        conn.execute("deallocate all")
        seen.append(conn.execute("select count(*) from pg_prepared_statements").fetchone())
        with pytest.raises(psycopg.errors.InvalidSqlStatementName):
            conn.execute("execute shared (1)")
    return seen


def test_sql_and_protocol_statements_share_one_namespace(nyala_server, postgres_server):
    ours = _session(nyala_server)
    assert ours == _session(postgres_server)
    assert ours[0] == (True, b"42") and ours[1] == b"42P05"


def test_psql_runs_prepare_and_execute(nyala_server, psql):
    out = nyala_server.psql(
        [
            "-At",
            "-c",
            "prepare pq (text, int) as select repeat($1, $2)",
            "-c",
            "execute pq ('ab', 3)",
            "-c",
            "select statement from pg_prepared_statements",
        ],
        check=True,
    ).stdout
    assert out.splitlines() == [
        "PREPARE",
        "ababab",
        "prepare pq (text, int) as select repeat($1, $2)",
    ]
