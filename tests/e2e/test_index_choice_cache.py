"""The index a prepared lookup's shape reads through is worked out once per table version
(``index_scan.choose``): after CREATE, DROP and ALTER INDEX and ALTER TABLE the next
execution reads through the index a fresh choice picks (EXPLAIN names it, and
pg_stat_user_tables' ``idx_scan`` counts it) and returns what PostgreSQL 15 returns."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from tests.support.differential import Pair
from tests.support.prepared_runs import pair_fixture, prepared_answers

pytestmark = pytest.mark.e2e

SETUP = (
    "drop table if exists chosen",
    "create table chosen (id bigint primary key, a int, b text, c int)",
    "insert into chosen select i, i % 50, 'b' || (i % 7), i % 3 "
    "from generate_series(1::bigint, 3000::bigint) as g(i)",
)
LOOKUPS = (
    ("select id from chosen where a = %s and b = %s", (17, "b3")),
    ("select id from chosen where b = %s and a = %s", ("b5", 40)),
    ("select id from chosen where a = %s", (99,)),
    ("select id from chosen where c = %s and a = %s", (2, 11)),
)


pair = pair_fixture(SETUP)


def _answers(conn: psycopg.Connection[Any]) -> list[Any]:
    return prepared_answers(conn, LOOKUPS, runs=3)  # prepared, the choice kept after the first


def _index_of(conn: psycopg.Connection[Any], sql: str, params: tuple[object, ...]) -> str | None:
    text = "\n".join(r[0] for r in conn.execute("explain " + sql, params).fetchall())
    for word in text.split():
        if word.startswith("chosen_"):
            return word
    return None


def _index_reads(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("select idx_scan from pg_stat_user_tables where relname = 'chosen'")
    found = row.fetchone()
    assert found is not None
    return int(found[0] or 0)


def _check(pair: Pair, step: str, expected: list[str | None]) -> None:
    pair.same(_answers, step)
    chosen = [_index_of(pair.nyala, sql, params) for sql, params in LOOKUPS]
    assert chosen == expected, step
    before = _index_reads(pair.nyala)
    sql, params = LOOKUPS[0]
    pair.nyala.execute(sql, params, prepare=True).fetchall()
    assert _index_reads(pair.nyala) - before == (expected[0] is not None), step


def test_the_kept_index_choice_follows_index_and_table_ddl(pair):
    _check(pair, "no index", [None, None, None, None])
    pair.run("create index chosen_a on chosen (a)")
    _check(pair, "an index on a", ["chosen_a", "chosen_a", "chosen_a", "chosen_a"])
    pair.run("create index chosen_ba on chosen (b, a)")
    _check(pair, "a two-column index", ["chosen_ba", "chosen_ba", "chosen_a", "chosen_a"])
    pair.run("alter index chosen_ba rename to chosen_ab2")
    _check(pair, "renamed", ["chosen_ab2", "chosen_ab2", "chosen_a", "chosen_a"])
    pair.run("drop index chosen_ab2")
    _check(pair, "dropped", ["chosen_a", "chosen_a", "chosen_a", "chosen_a"])
    pair.run("create unique index chosen_ca on chosen (c, a, id)")
    _check(pair, "a unique index", ["chosen_a", "chosen_a", "chosen_a", "chosen_ca"])
    pair.run("alter table chosen add column d int", "update chosen set a = a + 1 where id < 100")
    _check(pair, "a column added", ["chosen_a", "chosen_a", "chosen_a", "chosen_ca"])
    pair.run("drop index chosen_a", "drop index chosen_ca")
    _check(pair, "none left", [None, None, None, None])
