"""Arithmetic on an ``x::oid`` is 42883 on nyala as on PostgreSQL 15 (there is no oid +
integer operator), while comparing an oid, and arithmetic on it cast back to an integer,
still work; in a user-table query and in a catalog query."""

from __future__ import annotations

import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists oid_math",
    "create table oid_math (k int primary key, b bigint)",
    "insert into oid_math values (1, 2)",
]
CASES = [
    "select 5::oid + 1",
    "select 1 + 5::oid",
    "select 5::oid - 1",
    "select (5::oid) * 2.5",
    "select k::oid + b from oid_math",
    "select 5::oid + 1 from pg_class limit 1",
    "select 5::oid = 5, 5::oid < 6",
    "select (5::oid)::int + 1",
    "select k::oid from oid_math where k::oid = 1",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", CASES)
def test_oid_arithmetic_as_postgres(pair, sql):
    pair.check(sql, messages=True)
