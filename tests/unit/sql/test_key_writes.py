"""Which writes take the DuckDB-free key-write path, and that it answers as the general one."""

from __future__ import annotations

import decimal

import pytest

from sql.dml import key_writes
from sql.dml.row_updates import update_rows
from sql.session.database import Database
from storage import errors


@pytest.fixture
def session(tmp_path):
    db = Database.open(tmp_path, fsync=False)
    s = db.session("nyala", "nyala", {})
    for _ in s.execute(
        "create table kw (id int primary key, n int default 5, s varchar(4) not null default 'x', "
        "d numeric(5,2), f real)"
    ):
        pass
    yield s
    s.close()
    db.close()


def _key_write(session, sql, oids=()):
    stmt = session.prepare(sql, list(oids))
    return stmt, stmt.plan.write.key_write


@pytest.mark.parametrize(
    "sql",
    [
        "insert into kw values ($1, $2, $3, $4, $5)",
        "insert into kw (id) values ($1)",
        "insert into kw values ($1, default, 'ab', -1.5, null)",
        "insert into kw (id, s) values (1, 'a'), (2, 'b')",
        "update kw set n = $1, s = 'q' where id = $2",
        "update kw set f = null where (id = 3)",
        "update kw set n = n + 1 where id = $1",
        "update kw set n = coalesce(n, 0) * $1 - (2 + kw.n) where id = $2",
        "delete from kw where id = $1",
        "delete from kw k where k.id = 7",
    ],
)
def test_simple_writes_qualify(session, sql):
    assert _key_write(session, sql)[1] is not None


@pytest.mark.parametrize(
    "sql",
    [
        "insert into kw values ($1 + 1)",
        "insert into kw (id) values ($1) returning id",
        "insert into kw (id) values ($1) on conflict do nothing",
        "insert into kw (id) select 1",
        "update kw set n = n / 2 where id = $1",
        "update kw set n = n + 1.5 where id = $1",
        "update kw set d = d + 1 where id = $1",
        "update kw set s = s || 'x' where id = $1",
        "update kw set n = 1 where id > $1",
        "update kw set n = 1 where id = $1 and n = 2",
        "update kw set id = 2 where id = 1",
        "delete from kw where id = $1 or id = 2",
        "delete from kw",
    ],
)
def test_other_writes_take_the_general_path(session, sql):
    assert _key_write(session, sql)[1] is None


def test_declared_parameter_type_other_than_the_column_is_general(session):
    assert _key_write(session, "insert into kw (id, d) values ($1, $2)", [23, 701])[1] is None
    assert _key_write(session, "insert into kw (id, d) values ($1, $2)", [20, 1700])[1] is not None


def _run(session, stmt, params):
    result = session.execute_prepared(stmt, params)
    list(result.batches or [])
    session.sync()
    return result.command_tag


def test_key_writes_apply_with_postgres_checks(session):
    stmt, _ = _key_write(session, "insert into kw values ($1, $2, $3, $4, $5)")
    assert _run(session, stmt, [1, 2, "ab", decimal.Decimal("1.005"), 1.5]) == "INSERT 0 1"
    with pytest.raises(errors.UniqueViolation):
        _run(session, stmt, [1, 2, "ab", None, None])
    with pytest.raises(errors.NumericValueOutOfRange, match="integer out of range"):
        _run(session, stmt, [2, 2**31, "ab", None, None])
    with pytest.raises(errors.StringDataRightTruncation):
        _run(session, stmt, [2, 1, "abcde", None, None])
    with pytest.raises(errors.NotNullViolation):
        _run(session, stmt, [2, 1, None, None, None])
    with pytest.raises(errors.NumericValueOutOfRange, match="numeric field overflow"):
        _run(session, stmt, [2, 1, "a", decimal.Decimal("1000"), None])
    with pytest.raises(errors.NumericValueOutOfRange):
        _run(session, stmt, [2, 1, "a", None, 1e39])
    update, _ = _key_write(session, "update kw set n = $1 where id = $2")
    assert _run(session, update, [7, 1]) == "UPDATE 1"
    assert _run(session, update, [7, 99]) == "UPDATE 0"
    delete, _ = _key_write(session, "delete from kw where id = $1")
    rows = [
        tuple(r.values())
        for b in next(iter(session.execute("select id, n, s, d, f from kw"))).batches
        for r in b.to_pylist()
    ]
    assert rows == [(1, 7, "ab", decimal.Decimal("1.01"), 1.5)]
    assert _run(session, delete, [1]) == "DELETE 1"
    assert _run(session, delete, [1]) == "DELETE 0"


def _outcome(session, stmt, params, general):
    if general:
        stmt.plan.write.key_write = None
    try:
        return _run(session, stmt, params)
    except errors.DbError as exc:
        return exc.sqlstate


