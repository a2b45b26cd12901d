"""EXPLAIN names the index exactly when execution reads through it: both ask
``index_scan.choose`` of the same scan, and pg_stat_user_tables' ``idx_scan`` counts the
index reads execution made (a primary-key lookup counts there too, so none is asked)."""

from __future__ import annotations

import json

import psycopg
import pytest

from tests.support.servers import NyalaServer

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def conn(nyala_server: NyalaServer):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as connection:
        connection.execute("drop table if exists explained")
        connection.execute("create table explained (k int primary key, v int)")
        connection.execute("insert into explained select i, i from generate_series(1, 1000) i")
        connection.execute("create index explained_v on explained (v)")
        yield connection


def _index_reads(conn: psycopg.Connection, table: str = "explained") -> int:
    row = conn.execute(
        "select idx_scan from pg_stat_user_tables where relname = %s", (table,)
    ).fetchone()
    assert row is not None
    return int(row[0] or 0)


@pytest.mark.parametrize(
    ("where", "by_index"),
    [("v = 777", True), ("v in (5, 777)", True), ("v + 0 = 777", False), ("v > 776", True)],
)
def test_explain_names_the_index_execution_reads(conn, where, by_index):
    query = f"select k from explained where {where}"
    text = "\n".join(r[0] for r in conn.execute(f"explain {query}").fetchall())
    document = conn.execute(f"explain (format json) {query}").fetchone()[0]
    plan = (json.loads(document) if isinstance(document, str) else document)[0]["Plan"]
    (scan,) = plan["Plans"]
    assert scan["Node Type"] == "Tablet Scan"
    before = _index_reads(conn)
    assert 777 in [r[0] for r in conn.execute(query).fetchall()]
    read_by_index = _index_reads(conn) > before
    assert read_by_index == by_index
    assert ("Index Scan using explained_v" in text) == by_index
    assert scan.get("Index Name") == ("explained_v" if by_index else None)


@pytest.fixture(scope="module")
def partial(conn):
    """A table whose only index is partial: ``(v) WHERE v > 500``."""
    conn.execute("drop table if exists explained_part")
    conn.execute("create table explained_part (k int primary key, v int)")
    conn.execute("insert into explained_part select i, i from generate_series(1, 1000) i")
    conn.execute("create index explained_high on explained_part (v) where v > 500")
    return conn


@pytest.mark.parametrize(
    ("where", "by_index"),
    [
        ("v = 777", True),
        ("v > 900 and v < 905", True),
        ("v = 7", False),  # outside the index's v > 500
        ("v > 400 and v < 505", False),
        ("v = %s", False),  # a parameter proves only v IS NOT NULL
    ],
)
def test_a_partial_index_is_read_exactly_when_explain_names_it(partial, where, by_index):
    conn = partial
    query = f"select k from explained_part where {where}"
    params = (777,) if "%s" in query else None
    text = "\n".join(r[0] for r in conn.execute(f"explain {query}", params).fetchall())
    before = _index_reads(conn, "explained_part")
    found = [r[0] for r in conn.execute(query, params).fetchall()]
    scanned = conn.execute(query.replace("where", "where k + 0 > 0 and"), params).fetchall()
    assert sorted(found) == sorted(r[0] for r in scanned) and found
    assert (_index_reads(conn, "explained_part") > before) == by_index
    assert ("Index Scan using explained_high" in text) == by_index
