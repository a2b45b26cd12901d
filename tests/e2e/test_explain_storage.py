"""EXPLAIN ANALYZE shows, per tablet, what the storage scan read and skipped: rowsets, blocks,
and whether predicates ran on encoded data."""

from __future__ import annotations

import re

import psycopg
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROWS = 150_000


@pytest.fixture(scope="module")
def conn(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as connection:
        connection.execute(
            "create table ex (id bigint primary key, color text encoding dict_encoding, n bigint)"
        )
        connection.execute(
            f"insert into ex select g, (array['red', 'green', 'blue'])[g % 3 + 1], g "
            f"from generate_series(1, {ROWS}) g"
        )
        connection.execute("checkpoint")
        yield connection


def _tablet_line(conn: psycopg.Connection, sql: str) -> dict[str, int]:
    lines = [r[0] for r in conn.execute("explain analyze " + sql).fetchall()]
    line = next(line for line in lines if line.startswith("Tablet "))
    numbers = {
        "memrowset": r"MemRowSet rows (\d+)",
        "rowsets_read": r"rowsets (\d+) read",
        "blocks_read": r"blocks (\d+) read",
        "blocks_skipped": r"/ (\d+) skipped, predicates",
        "encoded": r"predicates (\d+) on encoded data",
        "decoded": r"(\d+) on decoded values",
        "strings": r"strings materialised (\d+)",
    }
    return {name: int(re.search(pattern, line).group(1)) for name, pattern in numbers.items()}


def test_dictionary_predicate_runs_on_codewords(conn):
    stats = _tablet_line(conn, "select count(*) from ex where color = 'green'")
    assert stats["rowsets_read"] >= 1 and stats["encoded"] >= 1 and stats["decoded"] == 0
    # Only the matching third of the rows is materialised for DuckDB's own recheck.
    assert stats["strings"] == ROWS // 3


def test_range_on_a_sorted_column_skips_blocks(conn):
    stats = _tablet_line(conn, "select sum(n) from ex where n > 140000")
    assert stats["blocks_skipped"] >= 1
    everything = _tablet_line(conn, "select sum(n) from ex where n > 0")
    assert everything["blocks_skipped"] == 0 and everything["blocks_read"] > stats["blocks_read"]
