"""Prepared lookups by primary key and through indexes, side by side with PostgreSQL 15.

The same prepared statements (psycopg's extended protocol, ``prepare=True``) run on both
servers with parameter values that find rows, miss, are NULL, need a conversion to the
column's type or cannot be one (22P02, 22003, 42883): before and after CHECKPOINT (which
moves the rows to DiskRowSets, where later changes are deltas), inside a transaction that
changed the rows itself, and as a role whose column privileges do not cover the lookup.
Each answer (rows, or the SQLSTATE) must be PostgreSQL's.
"""

from __future__ import annotations

import contextlib
import decimal

import psycopg
import pytest

from tests.e2e.test_privileges import _connect

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists kl_items",
    "drop table if exists kl_pairs",
    "create table kl_items (id bigint primary key, code int, name text, amount numeric(10, 2))",
    "create index kl_items_code on kl_items (code)",
    "create unique index kl_items_name on kl_items (name)",
    "create index kl_items_code_amount on kl_items (code, amount)",
    "insert into kl_items select i, i % 7, 'n' || i, i * 1.5 from generate_series(1, 300) as g(i)",
    "insert into kl_items values (1000, null, null, null)",
    "insert into kl_items values (1001, 3, null, 2.25)",
    "create table kl_pairs (a int, b text, v int, primary key (a, b))",
    "insert into kl_pairs select i % 10, 'b' || (i / 10), i from generate_series(0, 99) as g(i)",
    "insert into kl_pairs values (-1, '', 0), (2, 'b1\x01', 5)",
    # A non-unique index on a table keyed by (int, text): each entry's key holds the row's.
    "create index kl_pairs_v on kl_pairs (v)",
]

D = decimal.Decimal
LOOKUPS: list[tuple[str, list[list[object]]]] = [
    ("select id, code, name from kl_items where id = %s",
     [[5], [300], [0], [1000], [None], [2**40], [-1], ["17"], ["x7"], ["99999999999999999999"],
      [D("5.0")], [D("5.5")], [5.0], [2**70]]),
    ("select name, id from kl_items where id = %s::int", [[7], ["7"], ["3000000000"]]),
    # The equalities that name the keys are not applied again; any others on a key column are.
    ("select 1 as one from kl_items where id = %s", [[5], [0], [None]]),
    ("select id from kl_items where id = %s and id = %s", [[5, 5], [5, 6], [6, 5]]),
    ("select id from kl_items where id in (%s, %s) and id = %s", [[5, 6, 6], [5, 6, 7]]),
    ("select v from kl_pairs where a = %s and b = %s and a < %s", [[3, "b0", 4], [3, "b0", 3]]),
    ("select id, name from kl_items where code = %s order by id",
     [[3], [0], [6], [7], [None], ["2"], ["2.5"], [D("2.0")], [D("2.5")], [2.0], [2**40]]),
    ("select id from kl_items where name = %s", [["n42"], ["n0"], [None], [""], ["N42"]]),
    ("select id, amount from kl_items where code = %s and amount = %s order by id",
     [[3, D("4.50")], [3, D("4.5")], [3, 4.5], [3, D("2.25")], [3, None], [None, D("4.50")],
      [3, "abc"]]),
    ("select id from kl_items where code = %s and id > %s order by id",
     [[1, 250], [1, None], [1, 290.5]]),
    ("select v, a, b from kl_pairs where a = %s and b = %s",
     [[3, "b0"], [3, "b9"], [3, "b10"], [-1, ""], [2, "b1\x01"], [2, "b1"], [None, "b0"],
      ["3", "b0"]]),
    ("select v from kl_pairs where a = %s order by v", [[4], [11], [None]]),
    ("select v from kl_pairs where b = %s and a = %s", [["b2", 5], ["b2", 50]]),
    ("select a, b from kl_pairs where v = %s order by a, b", [[5], [0], [99], [100], [None]]),
    ("select id, name from kl_items where id in (%s, %s, %s) order by id",
     [[5, 6, 7], [5, 5, 0], [1000, None, 3], [11, 6000, 5000], [D("4.0"), D("4.5"), 2**40]]),
    ("select v, b from kl_pairs where a in (%s, %s) and b in (%s, 'b1') order by v",
     [[3, 2, "b0"], [2, -1, ""], [None, 2, "b1\x01"]]),
    ("select count(*) from kl_items where id = %s and code = %s", [[3, 3], [3, 5], [1001, 5]]),
    # Short index reads, read whole: the other predicates still applied, the LIMIT kept.
    ("select id from kl_items where code = %s and name = %s",
     [[3, "n3"], [4, "n3"], [None, "n3"], [3, None], ["3", "n10"]]),
    ("select id, code from kl_items where name = %s limit %s",
     [["n42", 1], ["n42", 0], ["zz", 1], ["n42", None]]),
    ("select code from kl_items where code = %s limit %s", [[3, 2], [3, 0], [6, 100], [None, 1]]),
    # Direct reads that start short on nyala's event loop and go on on its thread where
    # they stop being short: a long index range, a whole scan, a scan under a LIMIT.
    ("select id from kl_items where code >= %s order by id", [[2], [7], [None], ["x"]]),
    ("select id, code from kl_items where code in (%s, %s) order by id",
     [[1, 2], [3, 3], [None, 1]]),
    ("select id, name from kl_items where amount = %s", [[D("4.50")], [D("-1")], [None]]),
    ("select id from kl_items where name > %s limit %s", [["n98", 2], ["n9", 2000], ["z", 1]]),
]  # fmt: skip


