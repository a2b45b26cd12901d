"""What a prepared short read reuses from one execution to the next (the ScanSpec shared by
``runs_direct`` and ``read_by_key``, the few-rows DataRow framing) never serves a stale
answer: the same prepared statements, run with the same and with new parameters, across
ALTER TABLE, DROP and CREATE INDEX, new snapshots and output settings, answer as
PostgreSQL 15 does, byte for byte in text format."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from tests.support.servers import NyalaServer, PostgresServer, run_on_each

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


@pytest.fixture
def conns(
    nyala_server: NyalaServer, postgres_server: PostgresServer
) -> list[psycopg.Connection[Any]]:
    run_on_each((nyala_server, postgres_server), SETUP)
    opened = [psycopg.connect(s.dsn, autocommit=True) for s in (nyala_server, postgres_server)]
    yield opened
    for conn in opened:
        conn.close()


def _answers(conn: psycopg.Connection[Any]) -> list[Any]:
    found = []
    for sql, params in QUERIES:
        for _ in range(3):  # the same parameters again: nothing of the last run is served
            cur = conn.cursor()
            cur.execute(sql, params, prepare=True)
            assert cur.pgresult is not None
            names = [d.name for d in cur.description or ()]
            texts = sorted(
                tuple(cur.pgresult.get_value(r, c) for c in range(cur.pgresult.nfields))
                for r in range(cur.pgresult.ntuples)
            )
        found.append((sql, names, texts))
    return found


def _check(conns: list[psycopg.Connection[Any]], step: str) -> None:
    ours, theirs = (_answers(c) for c in conns)
    assert ours == theirs, step


def _on_both(conns: list[psycopg.Connection[Any]], *statements: str) -> None:
    for conn in conns:
        for statement in statements:
            conn.execute(statement)


def test_prepared_short_reads_follow_ddl_snapshots_and_settings(conns):
    _check(conns, "loaded")
    _on_both(conns, "update reuse_t set name = 'changed', note = null where id in (7, 12)")
    _check(conns, "rows updated (a new snapshot, same parameters)")
    _on_both(conns, "update reuse_t set code = 7 where id = 9")
    _check(conns, "indexed column updated")
    _on_both(conns, "drop index reuse_t_code")
    _check(conns, "index dropped")
    _on_both(conns, "create index reuse_t_code on reuse_t (code)")
    _check(conns, "index made again")
    _on_both(conns, "alter table reuse_t add column extra int default 5")
    _check(conns, "column added")
    _on_both(conns, "alter table reuse_t drop column extra")
    _check(conns, "column dropped")
    _on_both(conns, "set extra_float_digits = 0")
    _check(conns, "float output changed")
    _on_both(conns, "set bytea_output = 'hex'", "set extra_float_digits = 3")
    _check(conns, "float output changed again")
    _on_both(conns, "set datestyle = 'German'", "set timezone = 'Asia/Kolkata'")
    _check(conns, "DateStyle and TimeZone changed")
