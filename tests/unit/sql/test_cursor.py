from __future__ import annotations

import pyarrow as pa
import pytest

from sql.common.result import ResultColumn
from sql.frontend import parser
from sql.frontend.statements import CursorStatement
from sql.session.cursors import Cursors
from storage import errors


def recognise(text: str) -> CursorStatement | None:
    (statement,) = parser.parse(text)
    return statement.ast if isinstance(statement.ast, CursorStatement) else None


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            'DECLARE "MyCur" CURSOR FOR select 1',
            CursorStatement(
                "DECLARE", "MyCur", "select 1", text='DECLARE "MyCur" CURSOR FOR select 1'
            ),
        ),
        ("fetch 2 from c", CursorStatement("FETCH", "c", count=2)),
        ('FETCH FORWARD 5 FROM "c"', CursorStatement("FETCH", "c", count=5)),
        ("fetch all in C", CursorStatement("FETCH", "c", count=None)),
        ("fetch next from c", CursorStatement("FETCH", "c", count=1)),
        ("fetch c", CursorStatement("FETCH", "c", count=1)),
        ("move 3 in c", CursorStatement("MOVE", "c", count=3)),
        ("close c", CursorStatement("CLOSE", "c")),
        ("close all", CursorStatement("CLOSE", "")),
        ("select 1", None),
    ],
)
def test_recognise(text, expected):
    assert recognise(text) == expected


def test_with_hold_and_refusals():
    assert recognise("declare h no scroll cursor with hold for select 1").hold is True
    with pytest.raises(errors.FeatureNotSupported):
        recognise("fetch backward 1 from c")
    with pytest.raises(errors.FeatureNotSupported):
        recognise("declare s scroll cursor for select 1")


def _stream(n: int, size: int):
    for start in range(0, n, size):
        yield pa.RecordBatch.from_arrays([pa.array(range(start, min(n, start + size)))], ["x"])


def _values(result) -> list[int]:
    return [v for b in result.batches for v in b.column(0).to_pylist()]


def test_fetch_reads_only_as_far_as_asked_across_batches():
    cursors = Cursors()
    columns = (ResultColumn("x", 20),)
    pulled = []

    def tracked():
        for batch in _stream(10, 4):
            pulled.append(batch.num_rows)
            yield batch

    assert cursors.declare(
        recognise("declare c cursor for x"), columns, tracked(), True
    ).command_tag == ("DECLARE CURSOR")
    first = cursors.fetch(CursorStatement("FETCH", "c", count=3))
    assert (first.command_tag, _values(first)) == ("FETCH 3", [0, 1, 2])
    assert pulled == [4]
    assert cursors.fetch(CursorStatement("MOVE", "c", count=2)).command_tag == "MOVE 2"
    rest = cursors.fetch(CursorStatement("FETCH", "c", count=None))
    assert _values(rest) == [5, 6, 7, 8, 9]
    assert cursors.fetch(CursorStatement("FETCH", "c", count=1)).command_tag == "FETCH 0"
    assert cursors.close(CursorStatement("CLOSE", "c")).command_tag == "CLOSE CURSOR"
    with pytest.raises(errors.InvalidCursorName):
        cursors.fetch(CursorStatement("FETCH", "c"))


def test_cursors_end_with_their_transaction_unless_held():
    cursors = Cursors()
    columns = (ResultColumn("x", 20),)
    cursors.declare(recognise("declare a cursor for x"), columns, _stream(3, 2), True)
    cursors.declare(recognise("declare b cursor with hold for x"), columns, _stream(3, 2), True)
    with pytest.raises(errors.DuplicateCursor):
        cursors.declare(recognise("declare a cursor for x"), columns, _stream(1, 1), True)
    cursors.end_transaction(committed=True)
    assert not cursors.has("a") and cursors.has("b")
    cursors.end_transaction(committed=False)
    assert _values(cursors.fetch(CursorStatement("FETCH", "b", count=None))) == [0, 1, 2]
    with pytest.raises(errors.NoActiveSqlTransaction):
        cursors.declare(recognise("declare c cursor for x"), columns, _stream(1, 1), False)
