"""Arrays a client sends and array text a query casts, on nyala as on PostgreSQL 15:
psycopg list parameters (text and binary) in ``= ANY(%s)`` and casts, and PostgreSQL's
array input syntax read exactly as array_in reads it (hypothesis over awkward texts)."""

from __future__ import annotations

import datetime as dt
import json

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def conns(nyala_server, postgres_server):
    with (
        psycopg.connect(nyala_server.dsn, autocommit=True) as nyala,
        psycopg.connect(postgres_server.dsn, autocommit=True) as postgres,
    ):
        for conn in (nyala, postgres):
            conn.execute("drop table if exists ain_t")
            conn.execute("create table ain_t (id int primary key, s text, d date)")
            conn.execute(
                "insert into ain_t values (1, 'a', '2020-01-01'), (2, 'b c', NULL), (3, NULL, '2021-06-30')"
            )
        yield nyala, postgres


def _outcome(conn: psycopg.Connection, sql: str, params: tuple, binary: bool = False) -> object:
    try:
        return conn.execute(sql, params, binary=binary).fetchall()
    except psycopg.Error as exc:
        return exc.sqlstate


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
def test_list_parameters_as_on_postgresql(conns, sql, params, binary):
    nyala, postgres = conns
    expected = _outcome(postgres, sql, params, binary)
    assert _outcome(nyala, sql, params, binary) == expected
    assert not isinstance(expected, str)


_ARRAY_CHARS = st.sampled_from(list('{}{}{},,,""\\ a1N') + ["NULL", "[1:2]=", "{{", "}}"])


@settings(max_examples=150)
@given(text=st.lists(_ARRAY_CHARS, max_size=12).map("".join))
def test_array_text_is_read_as_array_in_reads_it(conns, text):
    nyala, postgres = conns
    sql = "select array_to_json(%s::text[])::text"
    expected = _outcome(postgres, sql, (text,))
    got = _outcome(nyala, sql, (text,))
    if isinstance(expected, list) and isinstance(got, list):
        assert json.loads(got[0][0]) == json.loads(expected[0][0]), text
    else:
        assert got == expected, text
