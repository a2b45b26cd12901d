"""Pipelined UPDATEs by key whose SET reads the row (``v = v + $1``, psycopg ``executemany``)
on nyala and PostgreSQL 15: the same counts, rows and SQLSTATEs whether the batch goes as
one read and one write (distinct keys, all found) or row by row (a key twice, a key
missing), with overflow, NULL and too-long values failing at the first, a middle and the
last row."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.pipelines import run_pipelines

pytestmark = pytest.mark.e2e

_DDL = (
    "create table ku (host text, slot bigint, v int not null, w bigint, note varchar(3), "
    "primary key (host, slot))"
)
_TOP = 2**31 - 10


def _rows() -> list[tuple]:
    return [(f"h{i % 3}", i, _TOP if i == 7 else i, None if i % 4 else i, "n") for i in range(30)]


def _run(server, statements) -> list:  # noqa: ANN001
    """The table after ``statements`` (executemany runs, each with its rowcount or SQLSTATE)."""
    return run_pipelines(server, "ku", _DDL, _rows(), statements, "host, slot")


def _key(i: int) -> tuple:
    return (f"h{i % 3}", i)


_ADD = "update ku set v = v + %s where host = %s and slot = %s"
_SCALE = "update ku set w = coalesce(w, 0) * %s + v where host = %s and slot = %s"
_NOTE = "update ku set v = v + 1, note = %s where host = %s and slot = %s"
_DELETE = "delete from ku where host = %s and slot = %s"


def _adds(*deltas: int | None, start: int = 0) -> list[tuple]:
    return [(d, *_key(start + i)) for i, d in enumerate(deltas)]


@pytest.mark.parametrize(
    "statements",
    [
        pytest.param([(_ADD, _adds(*range(1, 21)))], id="add-distinct"),
        pytest.param([(_ADD, _adds(1, 2, 3) + _adds(5, start=1))], id="add-key-twice"),
        pytest.param([(_ADD, [(1, *_key(2)), (2, "h9", 2), (3, *_key(4))])], id="add-key-missing"),
        pytest.param([(_ADD, [(20, *_key(7)), (1, *_key(8)), (1, *_key(9))])], id="overflow-first"),
        pytest.param([(_ADD, _adds(1, 1, 1, 20, 1, 1, 1, start=4))], id="overflow-middle"),
        pytest.param([(_ADD, _adds(1, 1, 1, 20, start=4))], id="overflow-last"),
        pytest.param([(_ADD, _adds(1, -(2**31), 1, start=6))], id="negative-overflow-middle"),
        pytest.param([(_ADD, _adds(1, None, 1, start=10))], id="not-null-middle"),
        pytest.param([(_SCALE, _adds(*range(2, 14)))], id="coalesce-reads-two-columns"),
        pytest.param([(_SCALE, _adds(2**40, 2**40, start=8))], id="bigint-overflow-last"),
        pytest.param(
            [(_NOTE, [("a", *_key(1)), ("b", *_key(2)), ("long", *_key(3))])], id="too-long-last"
        ),  # fmt: skip
        pytest.param(
            [
                (_ADD, _adds(*range(10))),
                (_DELETE, [_key(i) for i in range(0, 10, 2)]),
                (_ADD, _adds(*range(10))),
            ],
            id="add-delete-add",
        ),  # fmt: skip
    ],
)
def test_batched_row_updates_match_postgresql(nyala_server, postgres_server, statements):  # noqa: ANN001
    assert _run(nyala_server, statements) == _run(postgres_server, statements)


def test_batched_row_update_in_a_transaction_sees_its_own_writes(nyala_server, postgres_server):  # noqa: ANN001
    """Two pipelines in one transaction: the second reads what the first wrote."""

    def run(server) -> list:  # noqa: ANN001
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            conn.execute("drop table if exists ku")
            conn.execute(_DDL)
            with conn.cursor() as cur:
                cur.executemany("insert into ku values (%s, %s, %s, %s, %s)", _rows())
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(_ADD, _adds(*range(1, 11)))
                cur.executemany(_SCALE, _adds(*range(1, 11)))
            return conn.execute("select * from ku order by host, slot").fetchall()

    assert run(nyala_server) == run(postgres_server)