def _answers(conn: psycopg.Connection) -> list[object]:
    out: list[object] = []
    for sql, rows in LOOKUPS:
        with conn.cursor() as cur:
            for params in rows:
                in_block = conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
                try:
                    # In a transaction, a savepoint keeps an error from ending it.
                    with conn.transaction() if in_block else contextlib.nullcontext():
                        found: object = cur.execute(sql, params, prepare=True).fetchall()
                except psycopg.Error as exc:
                    found = exc.sqlstate
                out.append((sql, params, found))
    return out


def _changes(conn: psycopg.Connection) -> list[object]:
    """Lookups inside a transaction that inserts, updates (keys and indexed columns) and
    deletes: its own writes are seen, then nothing is left after ROLLBACK."""
    steps = [
        "insert into kl_items values (5000, 3, 'fresh', 1.00)",
        "update kl_items set code = 6, name = 'moved' where id = 10",
        "update kl_items set id = 6000 where id = 11",
        "delete from kl_items where id in (17, 24)",
        "update kl_pairs set b = 'zz' where a = 3 and b = 'b0'",
    ]
    out: list[object] = []
    with conn.transaction(force_rollback=True):
        for step in steps:
            conn.execute(step)
            out.extend(_answers(conn))
            out.append(
                conn.execute(
                    "select id from kl_items where id = %s or code = %s order by id", [6000, 3]
                ).fetchall()
            )
    return out


def _scenario(conn: psycopg.Connection) -> list[object]:
    for sql in SETUP:
        conn.execute(sql)
    out = _answers(conn)
    conn.execute("checkpoint")
    out += _answers(conn)
    conn.execute("update kl_items set code = 5, amount = 9.99 where id in (3, 10, 1001)")
    conn.execute("delete from kl_items where id in (4, 300)")
    conn.execute("insert into kl_items values (4, 3, 'n4b', 4.50)")
    conn.execute("update kl_pairs set v = -v where a = 2")
    out += _answers(conn)  # deltas over flushed rows
    out += _changes(conn)
    conn.execute("checkpoint")
    out += _answers(conn)
    return out


def test_prepared_lookups_match_postgresql(nyala_server, postgres_server):
    with _connect(nyala_server) as nyala, _connect(postgres_server) as postgres:
        theirs = _scenario(postgres)
        ours = _scenario(nyala)
    for mine, expected in zip(ours, theirs, strict=True):
        assert mine == expected


COLUMN_GRANTS = [
    "drop role if exists kl_reader",
    "create role kl_reader login",
    "grant select (id, code) on kl_items to kl_reader",
]
GUARDED = [
    ("select id from kl_items where code = %s order by id", [3]),
    ("select id, code from kl_items where id = %s", [5]),
    ("select id, name from kl_items where id = %s", [5]),
    ("select id from kl_items where name = %s", ["n5"]),
    ("select v from kl_pairs where a = %s and b = %s", [3, "b0"]),
]


def _guarded(server) -> list[object]:
    with _connect(server) as su:
        for sql in [*SETUP, *COLUMN_GRANTS]:
            su.execute(sql)
        out: list[object] = []
        try:
            with _connect(server, "kl_reader") as reader, reader.cursor() as cur:
                for sql, params in GUARDED:
                    for _ in range(2):  # the second run reuses the prepared statement
                        try:
                            out.append(cur.execute(sql, params, prepare=True).fetchall())
                        except psycopg.Error as exc:
                            out.append(exc.sqlstate)
        finally:
            su.execute("drop table kl_items")
            su.execute("drop table kl_pairs")
            su.execute("drop role kl_reader")
        return out


def test_lookups_check_table_and_column_privileges_as_postgresql(nyala_server, postgres_server):
    assert _guarded(nyala_server) == _guarded(postgres_server)


