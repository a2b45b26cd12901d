"""Arrays a client sends and array text a query casts, on nyala as on PostgreSQL 15:
psycopg list parameters (text and binary) in ``= ANY(%s)`` and casts, and PostgreSQL's
array input syntax read exactly as array_in reads it (hypothesis over awkward texts)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.differential import Pair, outcome

pytestmark = pytest.mark.e2e


SETUP = [
    "drop table if exists ain_t",
    "create table ain_t (id int primary key, s text, d date)",
    "insert into ain_t values (1, 'a', '2020-01-01'), (2, 'b c', NULL), (3, NULL, '2021-06-30')",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair


CASES = [
    ("select id from ain_t where id = any(%s) order by id", ([1, 3],)),
    ("select id from ain_t where id <> all(%s) order by id", ([1, 3],)),
    ("select id from ain_t where s = any(%s) order by id", (["a", "b c", None],)),
    ("select id from ain_t where d = any(%s) order by id", ([dt.date(2021, 6, 30)],)),
    ("select id from ain_t where id = any(%s) order by id", ([],)),
    ("select %s::int[]", ([1, None, 3],)),
    ("select %s::text[]", (['x"y', "a,b", "", "NULL", None],)),
    ("select cardinality(%s::int[])", ([5, 6, 7],)),
]


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize(("sql", "params"), CASES)
def test_list_parameters_as_on_postgresql(pair, sql, params, binary):
    expected = pair.check(sql, params, binary=binary)
    assert not isinstance(expected, str)


_ARRAY_CHARS = st.sampled_from(list('{}{}{},,,""\\ a1N') + ["NULL", "[1:2]=", "{{", "}}"])


@settings(max_examples=150)
@given(text=st.lists(_ARRAY_CHARS, max_size=12).map("".join))
def test_array_text_is_read_as_array_in_reads_it(pair, text):
    sql = "select array_to_json(%s::text[])::text"
    expected = outcome(pair.postgres, sql, (text,))
    got = outcome(pair.nyala, sql, (text,))
    if isinstance(expected, list) and isinstance(got, list):
        assert json.loads(got[0][0]) == json.loads(expected[0][0]), text
    else:
        assert got == expected, text
