"""Unit tests for server.copy_protocol: CopyData framing, COPY TO formatting, the CopyIn exchange."""

from __future__ import annotations

import asyncio

import pyarrow as pa
import pytest

from server import codec
from server import copy_protocol as server_copy
from server import messages as m
from sql.common.result import Result, ResultColumn
from sql.frontend import parser
from storage.errors import ProtocolViolation

INT4, TEXT = 23, 25


def decode(data: bytes) -> list[m.BackendMessage]:
    decoder = codec.BackendDecoder()
    decoder.feed(data)
    return list(decoder)


def options(sql: str):
    (statement,) = parser.parse(sql)
    return statement.ast.options


def stream(sql: str, ids, names) -> server_copy.CopyOutStream:
    batch = pa.RecordBatch.from_arrays([pa.array(ids, pa.int32()), pa.array(names)], ["id", "n"])
    result = Result(
        columns=(ResultColumn("id", INT4), ResultColumn("n", TEXT)),
        batches=iter([batch]),
        copy_out=options(sql),
    )
    return server_copy.CopyOutStream(result)


def copy_data(sql: str, ids, names) -> list[bytes]:
    fetched = stream(sql, ids, names).fetch(1000)
    messages = decode(fetched.data)
    assert messages[-1] == m.CopyDone()
    return [msg.data for msg in messages[:-1]]


def test_frame_copy_data_one_message_per_line():
    lines = pa.array(["a\n", "", "ccc\n"])
    assert decode(server_copy.frame_copy_data(lines)) == [
        m.CopyData(b"a\n"), m.CopyData(b""), m.CopyData(b"ccc\n"),
    ]  # fmt: skip


def test_text_rows_escape_and_mark_nulls():
    rows = copy_data("copy t to stdout", [1, 2, 3], ["a\tb", None, "back\\slash\nnl"])
    assert rows == [b"1\ta\\tb\n", b"2\t\\N\n", b"3\tback\\\\slash\\nnl\n"]


def test_csv_quotes_only_what_needs_it_and_writes_a_header():
    rows = copy_data(
        "copy t to stdout (format csv, header)", [1, 2, 3, 4], ['say "x"', "a,b", "", None]
    )
    assert rows == [b"id,n\n", b'1,"say ""x"""\n', b'2,"a,b"\n', b'3,""\n', b"4,\n"]


def test_csv_force_quote_escape_and_null():
    rows = copy_data(
        "copy t to stdout (format csv, force_quote (n), escape '!', null 'NULL')",
        [1, 2],
        ['q"!', None],
    )
    assert rows == [b'1,"q!"!!"\n', b"2,NULL\n"]


def test_binary_starts_with_the_signature_and_ends_with_the_trailer():
    rows = copy_data("copy t to stdout (format binary)", [7], ["x"])
    assert rows[0].startswith(server_copy.BINARY_SIGNATURE)
    tuple_bytes = rows[0][len(server_copy.BINARY_SIGNATURE) :]
    assert tuple_bytes == b"\x00\x02" + b"\x00\x00\x00\x04\x00\x00\x00\x07" + b"\x00\x00\x00\x01x"
    assert rows[1] == b"\xff\xff"


def test_empty_binary_copy_is_signature_and_trailer_in_one_message():
    assert copy_data("copy t to stdout (format binary)", [], []) == [
        server_copy.BINARY_SIGNATURE + b"\xff\xff"
    ]


def test_stream_tag_and_response():
    out = stream("copy t to stdout (format csv)", [1], ["a"])
    assert decode(out.response()) == [m.CopyOutResponse(0, (0, 0))]
    assert out.command_tag(5) == "COPY 5"


class Sink:
    def __init__(self) -> None:
        self.fed: list[bytes] = []
        self.aborted = False

    def feed(self, data: bytes) -> None:
        self.fed.append(data)

    def finish(self) -> str:
        lines = sum(x.count(b"\n") for x in self.fed)
        return f"COPY {lines}"

    def fail(self, message: str) -> None:
        raise RuntimeError(message)

    def abort(self) -> None:
        self.aborted = True


def exchange(messages):
    queue = list(messages)
    sink = Sink()

    async def receive():
        return queue.pop(0) if queue else None

    async def run(fn, *args):
        return fn(*args)

    async def go():
        return await server_copy.copy_in(sink, receive, run)

    return sink, go


def test_copy_in_feeds_data_and_ignores_flush_and_sync():
    sink, go = exchange([m.CopyData(b"1\n"), m.Flush(), m.CopyData(b"2\n"), m.Sync(), m.CopyDone()])
    assert asyncio.run(go()) == "COPY 2"
    assert b"".join(sink.fed) == b"1\n2\n"


def test_copy_in_other_messages_abort_with_protocol_violation():
    sink, go = exchange([m.CopyData(b"1\n"), m.Query("select 1")])
    with pytest.raises(ProtocolViolation, match="during COPY from stdin"):
        asyncio.run(go())
    assert sink.aborted


def test_copy_in_lost_client_aborts():
    sink, go = exchange([m.CopyData(b"1\n")])
    with pytest.raises(ConnectionError):
        asyncio.run(go())
    assert sink.aborted


def test_copy_in_response_formats():
    class Binary:
        options = options("copy t from stdin (format csv)")
        column_count = 3

    assert server_copy.copy_in_response(Binary) == m.CopyInResponse(0, (0, 0, 0))
