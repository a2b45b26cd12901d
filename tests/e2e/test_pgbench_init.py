"""``pgbench -i`` runs unchanged against nyala: char(n) fillers, WITH (fillfactor), COPY ...
FREEZE, VACUUM, and primary keys added by ALTER TABLE after the load; the tables then look
to psql and hold the same rows as on PostgreSQL 15."""

from __future__ import annotations

import shutil
import subprocess

import psycopg
import pytest

from tests.support.psql import without_layout
from tests.support.servers import NyalaServer, PostgresServer

pytestmark = pytest.mark.e2e

TABLES = ("pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history")


def _init(dsn: str) -> None:
    program = shutil.which("pgbench")
    if program is None:
        pytest.skip("pgbench is not installed")
    result = subprocess.run(
        [program, "-i", "-s", "1", dsn], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr


def test_pgbench_initialises_the_same_tables(
    nyala_server: NyalaServer, postgres_server: PostgresServer
):
    for server in (nyala_server, postgres_server):
        _init(server.dsn)
    answers = []
    for server in (nyala_server, postgres_server):
        with psycopg.connect(server.dsn) as conn:
            answers.append(
                [
                    conn.execute(
                        "select count(*), count(distinct aid), sum(abalance), min(filler), "
                        "max(bid) from pgbench_accounts"
                    ).fetchall(),
                    conn.execute("select * from pgbench_branches order by bid").fetchall(),
                    conn.execute("select * from pgbench_tellers order by tid").fetchall(),
                    conn.execute("select count(*) from pgbench_history").fetchall(),
                ]
            )
    assert answers[0] == answers[1]
    assert answers[0][0][0][:2] == (100_000, 100_000)
    for table in TABLES:
        ours = nyala_server.psql(["-c", rf"\d {table}"], check=True).stdout
        theirs = postgres_server.psql(["-c", rf"\d {table}"], check=True).stdout
        assert without_layout(ours) == without_layout(theirs)
    with psycopg.connect(nyala_server.dsn) as conn, pytest.raises(psycopg.errors.UniqueViolation):
        conn.execute("insert into pgbench_accounts values (1, 1, 0, '')")


def test_copy_freeze_after_truncate_in_the_same_transaction(nyala_server, postgres_server):
    answers = []
    for server in (nyala_server, postgres_server):
        with psycopg.connect(server.dsn) as conn:
            conn.execute("drop table if exists frozen")
            conn.execute("create table frozen (id int, c char(3))")
            conn.commit()
            conn.execute("truncate frozen")
            with conn.cursor().copy("copy frozen from stdin with (freeze on)") as copy:
                copy.write("1\ta\n2\tbc\n")
            conn.commit()
            answers.append(conn.execute("select * from frozen order by id").fetchall())
    assert answers[0] == answers[1] == [(1, "a  "), (2, "bc ")]
