"""char(n) through real clients, side by side with PostgreSQL 15: psql's \\d, COPY, binary
results and parameters."""

from __future__ import annotations

import re

import psycopg
import pytest

from tests.support.psql import without_layout
from tests.support.servers import NyalaServer, PostgresServer

pytestmark = pytest.mark.e2e

SETUP = (
    "drop table if exists char_codes",
    "create table char_codes (code char(4) primary key, region character(2) not null, "
    "flag char, note varchar(10))",
)


@pytest.fixture(scope="module")
def servers(nyala_server: NyalaServer, postgres_server: PostgresServer) -> list[str]:
    for server in (nyala_server, postgres_server):
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            for statement in SETUP:
                conn.execute(statement)
            with conn.cursor() as cur, cur.copy("copy char_codes from stdin") as copy:
                copy.write("A1\tEU\tY\tfirst\nB22 \tUS\t\\N\tsecond\nC\tX \tN\tthird  \n")
    return [nyala_server.dsn, postgres_server.dsn]


def test_psql_describe_shows_character_columns(servers, nyala_server, postgres_server):
    ours = nyala_server.psql(["-c", r"\d char_codes"], check=True).stdout
    theirs = postgres_server.psql(["-c", r"\d char_codes"], check=True).stdout
    assert without_layout(ours) == without_layout(theirs)
    assert re.search(r"code\s+\| character\(4\)", ours)


@pytest.mark.parametrize("binary", [False, True])
def test_copied_rows_read_back_padded_in_both_formats(servers, binary):
    answers = []
    for dsn in servers:
        with psycopg.connect(dsn) as conn, conn.cursor(binary=binary) as cur:
            cur.execute("select code, region, flag, note from char_codes order by code")
            answers.append((cur.fetchall(), [d.type_code for d in cur.description]))
    assert answers[0] == answers[1]
    assert answers[0][0][1][0] == "B22 "
    assert answers[0][1][:3] == [1042, 1042, 1042]


def test_parameters_compare_as_postgresql_does(servers):
    answers = []
    for dsn in servers:
        with psycopg.connect(dsn) as conn:
            rows = []
            for value in ("A1", "A1  ", "B22", "C"):
                cur = conn.execute(
                    "select code, region from char_codes where code = %s::char(4)", (value,)
                )
                rows.append(cur.fetchall())
            cur = conn.execute(
                "select count(*) from char_codes where region = %s", ("X",), prepare=True
            )
            rows.append(cur.fetchall())
            answers.append(rows)
    assert answers[0] == answers[1]
    assert answers[0][1] == [("A1  ", "EU")]
