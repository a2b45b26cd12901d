"""Date and timestamp text PostgreSQL 15 calls out of range (22008) against text it cannot
read (22007), as a constant and as a text parameter, on nyala as on PostgreSQL."""

from __future__ import annotations

import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e

TEXTS = [
    "41",
    "12",
    "0",
    "garbage",
    "2024-13-01",
    "2024-02-30",
    "2024-01-32",
    " 2024-01-01 ",
    "0000-01-01",
    "13/13/2024",
    "20240101",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn) as pair:
        yield pair


@pytest.mark.parametrize("type_name", ["date", "timestamp"])
@pytest.mark.parametrize("text", TEXTS)
def test_constant_as_on_postgresql(pair, text, type_name):
    pair.check(f"select '{text}'::{type_name}::text")


@pytest.mark.parametrize("type_name", ["date", "timestamp"])
@pytest.mark.parametrize("text", TEXTS)
def test_text_parameter_as_on_postgresql(pair, text, type_name):
    pair.check(f"select %s::{type_name}::text", (text,))
