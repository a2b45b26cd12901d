"""A typed literal followed by ``::type`` as PostgreSQL reads it: the literal is typed first,
then cast (``date '2020-01-02'::text`` is text), by the parser's precedence."""

from __future__ import annotations

import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e

EXPRESSIONS = [
    "date '2020-01-02'::text",
    "date '2020-01-02'::text || 'x'",
    "time '24:00'::text",
    "time '12:30'::text",
    "timestamp '2020-01-02 03:04'::text",
    "timestamp '2020-01-02 03:04'::date",
    "timestamptz '2020-01-02 03:04+00'::date",
    "date '2020-01-02'::timestamp",
    "date '2020-01-02'::text::date",
    "int8 '7'::text",
    "numeric '1.50'::float8",
    "bool 't'::text",
    "uuid 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::text",
    "interval '1 day'::text",
    "jsonb '{\"a\": 1}'->>'a'",
    "array[date '2020-01-02']::text[]",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn) as pair:
        yield pair


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_typed_literal_cast_as_postgres(pair, expression):
    pair.check(f"select {expression}, pg_typeof({expression})::text")


def test_typed_literal_cast_in_a_table_predicate(pair):
    pair.run(
        "drop table if exists typed_literal_t",
        "create table typed_literal_t (id int primary key, d text)",
        "insert into typed_literal_t values (1, '2020-01-02'), (2, '2020-01-03')",
    )
    pair.check("select id from typed_literal_t where d = date '2020-01-02'::text")
    pair.run("drop table typed_literal_t")