def test_explain_names_the_path_a_prepared_lookup_takes(nyala_server):
    with _connect(nyala_server) as conn:
        for sql in SETUP:
            conn.execute(sql)
        try:

            def plan(sql: str) -> list[str]:
                return [r[0] for r in conn.execute(f"explain {sql}", [3]).fetchall()]

            direct = "Direct read: the scan answers the query, no DuckDB"
            by_index = plan("select id, name from kl_items where code = %s")
            assert by_index[0] == direct
            assert any("Index Scan using kl_items_code " in line for line in by_index)
            by_key = plan("select name from kl_items where id = %s")
            assert by_key[0] == direct and "     Primary-key bounds on: id" in by_key
            scanned = plan("select id from kl_items where code + 0 = %s")
            assert scanned[0].startswith("DuckDB above the scans: ")
            assert not any("Index Scan" in line for line in scanned)
        finally:
            conn.execute("drop table kl_items")
            conn.execute("drop table kl_pairs")


FRESH_SETUP = [
    "drop table if exists kl_fresh",
    "create table kl_fresh (id bigint primary key, code int, v int)",
    "create index kl_fresh_code on kl_fresh (code)",
    "insert into kl_fresh select i, i % 5, 0 from generate_series(1, 50) as g(i)",
]


def _fresh_reads(server) -> list[object]:
    """Autocommit lookups (nyala keeps the transaction a direct read used, to begin the next
    one with) see every commit made between them, under each isolation level; a lookup and
    a write in one implicit transaction (a pipeline before Sync) see each other and roll
    back together."""
    out: list[object] = []
    with _connect(server) as reader, _connect(server) as writer:
        for sql in FRESH_SETUP:
            writer.execute(sql)
        try:
            for level in ("read committed", "repeatable read", "serializable"):
                reader.execute(f"set default_transaction_isolation = '{level}'")
                for step in range(4):
                    by_key = "select v from kl_fresh where id = %s"
                    by_index = "select id, v from kl_fresh where code = %s"  # a direct read too
                    out.append(reader.execute(by_key, [1], prepare=True).fetchall())
                    out.append(sorted(reader.execute(by_index, [1], prepare=True).fetchall()))
                    out.append(reader.execute(by_key, [6], prepare=True).fetchall())
                    writer.execute("update kl_fresh set v = v + 1 where id in (1, 6)")
                    if step == 1:
                        writer.execute("checkpoint")
                out.append(reader.execute("select v from kl_fresh where id = 1").fetchall())
                try:
                    with reader.pipeline():
                        seen = reader.execute("select v from kl_fresh where id = %s", [1])
                        reader.execute("update kl_fresh set v = 100 where id = %s", [1])
                        mine = reader.execute("select v from kl_fresh where id = %s", [1])
                        reader.execute("select 1 / 0")
                except psycopg.Error as exc:
                    out.append(exc.sqlstate)
                out.append((seen.fetchall(), mine.fetchall()))
                out.append(reader.execute("select v from kl_fresh where id = %s", [1]).fetchall())
        finally:
            writer.execute("drop table kl_fresh")
    return out


def test_autocommit_lookups_see_each_commit_as_postgresql(nyala_server, postgres_server):
    assert _fresh_reads(nyala_server) == _fresh_reads(postgres_server)


def test_autocommit_lookups_count_as_transactions(nyala_server):
    """Each autocommit lookup is a committed transaction in pg_stat_database."""
    query = "select xact_commit from pg_stat_database where datname = current_database()"
    with _connect(nyala_server) as conn:
        for sql in FRESH_SETUP:
            conn.execute(sql)
        try:
            before = conn.execute(query).fetchone()
            for i in range(1, 21):
                conn.execute("select v from kl_fresh where id = %s", [i], prepare=True)
            after = conn.execute(query).fetchone()
        finally:
            conn.execute("drop table kl_fresh")
    assert before is not None and after is not None
    assert after[0] >= before[0] + 20


def test_short_index_lookups_count_as_index_scans(nyala_server):
    """A prepared lookup through an index or by primary key, read whole, is one index scan
    of its table in pg_stat_user_tables with the rows it fetched."""
    query = (
        "select seq_scan, seq_tup_read, idx_scan, idx_tup_fetch"
        " from pg_stat_user_tables where relname = 'kl_counted'"
    )
    with _connect(nyala_server) as conn:
        conn.execute("drop table if exists kl_counted")
        conn.execute("create table kl_counted (id int primary key, code int)")
        conn.execute("create index kl_counted_code on kl_counted (code)")
        conn.execute("insert into kl_counted select i, i % 5 from generate_series(1, 50) i")
        try:
            before = conn.execute(query).fetchone()
            for code in (1, 2, 9):
                sql = "select id from kl_counted where code = %s"
                conn.execute(sql, [code], prepare=True).fetchall()
            for key in (3, 4, 70):  # by primary key: index scans too
                conn.execute("select code from kl_counted where id = %s", [key], prepare=True)
            after = conn.execute(query).fetchone()
        finally:
            conn.execute("drop table kl_counted")
    assert before is not None and after is not None
    assert [a - b for a, b in zip(after, before, strict=True)] == [0, 0, 6, 22]