@pytest.fixture
def general_session(tmp_path_factory):
    db = Database.open(tmp_path_factory.mktemp("general"), fsync=False)
    s = db.session("nyala", "nyala", {})
    yield s
    s.close()
    db.close()


ROW_UPDATES = [
    (
        "update rw set i = i + $1, b = coalesce(b, 0) * 2 - 1 where k = $2",
        [[5, 1], [5, 3], [2**31 - 20, 1], [None, 1], [-3, 2]],
    ),
    ("update rw set s = s * $1 where k = $2", [[2, 1], [2**14, 2], [-1, 2]]),
    ("update rw set b = -b + i * $1 where k = $2", [[3, 1], [2**40, 2], [2**62, 2]]),
    ("update rw set f = f * $1, i = -(i) where k = $2", [[10.0, 1], [0.5, 2], [0.0, 1]]),
    ("update rw set r = f + $1 where k = $2", [[1.0, 1]]),
    ("update rw set f = f + 1, r = i * f where k = $1", [[1], [2]]),
    ("update rw set i = 7, s = i where k = $1", [[1], [2]]),
]


def test_current_timestamp_inserts_as_the_general_path(session, general_session):
    stored = []
    for s, general in ((session, False), (general_session, True)):
        for _ in s.execute("create table h (k int, at timestamp, tz timestamptz)"):
            pass
        stmt = s.prepare("insert into h values ($1, current_timestamp, now())", [])
        assert stmt.plan.write.key_write is not None
        for _ in s.execute("begin"):
            pass
        assert _outcome(s, stmt, [1], general) == "INSERT 0 1"
        rows = next(iter(s.execute("select at, tz, now() from h"))).batches
        stored.append([tuple(r.values()) for b in rows for r in b.to_pylist()])
        for _ in s.execute("commit"):
            pass
    for rows in stored:
        ((at, tz, now),) = rows
        assert at == now.replace(tzinfo=None) and tz == now


def test_row_updates_answer_as_the_general_path(session, general_session):
    """The same UPDATEs on both paths: same counts, SQLSTATEs (overflow) and rows.  (Float
    overflow is compared with PostgreSQL in tests/e2e/test_key_writes.py: the general path
    stores infinity where PostgreSQL raises 22003.)"""
    answers = []
    for s, general in ((session, False), (general_session, True)):
        for _ in s.execute(
            "create table rw (k int primary key, s smallint, i int, b bigint, f float8, r real)"
        ):
            pass
        for _ in s.execute(
            "insert into rw values (1, 1, 10, null, 1.5, 0), (2, 300, -5, 9, 1e300, 0)"
        ):
            pass
        outcomes = []
        for sql, runs in ROW_UPDATES:
            stmt = s.prepare(sql, [])
            assert stmt.plan.write.key_write is not None, sql
            outcomes += [_outcome(s, stmt, params, general) for params in runs]
        rows = [
            tuple(r.values())
            for b in next(iter(s.execute("select * from rw order by k"))).batches
            for r in b.to_pylist()
        ]
        answers.append((outcomes, rows))
    assert answers[0] == answers[1]
    outcomes, _ = answers[0]
    assert "22003" in outcomes and "UPDATE 0" in outcomes


ROW_INSERTS = [
    [1, 1, "a", "b  ", decimal.Decimal("1.005"), 1.5],
    [2, 2**15 - 1, "abc  ", "x", decimal.Decimal("-999.994"), 3.4e38],
    [3, 2**15, "a", "b", None, None],  # 22003
    [3, -(2**15) - 1, "a", "b", None, None],  # 22003
    [3, 1, "abcd", "b", None, None],  # 22001
    [3, 1, None, "b", None, None],  # 23502
    [3, 1, "a", "b" * 70_000, None, None],  # 54000: a cell over 64 KiB
    [3, 1, "a", "b", decimal.Decimal("999.995"), None],  # 22003: numeric(5,2)
    [3, 1, "a", "b", None, 3.5e38],  # 22003: real
    [1, 1, "a", "b", None, None],  # 23505
    [None, 1, "a", "b", None, None],  # 23502: the key
    [4, None, "", None, decimal.Decimal("0.001"), float("inf")],
]


def test_one_row_inserts_answer_as_the_general_path(session, general_session):
    """A one-row INSERT's values checked one by one and converted at once (``_row_batch``)
    give the general path's rows and SQLSTATEs.  (Not a serial's values: the general path
    draws one for a row that fails its checks, the key-write path does not.)"""
    answers = []
    for s, general in ((session, False), (general_session, True)):
        for _ in s.execute(
            "create table ri (k int primary key, n smallint, v varchar(3) not null, c text, "
            "d numeric(5, 2), r real)"
        ):
            pass
        stmt = s.prepare("insert into ri (k, n, v, c, d, r) values ($1, $2, $3, $4, $5, $6)", [])
        assert stmt.plan.write.key_write is not None
        outcomes = [_outcome(s, stmt, params, general) for params in ROW_INSERTS]
        rows = [
            tuple(r.values())
            for b in next(iter(s.execute("select * from ri order by k"))).batches
            for r in b.to_pylist()
        ]
        answers.append((outcomes, rows))
    assert answers[0] == answers[1]
    outcomes, rows = answers[0]
    assert {"22003", "22001", "23502", "23505", "54000"} <= set(outcomes) and len(rows) == 3


