"""CHECK constraints through real clients, side by side with PostgreSQL 15: psql's \\d, COPY,
and SQLAlchemy's reflection."""

from __future__ import annotations

import psycopg
import pytest
import sqlalchemy as sa

from tests.support.psql import without_layout
from tests.support.servers import NyalaServer, PostgresServer, run_on_each

pytestmark = pytest.mark.e2e

SETUP = (
    "drop table if exists checked",
    "create table checked (id int primary key, price int check (price > 0), "
    "lo int, hi int, constraint ordered check (lo <= hi))",
)


@pytest.fixture(scope="module")
def servers(nyala_server: NyalaServer, postgres_server: PostgresServer) -> list[str]:
    run_on_each((nyala_server, postgres_server), SETUP)
    return [nyala_server.dsn, postgres_server.dsn]


def test_psql_describe_lists_check_constraints(servers, nyala_server, postgres_server):
    ours = nyala_server.psql(["-c", r"\d checked"], check=True).stdout
    theirs = postgres_server.psql(["-c", r"\d checked"], check=True).stdout
    assert without_layout(ours) == without_layout(theirs)
    assert '"ordered" CHECK (lo <= hi)' in ours


def test_copy_rows_are_checked(servers):
    for dsn in servers:
        with psycopg.connect(dsn) as conn:
            with (
                pytest.raises(psycopg.errors.CheckViolation),
                conn.cursor().copy("copy checked from stdin") as copy,
            ):
                copy.write("1\t5\t1\t2\n2\t-5\t1\t2\n")
            conn.rollback()
            with conn.cursor().copy("copy checked from stdin") as copy:
                copy.write("3\t5\t1\t2\n")
            conn.commit()
            assert conn.execute("select id from checked").fetchall() == [(3,)]
            conn.execute("delete from checked")
            conn.commit()


def test_sqlalchemy_reflects_check_constraints(servers):
    answers = []
    for dsn in servers:
        params = dict(part.split("=", 1) for part in dsn.split())
        url = sa.URL.create(
            "postgresql+psycopg", username=params["user"], host=params["host"],
            port=int(params["port"]), database=params["dbname"],
        )  # fmt: skip
        engine = sa.create_engine(url)
        try:
            checks = sa.inspect(engine).get_check_constraints("checked")
        finally:
            engine.dispose()
        answers.append(sorted((c["name"], c["sqltext"]) for c in checks))
    assert answers[0] == answers[1]
    assert ("ordered", "lo <= hi") in answers[0]
