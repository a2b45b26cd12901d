"""An index stays exact under any mix of writes and flushes: hypothesis drives INSERT, UPDATE
(of indexed columns and of the key), DELETE, upserts, TRUNCATE and CHECKPOINT (which flushes
to DiskRowSets, where later changes become deltas and compactions); after each step every
lookup the index serves returns what a scan (``col + 0``, which no index serves) returns, and a
shadow model of the table agrees with both."""

from __future__ import annotations

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.servers import NyalaServer

pytestmark = pytest.mark.e2e

KEYS = st.integers(0, 40)
CODES = st.one_of(st.none(), st.integers(0, 8))
NAMES = st.one_of(st.none(), st.sampled_from(["a", "b", "a\x01", "ab", ""]))

STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), KEYS, CODES, NAMES),
        st.tuples(st.just("update"), KEYS, CODES, NAMES),
        st.tuples(st.just("rekey"), KEYS, KEYS),
        st.tuples(st.just("delete"), KEYS),
        st.tuples(st.just("upsert"), KEYS, CODES, NAMES),
        st.tuples(st.just("checkpoint")),
        st.tuples(st.just("truncate")),
    ),
    min_size=1,
    max_size=20,
)


@pytest.fixture(scope="module")
def conn(nyala_server: NyalaServer):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as connection:
        yield connection


def _apply(conn: psycopg.Connection, model: dict[int, tuple], step: tuple) -> None:
    kind = step[0]
    if kind == "insert":
        _, key, code, name = step
        if key not in model:
            conn.execute("insert into exact values (%s, %s, %s)", [key, code, name])
            model[key] = (code, name)
    elif kind == "update":
        _, key, code, name = step
        conn.execute("update exact set code = %s, name = %s where id = %s", [code, name, key])
        if key in model:
            model[key] = (code, name)
    elif kind == "rekey":
        _, old, new = step
        if old in model and new not in model:
            conn.execute("update exact set id = %s where id = %s", [new, old])
            model[new] = model.pop(old)
    elif kind == "delete":
        conn.execute("delete from exact where id = %s", [step[1]])
        model.pop(step[1], None)
    elif kind == "upsert":
        _, key, code, name = step
        conn.execute(
            "insert into exact values (%s, %s, %s) on conflict (id) do update "
            "set code = excluded.code, name = excluded.name",
            [key, code, name],
        )
        model[key] = (code, name)
    elif kind == "checkpoint":
        conn.execute("checkpoint")
    else:
        conn.execute("truncate exact")
        model.clear()


def _check(conn: psycopg.Connection, model: dict[int, tuple]) -> None:
    for code in range(9):
        expected = sorted(k for k, (c, _) in model.items() if c == code)
        by_index = [r[0] for r in conn.execute(
            "select id from exact where code = %s order by id", [code]).fetchall()]  # fmt: skip
        by_scan = [r[0] for r in conn.execute(
            "select id from exact where code + 0 = %s order by id", [code]).fetchall()]  # fmt: skip
        assert by_index == by_scan == expected, code
    for name in ["a", "b", "a\x01", "ab", ""]:
        expected = sorted(k for k, (_, n) in model.items() if n == name)
        got = [r[0] for r in conn.execute(
            "select id from exact where name = %s order by id", [name]).fetchall()]  # fmt: skip
        assert got == expected, name
    ranged = sorted(k for k, (c, _) in model.items() if c is not None and 2 <= c < 6)
    got = [r[0] for r in conn.execute(
        "select id from exact where code >= 2 and code < 6 order by id").fetchall()]  # fmt: skip
    assert got == ranged


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS)
def test_index_lookups_match_scans_after_any_writes(conn, steps):
    conn.execute("drop table if exists exact")
    conn.execute("create table exact (id int primary key, code int, name text)")
    conn.execute("create index exact_code on exact (code)")
    conn.execute("create index exact_name_code on exact (name, code)")
    model: dict[int, tuple] = {}
    for step in steps:
        _apply(conn, model, step)
        _check(conn, model)
