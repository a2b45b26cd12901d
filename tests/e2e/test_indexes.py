"""Secondary indexes and UNIQUE constraints through real clients, side by side with PostgreSQL
15: psql's ``\\d`` and ``\\di``, SQLAlchemy's reflection, and unique inserts racing from two
sessions (only one may commit)."""

from __future__ import annotations

import threading

import psycopg
import pytest
import sqlalchemy as sa

from tests.support.psql import without_layout
from tests.support.servers import NyalaServer, PostgresServer, run_on_each

pytestmark = pytest.mark.e2e

SETUP = (
    "drop table if exists indexed_person",
    "create table indexed_person (id int primary key, email text unique, nick text, team int, "
    "constraint indexed_person_team_nick unique nulls not distinct (team, nick))",
    "create index indexed_person_nick on indexed_person (nick) include (team) where team > 1",
    "create index on indexed_person (team, id)",
)


@pytest.fixture(scope="module")
def servers(nyala_server: NyalaServer, postgres_server: PostgresServer) -> list[str]:
    run_on_each((nyala_server, postgres_server), SETUP)
    return [nyala_server.dsn, postgres_server.dsn]


@pytest.mark.parametrize("command", [r"\d indexed_person", r"\di indexed_person*"])
def test_psql_describes_indexes_as_postgres(servers, nyala_server, postgres_server, command):
    ours = nyala_server.psql(["-c", command], check=True).stdout
    theirs = postgres_server.psql(["-c", command], check=True).stdout
    assert without_layout(ours) == without_layout(theirs)
    assert "indexed_person_email_key" in ours


def test_pg_indexes_and_constraints_match(servers):
    queries = (
        "select indexrelid::regclass::text, indisunique, indisprimary, indnatts, indnkeyatts, "
        "pg_get_indexdef(indexrelid) from pg_index "
        "where indrelid = 'indexed_person'::regclass order by 1",
        "select conname, contype, pg_get_constraintdef(oid) from pg_constraint "
        "where conrelid = 'indexed_person'::regclass order by 1",
        "select constraint_name, constraint_type from information_schema.table_constraints "
        "where table_name = 'indexed_person' and constraint_type <> 'CHECK' order by 1",
    )
    answers = []
    for dsn in servers:
        with psycopg.connect(dsn, autocommit=True) as conn:
            answers.append([conn.execute(q).fetchall() for q in queries])
    assert answers[0] == answers[1]


def test_sqlalchemy_reflects_indexes_and_unique_constraints(servers):
    answers = []
    for dsn in servers:
        params = dict(part.split("=", 1) for part in dsn.split())
        url = sa.URL.create(
            "postgresql+psycopg", username=params["user"], host=params["host"],
            port=int(params["port"]), database=params["dbname"],
        )  # fmt: skip
        engine = sa.create_engine(url)
        try:
            inspector = sa.inspect(engine)
            indexes = inspector.get_indexes("indexed_person")
            uniques = inspector.get_unique_constraints("indexed_person")
        finally:
            engine.dispose()
        answers.append(
            (
                sorted((i["name"], tuple(i["column_names"]), i["unique"]) for i in indexes),
                sorted((u["name"], tuple(u["column_names"])) for u in uniques),
            )
        )
    assert answers[0] == answers[1]
    assert ("indexed_person_email_key", ("email",)) in answers[0][1]


@pytest.mark.parametrize("server", ["nyala", "postgres"])
def test_racing_unique_inserts_commit_once(server, nyala_server, postgres_server):
    """Two sessions insert the same unique value; the second waits for the first and gets
    23505 when it commits, or goes ahead when it rolls back."""
    dsn = (nyala_server if server == "nyala" else postgres_server).dsn
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("drop table if exists raced")
        conn.execute("create table raced (id int primary key, code text unique)")
    for base, outcome in ((10, "commit"), (20, "rollback")):
        with psycopg.connect(dsn) as first, psycopg.connect(dsn) as second:
            first.execute("insert into raced values (%s, %s)", [base + 1, outcome])
            errors: list[str] = []

            def insert_second(
                second: psycopg.Connection = second,
                base: int = base,
                outcome: str = outcome,
                errors: list[str] = errors,
            ) -> None:
                try:
                    second.execute("insert into raced values (%s, %s)", [base + 2, outcome])
                    second.commit()
                except psycopg.Error as exc:
                    errors.append(exc.sqlstate or "")
                    second.rollback()

            thread = threading.Thread(target=insert_second)
            thread.start()
            thread.join(1.0)
            assert thread.is_alive(), "the second insert must wait for the first"
            getattr(first, outcome)()
            thread.join(30)
            assert not thread.is_alive()
            assert errors == (["23505"] if outcome == "commit" else [])
        with psycopg.connect(dsn, autocommit=True) as conn:
            rows = conn.execute("select id from raced where code = %s", [outcome]).fetchall()
            assert rows == [(base + 1,)] if outcome == "commit" else [(base + 2,)]
