"""Reads at a past snapshot (``FOR SYSTEM_TIME AS OF``, ``SET nyala.read_timestamp``) that the
scan alone answers take the direct path, and answer exactly as DuckDB over the same scan does.

Every query runs twice at every snapshot taken so far: as written (EXPLAIN: "Direct read")
and with ``OFFSET 0``, which keeps it on the general path (DuckDB above the scans) without
changing its rows.  The two must agree on column names, type OIDs and every value as sent
in text, in the simple and the extended protocol (a prepared direct read may start on the
event loop), after updates, deletes, flushes and delta and merging compactions; and fail
alike, with 72000, once a snapshot is older than the history kept.  A lookup through an
index built after the instant (which holds no entry of the rows then) finds what a scan does.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.support.servers import NyalaServer

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROWS = 6000
SETUP = (
    "create table tt (id bigint primary key, code int, name text, amount numeric(10,2),"
    " at timestamptz, flag boolean) partition by hash (id) partitions 3",
    "create index tt_code on tt (code)",
    f"insert into tt select i, i % 97, 'n' || i, i / 7.0, timestamptz '2024-01-01 00:00:00+00'"
    f" + i * interval '1 minute', case when i % 5 = 0 then null else i % 2 = 0 end"
    f" from generate_series(1::bigint, {ROWS}::bigint) g(i)",
)
# (query after FROM ... and its snapshot clause, whether its rows come in no set order)
QUERIES = (
    "select * from {t}",
    "select id, name from {t} where id between 100 and 340",
    "select code, amount, at from {t} where id = 42",
    "select id, flag from {t} where id in (3, 5, 7, 5000, 99999)",
    "select id, name from {t} where code = 7",
    "select id, amount from {t} where code in (3, 4) and name >= 'n3'",
    "select id from {t} where name like 'n12%'",
    "select id, at from {t} where flag is null and id < 400",
    "select id from {t} where id = -1",
)
LIMITED = "select id from {t} where id < 50 limit 7"
INDEXED = (
    ("select id from {t} where code = 7", "select id from {t} where code + 0 = 7"),
    ("select id from {t} where name = 'n12'", "select id from {t} where name || '' = 'n12'"),
)


def _stamp() -> str:
    time.sleep(0.02)  # the instant lies strictly between two commits
    stamp = dt.datetime.now(dt.UTC).isoformat()
    time.sleep(0.02)
    return stamp


def _answer(conn: psycopg.Connection[Any], sql: str, prepare: bool) -> tuple[Any, ...]:
    """What the client sees: the SQLSTATE, or the columns (names, type OIDs) and text rows."""
    try:
        cur = conn.execute(sql, prepare=prepare)
    except psycopg.Error as exc:
        return ("error", exc.sqlstate)
    result = cur.pgresult
    assert result is not None
    columns = [(d.name, d.type_code) for d in cur.description or ()]
    rows = sorted(
        tuple(result.get_value(r, c) for c in range(result.nfields)) for r in range(result.ntuples)
    )
    return ("rows", columns, rows)


def _plan(conn: psycopg.Connection[Any], sql: str) -> str:
    return "\n".join(r[0] for r in conn.execute(f"explain {sql}").fetchall())


def _both_ways(conn: psycopg.Connection[Any], query: str, step: str) -> tuple[Any, ...]:
    """``query`` on the direct and on the general path, in both protocols: one answer."""
    general = f"{query} offset 0"
    assert "Direct read" in _plan(conn, query), (step, query)
    assert "DuckDB above the scans" in _plan(conn, general), (step, general)
    answers = {
        (path, prepare): _answer(conn, sql, prepare)
        for path, sql in (("direct", query), ("general", general))
        for prepare in (False, True)
    }
    first = answers[("direct", False)]
    for key, answer in answers.items():
        assert answer == first, (step, query, key)
    return first


def _check(conn: psycopg.Connection[Any], stamps: dict[str, str], step: str) -> None:
    """Every query at every snapshot, through the clause and through the setting."""
    for name, stamp in stamps.items():
        at = f"{step} @ {name}"
        for query in QUERIES:
            clause = _both_ways(conn, query.format(t=f"tt for system_time as of '{stamp}'"), at)
            assert clause[0] == "rows", (at, query, clause)
            conn.execute(f"set nyala.read_timestamp = '{stamp}'")
            try:
                pinned = _both_ways(conn, query.format(t="tt"), at)
            finally:
                conn.execute("reset nyala.read_timestamp")
            assert pinned == clause, (at, query)
        source = f"tt for system_time as of '{stamp}'"
        for indexed, scanned in INDEXED:
            # An index built after the instant holds nothing of then: the scan's rows count.
            by_index = _answer(conn, indexed.format(t=source), True)
            assert by_index == _answer(conn, scanned.format(t=source), True), (at, indexed)
        limited = LIMITED.format(t=source)
        direct, general = _answer(conn, limited, True), _answer(conn, limited + " offset 0", True)
        # No ORDER BY: which 7 rows is not fixed, how many is.
        assert direct[0] == general[0] == "rows" and len(direct[2]) == len(general[2])
        assert len(direct[2]) == (0 if name == "before" else 7)


def _maintenance_done(conn: psycopg.Connection[Any], kind: str) -> int:
    row = conn.execute(
        "select count(*) from nyala_maintenance where kind = %s and state <> 'registered'",
        (kind,),
    ).fetchone()
    return 0 if row is None else int(row[0])


def _wait_for(conn: psycopg.Connection[Any], kind: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while _maintenance_done(conn, kind) == 0:
        assert time.monotonic() < deadline, f"no {kind} ran"
        time.sleep(0.2)


@pytest.fixture
def server(nyala_server_factory: Any) -> Iterator[NyalaServer]:
    yield nyala_server_factory(
        extra_args=[
            "--delta-compaction-min-bytes", "1",
            "--minor-delta-compaction-min-files", "2",
            "--maintenance-polling-interval-ms", "50",
        ]
    )  # fmt: skip


def test_snapshot_reads_agree_direct_and_through_duckdb(server):
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        stamps = {"before": _stamp()}
        for sql in SETUP:
            conn.execute(sql)
        stamps["loaded"] = _stamp()
        (count,) = conn.execute(
            f"select count(*) from tt for system_time as of '{stamps['loaded']}'"
        ).fetchone()  # type: ignore[misc]
        assert count == ROWS
        _check(conn, stamps, "in memory")
        conn.execute("checkpoint")
        conn.execute("update tt set name = 'u' || id, code = 7 where id % 11 = 0")
        conn.execute("delete from tt where id % 13 = 0")
        stamps["changed"] = _stamp()
        conn.execute("create index tt_name on tt (name)")
        _check(conn, stamps, "flushed, then changed in memory, then indexed")
        conn.execute("checkpoint")
        conn.execute("update tt set amount = amount + 1 where id % 3 = 0")
        conn.execute("checkpoint")
        conn.execute("update tt set flag = not flag where id % 4 = 1")
        conn.execute("checkpoint")
        _wait_for(conn, "MajorDeltaCompactionOp")
        stamps["deltas compacted"] = _stamp()
        _check(conn, stamps, "REDO deltas flushed and compacted")
        for low in range(ROWS + 1, ROWS + 4001, 1000):
            conn.execute(
                f"insert into tt select i, i % 97, 'm' || i, i / 3.0, now(), true"
                f" from generate_series({low}::bigint, {low + 999}::bigint) g(i)"
            )
            conn.execute("delete from tt where id % 17 = 0")
            conn.execute("checkpoint")
        _wait_for(conn, "CompactRowSetsOp")
        stamps["merged"] = _stamp()
        _check(conn, stamps, "rowsets merged")


def test_a_snapshot_past_the_history_window_is_72000_both_ways(nyala_server_factory):
    server = nyala_server_factory(extra_args=["--history-max-age-s", "1.5"])
    queries = ("select * from {t}", "select v from {t} where id = 3",
               "select v from {t} where id = -1", "select v from {t} where v = 'v1'")  # fmt: skip

    def refused(source: str) -> None:
        for query in queries:
            sql = query.format(t=source)
            for prepare in (False, True):
                for path in (sql, sql + " offset 0"):
                    assert _answer(conn, path, prepare) == ("error", "72000"), (path, prepare)

    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("create table old_t (id int primary key, v text)")
        conn.execute("create index old_t_v on old_t (v)")
        conn.execute("insert into old_t select g, 'v' || g from generate_series(1, 50) g")
        stamp = _stamp()
        conn.execute("update old_t set v = 'new'")
        conn.execute(f"set nyala.read_timestamp = '{stamp}'")
        assert conn.execute("select count(*) from old_t where v = 'v1'").fetchone() == (1,)
        time.sleep(2.0)
        refused("old_t")  # accepted when set, refused when read: the window moved on
        conn.execute("reset nyala.read_timestamp")
        refused(f"old_t for system_time as of '{stamp}'")
        future = "old_t for system_time as of '2999-01-01 00:00:00+00'"
        for prepare in (False, True):
            for sql in (f"select * from {future}", f"select * from {future} offset 0"):
                assert _answer(conn, sql, prepare) == ("error", "22023"), (sql, prepare)
        assert conn.execute("select count(*) from old_t where v = 'new'").fetchone() == (50,)
