"""A time text nyala cannot read fails as PostgreSQL 15's does: 22008 when its fields are
well formed but out of range, 22007 when it is no time at all, from a literal, a parameter
and a column of text alike (DuckDB reports both as one "out of range")."""

from __future__ import annotations

import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e

TEXTS = ["24:00:01", "25:00", "12:60", "12:30:61", " 25:00:00 ", "25:00:00.123", "41", "abc"]
SETUP = [
    "drop table if exists time_texts",
    "create table time_texts (k int primary key, s text)",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair


@pytest.mark.parametrize("text", TEXTS)
def test_time_input_error_as_postgres(pair, text):
    literal = text.replace("'", "''")
    pair.check(f"select '{literal}'::time", messages=True)
    pair.check("select %s::time", (text,), messages=True)
    pair.check(f"select '{literal}'::timetz")
    pair.run("delete from time_texts")
    for conn in pair:
        conn.execute("insert into time_texts values (1, %s)", (text,))
    pair.check("select s::time from time_texts")
