"""A pipelined run whose rows nyala frames by their bytes (``server.batches.RunTaker``)
answers as PostgreSQL does, message by message, when one of its rows is malformed or
breaks the pattern: the rows before complete, that row's ErrorResponse (or its own
answer) follows, and nothing of an implicit transaction is left behind.

Runs of 6 rows frame their values a row at a time, runs of 40 and 3,000 a value position
at a time; the 3,000-row run arrives in two sends, so it is framed across reads.
"""

from __future__ import annotations

import dataclasses
import struct
import time

import pytest

from server import codec
from server import messages as m
from tests.support.differential import both
from tests.support.raw_client import RawClient, errors, kinds

pytestmark = pytest.mark.e2e

_SQL = "insert into framed_rows values ($1, $2, $3)"
_FORMATS = (0, 1, 0)  # k as text, v as binary int4, t as text


def _row(k: int, t: bytes | None = b"x") -> m.Bind:
    return m.Bind("", "ins", _FORMATS, (str(k).encode(), struct.pack("!i", k * 2), t), ())


def _defect(kind: str, k: int) -> list[m.FrontendMessage]:
    """Row ``k``'s messages, spoilt as ``kind`` says."""
    execute: m.FrontendMessage = m.Execute("", 0)
    if kind == "wrong-count":
        bind: m.FrontendMessage = m.Bind("", "ins", _FORMATS, (str(k).encode(), b"\0\0\0\1"), ())
    elif kind == "bad-binary":
        bind = m.Bind("", "ins", _FORMATS, (str(k).encode(), b"\0\0\0\0\1", b"x"), ())
    elif kind == "value-overruns":
        good = _encoded_body(_row(k))
        # the third value claims 200 bytes, more than its message holds
        bind = m.UnknownMessage(b"B", good[:-7] + struct.pack("!i", 200) + b"x" + good[-2:])
    elif kind == "empty-bind":
        bind = m.UnknownMessage(b"B", b"")  # a length of 4: no body at all
    elif kind == "bad-utf8":
        bind = _row(k, b"\xff\xfe")
    elif kind == "null":
        bind = m.Bind("", "ins", _FORMATS, (str(k).encode(), None, None), ())
    elif kind == "other-statement":
        bind = m.Bind("", "other", (), (str(k).encode(),), ())
    elif kind == "max-rows":
        bind, execute = _row(k), m.Execute("", 1)
    elif kind == "named-portal":
        return [dataclasses.replace(_row(k), portal="p"), m.Execute("p", 0), m.Close("P", "p")]
    else:
        raise AssertionError(kind)
    return [bind, execute]


def _encoded_body(bind: m.Bind) -> bytes:
    return codec.encode_frontend(bind)[5:]


def _run(client: RawClient, rows: int, kind: str | None, at: int, *, begin: bool) -> tuple:
    client.query("drop table if exists framed_rows")
    client.query("create table framed_rows (k int primary key, v int, t text)")
    client.send(
        m.Parse("ins", _SQL, ()),
        m.Parse("other", "insert into framed_rows values ($1, -1, 'other')", ()),
        m.Sync(),
    )
    client.until_ready()
    if begin:
        client.query("begin")
    messages: list[m.FrontendMessage] = []
    for k in range(rows):
        messages += (
            _defect(kind, k) if kind is not None and k == at else [_row(k), m.Execute("", 0)]
        )
    half = len(messages) // 2
    if rows > 1000:
        client.send(*messages[:half])
        time.sleep(0.2)
        client.send(*messages[half:], m.Sync())
    else:
        client.send(*messages, m.Sync())
    answer = client.until_ready()
    if begin:
        client.query("commit")
    table = client.query("select count(*), sum(k), sum(v), count(t) from framed_rows")
    client.query("drop table framed_rows")
    client.send(m.Close("S", "ins"), m.Close("S", "other"), m.Sync())
    client.until_ready()
    return (
        kinds(answer),
        [msg.tag for msg in answer if isinstance(msg, m.CommandComplete)],
        errors(answer),
        [msg.values for msg in table if isinstance(msg, m.DataRow)],
    )


_KINDS = [
    None, "wrong-count", "bad-binary", "value-overruns", "empty-bind", "bad-utf8", "null",
    "other-statement", "max-rows", "named-portal",
]  # fmt: skip


@pytest.mark.parametrize("rows", [6, 40, 3000])
@pytest.mark.parametrize("kind", _KINDS, ids=[str(kind) for kind in _KINDS])
def test_a_spoilt_row_of_a_framed_run_answers_as_postgresql(
    nyala_server, postgres_server, rows, kind
):
    places = [0] if kind is None else [0, rows // 2, rows - 1]

    def answers(server) -> list[tuple]:
        client = RawClient(server.host, server.port)
        client.startup()
        try:
            return [_run(client, rows, kind, at, begin=begin) for at in places for begin in (0, 1)]
        finally:
            client.close()

    nyala = both(answers, nyala_server, postgres_server)
    if kind is None:
        assert nyala[0][3] == [(str(rows).encode(), str(rows * (rows - 1) // 2).encode(),
                                str(rows * (rows - 1)).encode(), str(rows).encode())]  # fmt: skip
