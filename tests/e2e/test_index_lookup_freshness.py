"""Index lookups stay right once their key blocks are cached and the predicates their ranges
imply are no longer re-judged: after UPDATEs of the indexed column, DELETEs, flushes,
merging compactions, a rolled-back write, own writes in a transaction, DROP and CREATE
INDEX, each lookup (prepared, so it takes the short path) returns what PostgreSQL 15
returns and what a scan (``code + 0``, which no index serves) returns."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from tests.support.differential import Pair
from tests.support.maintenance import wait_for_quiet_maintenance
from tests.support.prepared_runs import pair_fixture, prepared_answers

pytestmark = pytest.mark.e2e

ROWS = 24_000
SETUP = (
    "drop table if exists fresh_lookup",
    "create table fresh_lookup (id bigint primary key, code bigint, name text, tag char(4))",
    f"insert into fresh_lookup select i, i * 7 % 5003, 'n' || (i % 997), "
    f"case when i % 3 = 0 then 'ab' else 'abc' end "
    f"from generate_series(1::bigint, {ROWS}::bigint) as g(i)",
    "create index fresh_lookup_code on fresh_lookup (code)",
    "create index fresh_lookup_name on fresh_lookup (name)",
    "create index fresh_lookup_tag on fresh_lookup (tag, code)",
    "checkpoint",
)
LOOKUPS = (
    ("select id from fresh_lookup where code = %s", (4998,)),
    ("select id from fresh_lookup where code = %s", (7,)),
    ("select id from fresh_lookup where code = %s", (123_456,)),
    ("select id from fresh_lookup where code in (%s, %s)", (14, 5002)),
    ("select id from fresh_lookup where name = %s", ("n5",)),
    ("select id from fresh_lookup where name = %s", ("renamed",)),
    ("select id from fresh_lookup where tag = %s and code = %s", ("ab", 21)),
    ("select id from fresh_lookup where code = %s::numeric", ("28.0",)),
)
SCANS = (
    "select id from fresh_lookup where code + 0 = %s",
    "select id from fresh_lookup where code + 0 = %s",
    "select id from fresh_lookup where code + 0 = %s",
    "select id from fresh_lookup where code + 0 in (%s, %s)",
    "select id from fresh_lookup where name || '' = %s",
    "select id from fresh_lookup where name || '' = %s",
)


pair = pair_fixture(SETUP)


def _answers(conn: psycopg.Connection[Any]) -> list[Any]:
    return prepared_answers(conn, LOOKUPS, runs=2)  # the second reads the blocks the first cached


def _check(pair: Pair, step: str) -> None:
    answers = pair.same(_answers, step)
    for sql, (_, params), (_, runs) in zip(SCANS, LOOKUPS, answers, strict=False):
        scanned = sorted(r[0] for r in pair.nyala.execute(sql, params).fetchall())
        assert all(run.ids() == scanned for run in runs), (step, sql, params)


def test_index_lookups_after_writes_flushes_compactions_and_ddl(pair):
    nyala, postgres = pair
    _check(pair, "loaded and flushed")
    pair.run("update fresh_lookup set code = 123456 where code = 4998")
    _check(pair, "indexed column updated (old value cached)")
    pair.run("delete from fresh_lookup where code = 7", "delete from fresh_lookup where id = 2")
    _check(pair, "deleted")
    pair.run("checkpoint")
    _check(pair, "flushed")
    for batch in range(4):
        low = ROWS + 1 + batch * 3000
        pair.run(
            f"insert into fresh_lookup select i, i * 7 % 5003, 'n' || (i % 997), 'ab' "
            f"from generate_series({low}::bigint, {low + 2999}::bigint) as g(i)",
            "checkpoint",
        )
    wait_for_quiet_maintenance(nyala, 120, poll_s=0.2)
    merged = nyala.execute(
        "select count(*) from nyala_maintenance where kind = 'CompactRowSetsOp' "
        "and state <> 'registered'"
    ).fetchone()
    assert merged is not None and merged[0] > 0, "overlapping rowsets were never merged"
    _check(pair, "more rowsets flushed and merged")
    pair.run("begin", "update fresh_lookup set code = 5002, name = 'renamed' where code = 14")
    _check(pair, "own writes in a transaction")
    pair.run("rollback")
    _check(pair, "rolled back")
    pair.run("drop index fresh_lookup_code")
    _check(pair, "index dropped")
    pair.run("create index fresh_lookup_code on fresh_lookup (code)")
    _check(pair, "index made again")
    plan = "\n".join(r[0] for r in nyala.execute(
        "explain select id from fresh_lookup where code = 21"
    ).fetchall())  # fmt: skip
    assert "fresh_lookup_code" in plan
    assert (
        postgres.execute("select count(*) from fresh_lookup").fetchone()
        == nyala.execute("select count(*) from fresh_lookup").fetchone()
    )
