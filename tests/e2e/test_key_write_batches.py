"""Pipelined by-key UPDATEs and DELETEs (psycopg ``executemany``) on nyala and PostgreSQL 15:
the same counts, rows and SQLSTATEs whether a batch goes as one vectorised write (distinct
keys, all found) or row by row (a key twice, a key missing), for composite keys of text,
timestamps and a literal key cell."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.support.pipelines import run_pipelines

pytestmark = pytest.mark.e2e

_DDL = (
    "create table kb (host text, at timestamp, slot int, v bigint not null, note varchar(3), "
    "primary key (host, at, slot))"
)
_T0 = dt.datetime(2024, 1, 1)


_COPIED = 400
"""Rows loaded by COPY: enough for nyala to keep them as one insert segment."""


def _rows(n: int = 30) -> list[tuple]:
    return [(f"h{i % 3}", _T0 + dt.timedelta(minutes=i), i % 2, i, "n") for i in range(n)]


def _run(server, statements, copied: bool = False) -> list:  # noqa: ANN001
    """The table after ``statements`` (executemany runs, each with its rowcount or SQLSTATE),
    its rows inserted by executemany, or with ``copied`` by COPY."""
    rows = _rows(_COPIED) if copied else _rows()
    return run_pipelines(server, "kb", _DDL, rows, statements, "host, at, slot", copied)


def _key(i: int) -> tuple:
    return (f"h{i % 3}", _T0 + dt.timedelta(minutes=i), i % 2)


_UPDATE = "update kb set v = %s, note = %s where host = %s and at = %s and slot = %s"
_DELETE = "delete from kb where host = %s and at = %s and slot = %s"
_DELETE_SLOT_1 = "delete from kb where host = %s and at = %s and slot = 1"


@pytest.mark.parametrize(
    "statements",
    [
        pytest.param([(_DELETE, [_key(i) for i in range(0, 20, 2)])], id="delete-distinct"),
        pytest.param([(_DELETE, [_key(1), _key(4), _key(1)])], id="delete-key-twice"),
        pytest.param([(_DELETE, [_key(5), ("h9", _T0, 0), _key(7)])], id="delete-key-missing"),
        pytest.param(
            [(_DELETE_SLOT_1, [_key(i)[:2] for i in range(10)])], id="delete-literal-key-cell"
        ),
        pytest.param(
            [(_UPDATE, [(100 + i, "u", *_key(i)) for i in range(0, 30, 3)])],
            id="update-distinct",
        ),
        pytest.param(
            [(_UPDATE, [(1, "a", *_key(2)), (2, "b", *_key(2)), (3, "c", *_key(4))])],
            id="update-key-twice",
        ),
        pytest.param(
            [(_UPDATE, [(1, "a", *_key(2)), (None, "b", *_key(3)), (3, "c", *_key(4))])],
            id="update-not-null-middle",
        ),
        pytest.param(
            [(_UPDATE, [(1, "a", *_key(2)), (2, "b", *_key(3)), (3, "long", *_key(4))])],
            id="update-too-long-last",
        ),
        pytest.param(
            [(_UPDATE, [(2**40, "a", *_key(2)), (2, "b", *_key(3))]), (_DELETE, [_key(2)])],
            id="update-then-delete",
        ),
    ],
)
def test_batched_key_writes_match_postgresql(nyala_server, postgres_server, statements):  # noqa: ANN001
    assert _run(nyala_server, statements) == _run(postgres_server, statements)


@pytest.mark.parametrize(
    "statements",
    [
        pytest.param([(_DELETE, [_key(i) for i in range(0, _COPIED, 7)])], id="delete-distinct"),
        pytest.param(
            [(_DELETE, [_key(i) for i in range(3, 300, 5)] + [("h9", _T0, 0)])],
            id="delete-key-missing",
        ),
        pytest.param(
            [
                (_UPDATE, [(i, "u", *_key(i)) for i in range(0, _COPIED, 9)]),
                (_DELETE, [_key(i) for i in range(0, _COPIED, 6)]),
                (_DELETE, [_key(i) for i in range(1, _COPIED, 4)]),
            ],
            id="update-then-deletes",
        ),
        pytest.param(
            [(_UPDATE, [(i, "long" if i == 200 else "u", *_key(i)) for i in range(0, 320, 8)])],
            id="update-fails-middle",
        ),
    ],
)
def test_batched_key_writes_on_copied_rows_match_postgresql(  # noqa: ANN201
    nyala_server,
    postgres_server,
    statements,  # noqa: ANN001
):
    """The same pipelines on rows COPY loaded (nyala: an insert segment, whose keys a batch
    finds together)."""
    assert _run(nyala_server, statements, copied=True) == _run(
        postgres_server, statements, copied=True
    )


def test_batched_delete_of_a_duplicate_key_counts_once(nyala_server):  # noqa: ANN001
    """The second DELETE of one key in a batch sees the first's: 0 rows, not 2."""
    seen = _run(nyala_server, [(_DELETE, [_key(1), _key(1)])])
    assert seen[0] == ("ok", 1)
    assert len(seen[1]) == 29
