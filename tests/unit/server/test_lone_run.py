"""A lone Bind/[Describe]/Execute/Sync answered in one step (``server.lone_run``) answers
exactly as the message loop does: the same bytes fed whole (the one-step path) and a byte at
a time (each message through the loop) give the same output and leave the session alike."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from server import messages as m
from sql.common.result import PreparedStatement
from tests.unit.server.fake_sql import FakeDatabase, FakeSession
from tests.unit.server.test_client_stream import frames, parked
from tests.unit.server.test_connection import backend, kinds


class InlineSession(FakeSession):
    """Runs parameter selects, failures and writes on the event loop too; a write's Sync
    commits on the thread."""

    def runs_inline(self, stmt: PreparedStatement, params: Sequence[Any] = ()) -> bool:
        return stmt.sql.startswith(("select short rows", "select $", "fail", "insert", "begin"))

    @property
    def sync_writes(self) -> bool:  # type: ignore[override]
        return "insert" in self.executed[-1:]


class InlineDatabase(FakeDatabase):
    def session(self, *args: Any, **kwargs: Any) -> FakeSession:
        made = super().session(*args, **kwargs)
        session = InlineSession(made.user, made.startup)
        self.sessions[-1] = session
        return session


PREPARED = frames(
    m.Parse("one", "select $1", (23,)),
    m.Parse("two", "select $1::text, $2", (25, 23)),
    m.Parse("fail", "fail", ()),
    m.Parse("insert", "insert", ()),
    m.Parse("many", "select short rows 5", ()),
    m.Parse("begin", "begin", ()),
    m.Sync(),
)


def run(described: bool, bind: m.Bind) -> bytes:
    tail = (m.Describe("P", ""),) if described else ()
    return frames(bind, *tail, m.Execute("", 0), m.Sync())


RUNS = {
    "short read": run(True, m.Bind("", "s", (), (), ())),
    "no describe": run(False, m.Bind("", "s", (), (), ())),
    "text param": run(True, m.Bind("", "one", (), (b"42",), ())),
    "binary param and result": run(True, m.Bind("", "one", (1,), (b"\x00\x00\x00\x07",), (1,))),
    "two params, NULL": run(True, m.Bind("", "two", (0, 0), (b"x", None), ())),
    "bad param": run(True, m.Bind("", "one", (), (b"abc",), ())),
    "short binary param": run(True, m.Bind("", "one", (1,), (b"\x00",), ())),
    "too few params": run(True, m.Bind("", "two", (), (b"x",), ())),
    "missing statement": run(True, m.Bind("", "nope", (), (), ())),
    "bad result format": run(True, m.Bind("", "one", (), (b"1",), (7,))),
    "named portal": run(False, m.Bind("p", "one", (), (b"1",), ())),
    "error while running": run(True, m.Bind("", "fail", (), (), ())),
    "write committed at Sync": run(True, m.Bind("", "insert", (), (), ())),
    "rows stop being short": run(True, m.Bind("", "many", (), (), ())),
    "begin, then in a block": run(False, m.Bind("", "begin", (), (), ()))
    + run(True, m.Bind("", "fail", (), (), ()))
    + run(True, m.Bind("", "one", (), (b"1",), ())),
    "write, then a read and a write while it commits": run(True, m.Bind("", "insert", (), (), ()))
    + run(True, m.Bind("", "one", (), (b"3",), ()))
    + run(False, m.Bind("", "insert", (), (), ())),
    "two in a row": run(True, m.Bind("", "one", (), (b"1",), ()))
    + run(False, m.Bind("", "one", (), (b"2",), ())),
}


def answer(data: bytes, whole: bool) -> tuple[bytes, list[str], str]:
    async def go() -> tuple[bytes, list[str], str]:
        database = InlineDatabase()
        stream, transport, _, task = await parked(database)
        stream.data_received(PREPARED)
        for _ in range(20):
            await asyncio.sleep(0)
        transport.data.clear()
        chunks = [data] if whole else [data[i : i + 1] for i in range(len(data))]
        for chunk in chunks:
            stream.data_received(chunk)
        for _ in range(50):
            await asyncio.sleep(0)
        output = bytes(transport.data)
        stream.eof_received()
        await asyncio.wait_for(task, 5)
        session = database.sessions[0]
        return output, session.executed, session.transaction_status

    return asyncio.run(go())


@pytest.mark.parametrize("name", RUNS)
def test_a_lone_run_answers_as_the_message_loop(name):
    whole = answer(RUNS[name], whole=True)
    assert whole == answer(RUNS[name], whole=False)
    assert kinds(backend(whole[0])).endswith("Z")


def test_a_lone_short_read_is_answered_before_the_event_loop_runs_again():
    async def go() -> str:
        stream, transport, connection, task = await parked(InlineDatabase())
        stream.data_received(PREPARED)
        for _ in range(20):
            await asyncio.sleep(0)
        transport.data.clear()
        stream.data_received(RUNS["binary param and result"] + RUNS["two params, NULL"])
        answered = backend(bytes(transport.data))
        assert len(connection._lone_shapes) == 2  # both Binds read by their shapes
        stream.eof_received()
        await task
        return kinds(answered) + " | " + repr(answered[2]) + repr(answered[7])

    assert asyncio.run(go()) == (
        "2 T D C Z 2 T D C Z | DataRow(values=(b'\\x00\\x00\\x00\\x07',))"
        "DataRow(values=(b'x', None))"
    )
