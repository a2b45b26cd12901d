"""Row-at-a-time writes as drivers send them (bind parameters, one key), on nyala and on
PostgreSQL 15: the same counts, rows and SQLSTATEs.  On nyala most of these take the
DuckDB-free key-write path (sql/key_writes.py); the rest, the general one."""

from __future__ import annotations

import datetime as dt
import decimal
import threading
import time

import psycopg
import pytest

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["nyala", "postgres"])
def conn(request: pytest.FixtureRequest, nyala_server, postgres_server):  # noqa: ANN001
    server = nyala_server if request.param == "nyala" else postgres_server
    with psycopg.connect(server.dsn, autocommit=True) as connection:
        connection.execute("drop table if exists kw")
        connection.execute(
            "create table kw (id bigint, tag text, n int default 5, s varchar(4) not null "
            "default 'x', d numeric(6,2), f real, day date, at timestamptz, b boolean, "
            "raw bytea, primary key (id, tag))"
        )
        yield connection


ROW = (
    1,
    "a",
    2,
    "abc",
    decimal.Decimal("12.345"),
    1.5,
    dt.date(2024, 2, 29),
    dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
    True,
    b"\x00\xff",
)
INSERT = "insert into kw values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"


def _all(conn: psycopg.Connection) -> list[tuple]:
    return conn.execute("select * from kw order by id, tag").fetchall()


def test_insert_update_delete_by_key(conn):
    cur = conn.cursor()
    cur.execute(INSERT, ROW)
    assert cur.statusmessage == "INSERT 0 1"
    cur.executemany("insert into kw (id, tag) values (%s, %s)", [(2, "b"), (3, "c")])
    cur.execute("insert into kw (id, tag, s) values (%s, %s, default)", (4, "d"))
    cur.execute("update kw set n = %s, s = 'z', f = null where id = %s and tag = %s", (9, 2, "b"))
    assert cur.statusmessage == "UPDATE 1"
    cur.execute("update kw set n = %s where tag = %s and id = %s", (9, "nope", 2))
    assert cur.statusmessage == "UPDATE 0"
    cur.execute("delete from kw where id = %s and tag = %s", (3, "c"))
    assert cur.statusmessage == "DELETE 1"
    cur.execute("delete from kw where id = %s and tag = %s", (3, "c"))
    assert cur.statusmessage == "DELETE 0"
    assert _all(conn) == [
        (1, "a", 2, "abc", decimal.Decimal("12.35"), 1.5, *ROW[6:]),
        (2, "b", 9, "z", None, None, None, None, None, None),
        (4, "d", 5, "x", None, None, None, None, None, None),
    ]


def test_returning_with_parameters(conn):
    cur = conn.execute(
        "insert into kw (id, tag) values (%s, %s) returning id, n + %s", (7, "r", 10)
    )
    assert cur.fetchall() == [(7, 15)]


@pytest.mark.parametrize(
    ("params", "sqlstate"),
    [
        ((1, "a", 2**31, "x", None, None, None, None, None, None), "22003"),
        ((1, "a", 1, "abcde", None, None, None, None, None, None), "22001"),
        ((1, "a", 1, None, None, None, None, None, None, None), "23502"),
        ((1, "a", 1, "x", decimal.Decimal("10000"), None, None, None, None, None), "22003"),
        ((1, "a", 1, "x", None, 1e39, None, None, None, None), "22003"),
        ((None, "a", 1, "x", None, None, None, None, None, None), "23502"),
    ],
)
def test_bad_values_fail_with_postgres_sqlstates(conn, params, sqlstate):
    with pytest.raises(psycopg.Error) as failure:
        conn.execute(INSERT, params)
    assert failure.value.sqlstate == sqlstate
    assert _all(conn) == []


def test_duplicate_key_and_update_to_null(conn):
    conn.execute(INSERT, ROW)
    with pytest.raises(psycopg.errors.UniqueViolation):
        conn.execute(INSERT, ROW)
    with pytest.raises(psycopg.errors.NotNullViolation):
        conn.execute("update kw set s = %s where id = %s and tag = %s", (None, 1, "a"))
    assert _all(conn)[0][3] == "abc"


