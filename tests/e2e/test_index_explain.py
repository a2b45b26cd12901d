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


def _index_reads(conn: psycopg.Connection) -> int:
    row = conn.execute(
        "select idx_scan from pg_stat_user_tables where relname = 'explained'"
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
