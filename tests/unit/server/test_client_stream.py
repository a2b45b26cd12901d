"""A connection parked on its ClientStream: commands answered inside data_received, or handed
to the connection's task when they have to wait; reading paused and resumed."""

from __future__ import annotations

import asyncio
from typing import Any

from server import codec
from server import messages as m
from server.auth import TrustAuthenticator
from server.client_stream import READ_PAUSE_BYTES, ClientStream
from server.config import Config
from server.connection import Connection
from tests.unit.server.fake_sql import FakeDatabase
from tests.unit.server.test_connection import (
    STARTUP,
    InlineExecutor,
    LoopbackTransport,
    backend,
    kinds,
)


class PausingTransport(LoopbackTransport):
    """Records whether reading is paused."""

    is_reading_paused = False
    pauses = 0

    def pause_reading(self) -> None:
        self.is_reading_paused = True
        self.pauses += 1

    def resume_reading(self) -> None:
        self.is_reading_paused = False


def frames(*messages: m.FrontendMessage) -> bytes:
    return b"".join(codec.encode_frontend(message) for message in messages)


async def parked(
    database: FakeDatabase,
) -> tuple[ClientStream, PausingTransport, Connection, asyncio.Task[Any]]:
    """A connection past start-up with ``select short rows 1`` prepared as "s", parked."""
    stream = ClientStream(Config().max_message_size_bytes)
    transport = PausingTransport(stream)
    stream.connection_made(transport)
    connection = Connection(
        stream,
        database=database,  # type: ignore[arg-type]
        config=Config(),
        executor=InlineExecutor(),
        authenticator=TrustAuthenticator(),
        process_id=1,
        secret_key=1,
        on_cancel_request=lambda pid, key: None,
    )
    task = asyncio.get_running_loop().create_task(connection.run())
    stream.data_received(frames(STARTUP))
    stream.data_received(frames(m.Parse("s", "select short rows 1", ()), m.Sync()))
    for _ in range(20):
        await asyncio.sleep(0)
    transport.data.clear()
    return stream, transport, connection, task


SHORT_READ = frames(m.Bind("", "s", (), (), ()), m.Describe("P", ""), m.Execute("", 0), m.Sync())


def test_a_parked_connection_answers_a_short_read_inside_data_received():
    async def run() -> list[m.BackendMessage]:
        stream, transport, _, task = await parked(FakeDatabase())
        stream.data_received(SHORT_READ)
        answered = backend(bytes(transport.data))  # before the event loop ran again
        stream.eof_received()
        await task
        return answered

    assert kinds(asyncio.run(run())) == "2 T D C Z"


def test_a_command_that_waits_goes_on_in_the_connections_task():
    async def run() -> tuple[str, str]:
        stream, transport, _, task = await parked(FakeDatabase())
        stream.data_received(
            frames(m.Parse("", "select rows 3", ()), m.Bind("", "", (), (), ()))
            + frames(m.Execute("", 0), m.Sync())
            + SHORT_READ
        )
        at_once = kinds(backend(bytes(transport.data)))
        for _ in range(20):
            await asyncio.sleep(0)
        later = kinds(backend(bytes(transport.data)))
        stream.eof_received()
        await task
        return at_once, later

    at_once, later = asyncio.run(run())
    assert at_once == ""  # the Parse waits for the statement thread's answer
    assert later == "1 2 D D D C Z 2 T D C Z"


def test_reading_resumes_once_a_burst_past_the_pause_limit_is_answered():
    async def run() -> tuple[int, bool, int]:
        stream, transport, _, task = await parked(FakeDatabase())
        count = READ_PAUSE_BYTES // len(SHORT_READ) + 10
        stream.data_received(SHORT_READ * count)
        answered = sum(isinstance(msg, m.ReadyForQuery) for msg in backend(bytes(transport.data)))
        stream.eof_received()
        await task
        return answered - count, transport.is_reading_paused, transport.pauses

    missing, is_paused, pauses = asyncio.run(run())
    assert (missing, is_paused, pauses) == (0, False, 1)


def test_the_end_of_the_stream_while_parked_ends_the_connection_and_its_session():
    database = FakeDatabase()

    async def run() -> bool:
        stream, transport, _, task = await parked(database)
        stream.eof_received()
        await asyncio.wait_for(task, 5)
        return transport.closed

    assert asyncio.run(run())
    assert database.sessions[0].closed
