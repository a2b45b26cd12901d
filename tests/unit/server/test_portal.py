"""Portal bookkeeping: format codes, row slicing across batches, statement and portal names."""

from __future__ import annotations

import pyarrow as pa
import pytest

from server.portal import Portal, PortalRegistry, ResultStream, RowStream, resolve_formats
from sql.common.result import PreparedStatement, Result, ResultColumn
from storage.errors import DbError, InvalidCursorName, InvalidSqlStatementName, ProtocolViolation


def batches(*sizes: int):
    start = 0
    for size in sizes:
        yield pa.record_batch([pa.array(range(start, start + size), pa.int32())], ["n"])
        start += size


@pytest.mark.parametrize(
    ("codes", "count", "expected"),
    [((), 3, (0, 0, 0)), ((1,), 2, (1, 1)), ((0, 1), 2, (0, 1)), ((), 0, ())],
)
def test_format_codes_expand_to_one_per_column(codes, count, expected):
    assert resolve_formats(codes, count, "result") == expected


@pytest.mark.parametrize(("codes", "count"), [((0, 1), 3), ((2,), 1)])
def test_bad_format_codes_are_a_protocol_violation(codes, count):
    with pytest.raises(ProtocolViolation):
        resolve_formats(codes, count, "result")


def test_row_stream_slices_batches_and_keeps_the_rest():
    stream = RowStream(batches(3, 2))
    taken = []
    while (batch := stream.take(2)) is not None:
        taken.append(batch.column(0).to_pylist())
    assert taken == [[0, 1], [2], [3, 4]]
    assert stream.is_exhausted


def test_row_stream_skips_empty_batches():
    stream = RowStream(batches(0, 1, 0))
    assert stream.take(5).num_rows == 1  # type: ignore[union-attr]
    assert stream.take(5) is None


def test_closing_a_row_stream_closes_its_generator():
    closed = []

    def source():
        try:
            yield from batches(1, 1)
        finally:
            closed.append(True)

    stream = RowStream(source())
    stream.take(1)
    stream.close()
    assert closed == [True]


def test_result_stream_fetch_counts_rows_and_spots_the_end():
    result = Result(columns=(ResultColumn("n", 23),), batches=batches(2, 2, 1))
    stream = ResultStream(result, (0,))
    first = stream.fetch(3)
    assert (first.rows, first.is_exhausted) == (3, False)
    assert first.data.count(b"D\x00\x00\x00") == 3
    rest = stream.fetch(10)
    assert (rest.rows, rest.is_exhausted) == (2, True)


def statement(name: str = "") -> PreparedStatement:
    return PreparedStatement(f"select {name}", (), (ResultColumn("n", 23),))


def test_named_statement_names_are_unique_and_unnamed_is_replaced():
    registry = PortalRegistry()
    registry.add_statement("", statement())
    registry.add_statement("", statement("again"))
    registry.add_statement("s", statement())
    with pytest.raises(DbError) as caught:
        registry.add_statement("s", statement())
    assert caught.value.sqlstate == "42P05"


def test_unknown_names_raise_26000_and_34000():
    registry = PortalRegistry()
    with pytest.raises(InvalidSqlStatementName):
        registry.statement("x")
    with pytest.raises(InvalidCursorName):
        registry.portal("x")


def test_closing_a_statement_closes_its_portals():
    registry = PortalRegistry()
    stmt = statement()
    registry.add_statement("s", stmt)
    registry.add_portal(Portal("p", stmt, [], (0,)))
    registry.add_portal(Portal("q", statement("other"), [], (0,)))
    assert [p.name for p in registry.close_statement("s")] == ["p"]
    assert list(registry.portals) == ["q"]


def test_sync_drops_only_the_unnamed_portal_inside_a_block():
    registry = PortalRegistry()
    for name in ("", "c1"):
        registry.add_portal(Portal(name, statement(), [], (0,)))
    assert [p.name for p in registry.end_of_transaction("T")] == [""]
    assert [p.name for p in registry.end_of_transaction("I")] == ["c1"]


def test_a_portal_name_in_use_is_refused_with_42p03():
    registry = PortalRegistry()
    registry.add_portal(Portal("c", statement(), [], (0,)))
    with pytest.raises(DbError) as caught:
        registry.add_portal(Portal("c", statement(), [], (0,)))
    assert caught.value.sqlstate == "42P03"