ROW_UPDATES = [
    ("update rw set i = i + %s, b = coalesce(b, 0) * 2 - 1 where k = %s",
     [(5, 1), (5, 3), (2**31 - 20, 1), (None, 1), (-3, 2)]),
    ("update rw set s = s * %s where k = %s", [(2, 1), (2**14, 2), (-1, 2)]),
    ("update rw set b = -b + i * %s where k = %s", [(3, 1), (2**40, 2), (2**62, 2)]),
    ("update rw set f = f * %s, i = -(i) where k = %s",
     [(10.0, 1), (1e300, 2), (1e-300, 2), (0.0, 1)]),
    ("update rw set r = f + %s where k = %s", [(1.0, 1), (1e300, 2)]),
    ("update rw set f = f + 1, b = b - i where k = %s", [(1,), (2,)]),
    ("update rw set i = 7, s = i where k = %s", [(1,), (2,)]),
]  # fmt: skip


def _row_updates(dsn: str) -> tuple[list[str | None], list[tuple]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("drop table if exists rw")
        conn.execute(
            "create table rw (k int primary key, s smallint, i int, b bigint, f float8, r real)"
        )
        conn.execute("insert into rw values (1, 1, 10, null, 1.5, 0), (2, 300, -5, 9, 1e300, 0)")
        outcomes: list[str | None] = []
        for sql, runs in ROW_UPDATES:
            for params in runs:
                try:
                    outcomes.append(conn.execute(sql, params, prepare=True).statusmessage)
                except psycopg.Error as exc:
                    outcomes.append(exc.sqlstate)
        rows = conn.execute("select * from rw order by k").fetchall()
        conn.execute("drop table rw")
    return outcomes, rows


def test_updates_computed_from_the_row_follow_postgresql(nyala_server, postgres_server):
    """SET from the row's own values (nyala: the key-write path) gives PostgreSQL's
    counts, overflow SQLSTATEs and rows."""
    outcomes, rows = _row_updates(postgres_server.dsn)
    assert outcomes.count("22003") >= 4 and "UPDATE 0" in outcomes
    assert _row_updates(nyala_server.dsn) == (outcomes, rows)


def _row_updates_by_typed_keys(dsn: str, flush: bool) -> list[object]:
    """SET from the row by a composite key of text, timestamptz and date, on flushed or
    in-memory rows, after the transaction's own update, delete and re-insert."""
    at = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    day = dt.date(2024, 2, 29)
    update = "update tk set v = v + %s where name = %s and at = %s and day = %s"
    seen: list[object] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("drop table if exists tk")
        conn.execute(
            "create table tk (name text, at timestamptz, day date, v int, "
            "primary key (name, at, day))"
        )
        conn.execute(
            "insert into tk values ('a', %s, %s, 1), ('a b', %s, %s, 2), ('', %s, %s, 3)",
            (at, day, at, day, at, day),
        )
        if flush:
            conn.execute("checkpoint")  # nyala: the rows go to a DiskRowSet
        for params in [(1, "a", at, day), (1, "a", at, day + dt.timedelta(1)), (5, "", at, day),
                       (2**31 - 1, "a", at, day), (None, "a", at, day)]:  # fmt: skip
            try:
                seen.append(conn.execute(update, params, prepare=True).statusmessage)
            except psycopg.Error as exc:
                seen.append(exc.sqlstate)
        with conn.transaction():
            seen.append(conn.execute(update, (10, "", at, day), prepare=True).statusmessage)
            conn.execute("delete from tk where name = %s and at = %s and day = %s", ("", at, day))
            seen.append(conn.execute(update, (10, "", at, day), prepare=True).statusmessage)
            conn.execute("insert into tk values (%s, %s, %s, %s)", ("", at, day, 100))
            seen.append(conn.execute(update, (10, "", at, day), prepare=True).statusmessage)
        seen.append(conn.execute("select * from tk order by name, at, day").fetchall())
        conn.execute("drop table tk")
    return seen


@pytest.mark.parametrize("flush", [False, True])
def test_updates_from_the_row_by_typed_composite_keys_follow_postgresql(
    nyala_server, postgres_server, flush
):
    """The key-write path reads the row it updates by its key (a point read): own writes,
    flushed rows, absent keys, overflow and NULL as PostgreSQL."""
    expected = _row_updates_by_typed_keys(postgres_server.dsn, flush)
    assert "UPDATE 0" in expected and "22003" in expected
    assert _row_updates_by_typed_keys(nyala_server.dsn, flush) == expected


def test_concurrent_increments_recheck_the_newest_row(conn):
    """Two sessions add to one counter; the second waits, re-reads and adds on top."""
    conn.execute("drop table if exists rw")
    conn.execute("create table rw (k int primary key, v int)")
    conn.execute("insert into rw values (1, 0)")
    info = conn.info
    dsn = f"host={info.host} port={info.port} user={info.user} dbname={info.dbname}"
    with psycopg.connect(dsn) as holder, psycopg.connect(dsn, autocommit=True) as other:
        holder.execute("update rw set v = v + %s where k = %s", (10, 1), prepare=True)
        done = []
        waiter = threading.Thread(
            target=lambda: done.append(
                other.execute(
                    "update rw set v = v + %s where k = %s", (1, 1), prepare=True
                ).statusmessage
            )
        )
        waiter.start()
        time.sleep(0.5)
        assert not done
        holder.commit()
        waiter.join(10)
    assert done == ["UPDATE 1"]
    assert conn.execute("select v from rw").fetchone() == (11,)
    conn.execute("drop table rw")


def test_a_key_write_that_must_wait_keeps_its_transaction(conn):
    """In a transaction block, a prepared write by key that finds its row locked waits
    (nyala: it leaves the event loop for the session's thread) and the block's earlier
    writes survive; under lock_timeout the wait ends with 55P03 and the block fails."""
    conn.execute("drop table if exists rw")
    conn.execute("create table rw (k int primary key, v int)")
    conn.execute("insert into rw values (1, 0), (2, 0), (3, 0)")
    info = conn.info
    dsn = f"host={info.host} port={info.port} user={info.user} dbname={info.dbname}"
    update = "update rw set v = v + %s where k = %s"
    with psycopg.connect(dsn) as holder, psycopg.connect(dsn) as other:
        holder.execute(update, (10, 1), prepare=True)
        done: list[object] = []

        def block() -> None:
            done.append(other.execute(update, (1, 2), prepare=True).statusmessage)
            done.append(other.execute(update, (1, 1), prepare=True).statusmessage)
            done.append(other.execute("select v from rw where k = %s", (1,), prepare=True)
                        .fetchall())  # fmt: skip
            other.commit()

        waiter = threading.Thread(target=block)
        waiter.start()
        time.sleep(0.5)
        assert done == ["UPDATE 1"]
        holder.commit()
        waiter.join(10)
        assert done == ["UPDATE 1", "UPDATE 1", [(11,)]]
        holder.execute(update, (100, 3), prepare=True)
        other.execute("set lock_timeout = 200")
        other.execute(update, (1, 2), prepare=True)
        with pytest.raises(psycopg.errors.LockNotAvailable):
            other.execute(update, (1, 3), prepare=True)
        other.rollback()
        holder.commit()
    assert conn.execute("select k, v from rw order by k").fetchall() == [(1, 11), (2, 1), (3, 100)]
    conn.execute("drop table rw")


def test_prepared_transaction_control_and_key_reads_of_flushed_rows(conn):
    """Prepared BEGIN (run without a thread hop on nyala) and point reads of rows in a
    DiskRowSet (no predicate judged that the key implies) answer as PostgreSQL does."""
    cur = conn.cursor()
    cur.executemany(
        "insert into kw (id, tag, n) values (%s, %s, %s)",
        [(i, f"t{i}", i * 10) for i in range(1, 301)],
    )
    conn.execute("checkpoint")  # nyala: the rows go to a DiskRowSet
    point = "select n from kw where id = %s and tag = %s"
    assert [cur.execute(point, (i, f"t{i}"), prepare=True).fetchall() for i in (1, 150, 300)] == [
        [(10,)],
        [(1500,)],
        [(3000,)],
    ]
    assert cur.execute(point, (301, "t301"), prepare=True).fetchall() == []
    assert cur.execute(point, (150, "t151"), prepare=True).fetchall() == []
    extra = "select n from kw where id = %s and tag = %s and (n = %s or id = %s)"
    assert cur.execute(extra, (7, "t7", 70, 0), prepare=True).fetchall() == [(70,)]
    assert cur.execute(extra, (7, "t7", 71, 0), prepare=True).fetchall() == []
    both = "select n from kw where id = %s and tag = %s and id = %s"
    assert cur.execute(both, (7, "t7", 8), prepare=True).fetchall() == []
    for ending, expected in (("rollback", 50), ("commit", 51)):
        cur.execute("begin", prepare=True)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        cur.execute("begin", prepare=True)  # a warning (25001), and the block goes on
        cur.execute("update kw set n = n + %s where id = %s and tag = %s", (1, 5, "t5"),
                    prepare=True)  # fmt: skip
        assert cur.execute(point, (5, "t5"), prepare=True).fetchall() == [(51,)]
        cur.execute(ending, prepare=True)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert cur.execute(point, (5, "t5"), prepare=True).fetchall() == [(expected,)]


def test_key_prefix_and_range_reads_with_a_limit_parameter(conn):
    """``LIMIT $n`` on a direct read (short, so inline on nyala, up to 1,000 rows; on a
    thread past that) gives PostgreSQL's rows."""
    cur = conn.cursor()
    cur.executemany(
        "insert into kw (id, tag, n) values (%s, %s, %s)",
        [(i // 3, f"t{i % 3}", i) for i in range(3000)],
    )
    prefix = "select tag, n from kw where id = %s limit %s"
    for limit in (0, 1, 2, 3, 5):
        rows = cur.execute(prefix, (7, limit), prepare=True).fetchall()
        assert len(rows) == min(limit, 3) and set(rows) <= {("t0", 21), ("t1", 22), ("t2", 23)}
    ranged = "select count(*) from (select n from kw where id >= %s and id < %s limit %s) s"
    assert cur.execute(ranged, (10, 900, 1000), prepare=True).fetchone() == (1000,)
    assert cur.execute(ranged, (10, 900, 1001), prepare=True).fetchone() == (1001,)
    assert cur.execute(ranged, (10, 900, 5000), prepare=True).fetchone() == (2670,)
    direct = "select n from kw where id >= %s and id < %s limit %s"
    assert len(cur.execute(direct, (10, 900, 1000), prepare=True).fetchall()) == 1000
    assert len(cur.execute(direct, (10, 900, 5000), prepare=True).fetchall()) == 2670


def _row_updates_by_checked_keys(dsn: str) -> list[object]:
    """UPDATEs (SET from the row, and constant) and DELETEs by keys an assignment would
    change or refuse: a varchar key's spaces past its length, one too long, a smallint out
    of range, NULL.  A WHERE compares them: no row, no error."""
    seen: list[object] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("drop table if exists ck")
        conn.execute("create table ck (k varchar(3), n smallint, v int, primary key (k, n))")
        conn.execute("insert into ck values ('ab', 1, 1), ('abc', 2, 2), ('', 3, 3)")
        statements = [
            "update ck set v = v * 2 + %s where k = %s and n = %s",
            "update ck set v = %s where k = %s and n = %s",
            "delete from ck where k = %s and n = %s",
        ]
        for statement in statements:
            for params in [(1, "ab", 1), (1, "ab    ", 1), (1, "abc  ", 2), (1, "abcd", 2),
                           (1, "abc", 40000), (1, "", 3), (1, "  ", 3), (1, "zz", 1),
                           (1, None, 1), (None, "ab", 1)]:  # fmt: skip
                given = params[1:] if statement.startswith("delete") else params
                try:
                    seen.append(conn.execute(statement, given, prepare=True).statusmessage)
                except psycopg.Error as exc:
                    seen.append(exc.sqlstate)
            seen.append(conn.execute("select * from ck order by k, n").fetchall())
        conn.execute("drop table ck")
    return seen


def test_writes_by_keys_an_assignment_would_refuse_follow_postgresql(nyala_server, postgres_server):
    """The key-write path compares the WHERE's key values (it does not assign them): a value
    the checks would cut or refuse finds no row, as in PostgreSQL, instead of 22001/22003."""
    expected = _row_updates_by_checked_keys(postgres_server.dsn)
    assert "UPDATE 0" in expected and "DELETE 0" in expected and "DELETE 1" in expected
    assert _row_updates_by_checked_keys(nyala_server.dsn) == expected
