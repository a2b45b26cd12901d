"""What a prepared short read reuses from one execution to the next (the ScanSpec shared by
``runs_direct`` and ``read_by_key``, the few-rows DataRow framing) never serves a stale
answer: the same prepared statements, run with the same and with new parameters, across
ALTER TABLE, DROP and CREATE INDEX, new snapshots and output settings, answer as
PostgreSQL 15 does, byte for byte in text format."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from tests.support.prepared_runs import pair_fixture, prepared_answers

pytestmark = pytest.mark.e2e

SETUP = (
    "drop table if exists reuse_t",
    "create table reuse_t (id bigint primary key, code int, name varchar(20), "
    "blob bytea, ratio float8, note text)",
    "insert into reuse_t select i, i % 50, 'n' || i, '\\x0102'::bytea, i / 3.0, "
    "case when i % 4 = 0 then null else 'héllo ' || i end "
    "from generate_series(1::bigint, 400::bigint) as g(i)",
    "create index reuse_t_code on reuse_t (code)",
)
QUERIES = (
    ("select id, code, name, note from reuse_t where id = %s", (7,)),
    ("select id, code, name, note from reuse_t where id = %s", (8,)),
    ("select id, name, note from reuse_t where code = %s", (7,)),
    ("select id, name, note from reuse_t where code = %s", (8,)),
    ("select id, blob, ratio from reuse_t where id = %s", (9,)),
    ("select id, blob, ratio from reuse_t where code = %s", (9,)),
    ("select * from reuse_t where id = %s", (12,)),
    ("select * from reuse_t where code = %s", (12,)),
)


pair = pair_fixture(SETUP)


def _answers(conn: psycopg.Connection[Any]) -> list[Any]:
    # the same parameters again: nothing of the last run is served
    return prepared_answers(conn, QUERIES, runs=3)


def test_prepared_short_reads_follow_ddl_snapshots_and_settings(pair):
    pair.same(_answers, "loaded")
    pair.run("update reuse_t set name = 'changed', note = null where id in (7, 12)")
    pair.same(_answers, "rows updated (a new snapshot, same parameters)")
    pair.run("update reuse_t set code = 7 where id = 9")
    pair.same(_answers, "indexed column updated")
    pair.run("drop index reuse_t_code")
    pair.same(_answers, "index dropped")
    pair.run("create index reuse_t_code on reuse_t (code)")
    pair.same(_answers, "index made again")
    pair.run("alter table reuse_t add column extra int default 5")
    pair.same(_answers, "column added")
    pair.run("alter table reuse_t drop column extra")
    pair.same(_answers, "column dropped")
    pair.run("set extra_float_digits = 0")
    pair.same(_answers, "float output changed")
    pair.run("set bytea_output = 'hex'", "set extra_float_digits = 3")
    pair.same(_answers, "float output changed again")
    pair.run("set datestyle = 'German'", "set timezone = 'Asia/Kolkata'")
    pair.same(_answers, "DateStyle and TimeZone changed")