BATCHED_ROW_UPDATES = [
    (
        "update rw set i = i + $1, b = coalesce(b, 0) * 2 - $1 where k = $2",
        [[5, 1], [7, 3], [-2, 2]],
    ),
    ("update rw set s = s * $1 where k = $2", [[2, 1], [3, 2]]),
    ("update rw set f = f * $1, r = i * f where k = $2", [[10.0, 2], [0.5, 3], [0.0, 1]]),
    ("update rw set i = 7, b = i where k = $1", [[3], [1]]),
]


def test_batched_row_updates_answer_as_the_general_path(session, general_session, monkeypatch):
    """A pipelined run of UPDATEs that read their rows (distinct keys, all found) goes as one
    read and one write (``update_rows``) and leaves the rows the general path leaves, run a
    row at a time; with a key twice or a missing key the rows go one at a time within the
    batch, and a row that fails leaves nothing of the batch applied (None: the connection
    then runs the rows one by one, each with its own answer)."""
    whole: list[int | None] = []

    def counted(*args):  # noqa: ANN002, ANN202
        whole.append(update_rows(*args))
        return whole[-1]

    monkeypatch.setattr(key_writes, "update_rows", counted)
    tables = []
    for s, general in ((session, False), (general_session, True)):
        for sql in (
            "create table rw (k int primary key, s smallint, i int, b bigint, f float8, r real)",
            "insert into rw values (1, 1, 10, null, 1.5, 0), (2, 300, -5, 9, 1e30, 0), "
            "(3, -4, 2147483000, 1, -2.5, 1)",
            "begin",
        ):
            for _ in s.execute(sql):
                pass
        for sql, runs in BATCHED_ROW_UPDATES:
            stmt = s.prepare(sql, [])
            if general:
                assert [_outcome(s, stmt, params, True) for params in runs] == ["UPDATE 1"] * len(
                    runs
                )
            else:
                assert s.execute_batch(stmt, runs) == ["UPDATE 1"] * len(runs), sql
        tables.append(
            [
                tuple(r.values())
                for b in next(iter(s.execute("select * from rw order by k"))).batches
                for r in b.to_pylist()
            ]
        )
    assert tables[0] == tables[1]
    assert whole == [3, 2, 3, 2]  # each run went as one write
    stmt = session.prepare("update rw set i = i + $1 where k = $2", [])
    twice = session.execute_batch(stmt, [[1, 1], [1, 1]])  # row by row: the second sees the first
    assert twice == ["UPDATE 1", "UPDATE 1"]
    assert session.execute_batch(stmt, [[1, 1], [1, 99]]) == ["UPDATE 1", "UPDATE 0"]
    assert session.execute_batch(stmt, [[1, 1], [2**31 - 1, 3]]) is None  # 22003: row 2's
    ((i,),) = [
        tuple(r.values())
        for b in next(iter(session.execute("select i from rw where k = 1"))).batches
        for r in b.to_pylist()
    ]
    assert i == 7 + 2 + 1  # nothing of the refused batch was applied


def test_batched_row_updates_of_a_partitioned_table(session, general_session, monkeypatch):
    """Rows in several hash partitions: one read and one write per tablet, the general
    path's rows."""
    whole: list[int | None] = []

    def counted(*args):  # noqa: ANN002, ANN202
        whole.append(update_rows(*args))
        return whole[-1]

    monkeypatch.setattr(key_writes, "update_rows", counted)
    runs = [[i, f"h{i % 5}", i] for i in range(20)]
    tables = []
    for s, general in ((session, False), (general_session, True)):
        for sql in (
            "create table hp (host text, n bigint, v int not null) primary key (host, n) "
            "partition by hash (host) partitions 3",
            "insert into hp select 'h' || (i % 5), i, i * 10 from generate_series(0, 39) g(i)",
        ):
            for _ in s.execute(sql):
                pass
        stmt = s.prepare("update hp set v = v * 2 + $1 where host = $2 and n = $3", [])
        if general:
            assert {_outcome(s, stmt, params, True) for params in runs} == {"UPDATE 1"}
        else:
            for _ in s.execute("begin"):
                pass
            assert s.execute_batch(stmt, runs) == ["UPDATE 1"] * len(runs)
            for _ in s.execute("commit"):
                pass
        tables.append(
            [
                tuple(r.values())
                for b in next(iter(s.execute("select * from hp order by n"))).batches
                for r in b.to_pylist()
            ]
        )
    assert whole == [20]
    assert tables[0] == tables[1]
