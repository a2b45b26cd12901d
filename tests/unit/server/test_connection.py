"""Message sequences of one connection, driven through in-memory streams and a fake session.

No sockets and no threads: the client's bytes are fed to a StreamReader up
front (so everything is pipelined), statements run on an inline executor,
and the server's bytes are decoded back into messages.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor, Future
from typing import Any

import pytest

from server import codec
from server import messages as m
from server.auth import TrustAuthenticator
from server.client_stream import ClientStream
from server.config import Config
from server.connection import Connection
from tests.unit.server.fake_sql import INT4, TEXT, FakeDatabase


class InlineExecutor(Executor):
    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future


class CountingExecutor(InlineExecutor):
    """Runs calls in place, counting them: each is a hop to the statement thread."""

    def __init__(self) -> None:
        self.calls = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.calls += 1
        return super().submit(fn, *args, **kwargs)


class MemoryTransport:
    """What ``Connection.flush`` asks of a transport: everything written is already sent."""

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0


class MemoryWriter:
    def __init__(self) -> None:
        self.data = bytearray()
        self.writes = 0
        self.closed = False
        self.transport = MemoryTransport()

    def write(self, data: bytes) -> None:
        self.data += data
        self.writes += 1

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    async def wait_closed(self) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


class LoopbackTransport(asyncio.Transport):
    """A transport that keeps what the server writes; closing it ends the connection."""

    def __init__(self, stream: ClientStream) -> None:
        super().__init__()
        self.stream = stream
        self.data = bytearray()
        self.writes = 0
        self.closed = False

    def write(self, data: Any) -> None:
        self.data += data
        self.writes += 1

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            asyncio.get_running_loop().call_soon(self.stream.connection_lost, None)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def connected(data: bytes, config: Config) -> tuple[ClientStream, LoopbackTransport]:
    """A client stream that has received ``data`` and then the end of the stream."""
    stream = ClientStream(config.max_message_size_bytes)
    transport = LoopbackTransport(stream)
    stream.connection_made(transport)
    stream.data_received(data)
    stream.eof_received()
    return stream, transport


STARTUP = m.StartupMessage(parameters={"user": "alice", "database": "nyala"})


def converse(
    *client: m.FrontendMessage,
    database: FakeDatabase | None = None,
    raw: bytes = b"",
    executor: Executor | None = None,
    **config: Any,
) -> tuple[bytes, FakeDatabase]:
    """Send the messages (and raw bytes) to a new connection; return what it wrote."""
    database = database or FakeDatabase()
    cancels: list[tuple[int, int]] = []

    async def run() -> bytes:
        stream, transport = connected(
            b"".join(codec.encode_frontend(msg) for msg in client) + raw, Config(**config)
        )
        connection = Connection(
            stream,
            database=database,  # type: ignore[arg-type]
            config=Config(**config),
            executor=executor or InlineExecutor(),
            authenticator=TrustAuthenticator(),
            process_id=42,
            secret_key=7,
            on_cancel_request=lambda pid, key: cancels.append((pid, key)),
        )
        await connection.run()
        assert transport.closed
        return bytes(transport.data)

    output = asyncio.run(run())
    database.cancels = cancels  # type: ignore[attr-defined]
    return output, database


def backend(data: bytes) -> list[m.BackendMessage]:
    decoder = codec.BackendDecoder()
    decoder.feed(data)
    return list(decoder)


def after_startup(*client: m.FrontendMessage, **config: Any) -> list[m.BackendMessage]:
    output, _ = converse(STARTUP, *client, m.Terminate(), **config)
    messages = backend(output)
    first_ready = next(i for i, msg in enumerate(messages) if isinstance(msg, m.ReadyForQuery))
    return messages[first_ready + 1 :]


def kinds(messages: list[m.BackendMessage]) -> str:
    return " ".join(type(msg).TYPE.decode() for msg in messages)


def test_startup_sends_ok_parameters_key_data_and_ready():
    messages = backend(converse(STARTUP, m.Terminate())[0])
    assert isinstance(messages[0], m.AuthenticationOk)
    status = {msg.name: msg.value for msg in messages if isinstance(msg, m.ParameterStatus)}
    assert status["server_version"] == "15.0 (nyala 0.1.0)"
    assert status["session_authorization"] == "alice"
    assert messages[-2] == m.BackendKeyData(42, 7)
    assert messages[-1] == m.ReadyForQuery("I")


def test_ssl_and_gssenc_requests_are_refused_with_n_then_startup_continues():
    output, _ = converse(m.SSLRequest(), m.GSSENCRequest(), STARTUP, m.Terminate())
    assert output[:2] == b"NN"
    assert isinstance(backend(output[2:])[-1], m.ReadyForQuery)


def test_cancel_request_is_handed_to_the_server_and_the_connection_closes():
    output, database = converse(m.SSLRequest(), m.CancelRequest(1234, 5678))
    assert output == b"N"
    assert database.cancels == [(1234, 5678)]  # type: ignore[attr-defined]
    assert database.sessions == []


def test_wrong_database_is_fatal_3d000():
    startup = m.StartupMessage(parameters={"user": "alice", "database": "other"})
    messages = backend(converse(startup, m.Query("select rows 1"))[0])
    error = messages[-1]
    assert isinstance(error, m.ErrorResponse)
    assert (error.get("S"), error.get("C")) == ("FATAL", "3D000")


def test_protocol_2_is_refused():
    output, _ = converse(m.StartupMessage(protocol_version=2 << 16, parameters={"user": "a"}))
    error = backend(output)[-1]
    assert isinstance(error, m.ErrorResponse) and error.get("C") == "0A000"


def test_newer_minor_version_and_pq_options_get_negotiate_protocol_version():
    startup = m.StartupMessage(
        protocol_version=(3 << 16) | 2, parameters={"user": "nyala", "_pq_.x": "1"}
    )
    messages = backend(converse(startup, m.Terminate())[0])
    assert messages[0] == m.NegotiateProtocolVersion(0, ("_pq_.x",))
    assert messages[-1] == m.ReadyForQuery("I")


def test_multi_statement_query_answers_each_statement_then_ready():
    messages = after_startup(m.Query("select rows 1; select rows 2"))
    assert kinds(messages) == "T D C T D D C Z"
    assert messages[2] == m.CommandComplete("SELECT 1")
    assert messages[6] == m.CommandComplete("SELECT 2")


def test_empty_query_gets_empty_query_response():
    assert kinds(after_startup(m.Query("  "))) == "I Z"


def test_query_stops_at_first_error():
    messages = after_startup(m.Query("insert; fail; insert"))
    assert kinds(messages) == "C E Z"
    assert messages[1].get("C") == "22012"  # type: ignore[union-attr]


def test_ready_for_query_reports_the_transaction_status():
    messages = after_startup(m.Query("begin"), m.Query("fail"), m.Query("rollback"))
    statuses = [msg.status for msg in messages if isinstance(msg, m.ReadyForQuery)]
    assert statuses == ["T", "E", "I"]


def test_notice_precedes_command_complete():
    messages = after_startup(m.Query("begin; begin"))
    assert kinds(messages) == "C N C Z"
    assert messages[1].get("S") == "WARNING"  # type: ignore[union-attr]
    assert messages[1].get("C") == "25001"  # type: ignore[union-attr]


def test_changed_reported_parameter_is_sent_before_ready_for_query():
    messages = after_startup(m.Query("set app psql"))
    assert kinds(messages) == "C S Z"
    assert messages[1] == m.ParameterStatus("application_name", "psql")


def test_extended_query_round_trip():
    messages = after_startup(
        m.Parse("", "select $1, $2::text", ()),
        m.Bind("", "", (0, 1), (b"5", b"hi"), (0,)),
        m.Describe("P", ""),
        m.Execute("", 0),
        m.Sync(),
    )
    assert kinds(messages) == "1 2 T D C Z"
    assert messages[3] == m.DataRow((b"5", b"hi"))
    assert messages[4] == m.CommandComplete("SELECT 1")


def test_describe_statement_gives_parameter_types_and_does_not_execute():
    output, database = converse(
        STARTUP, m.Parse("s1", "select $1", (0,)), m.Describe("S", "s1"), m.Sync(), m.Terminate()
    )
    messages = backend(output)
    assert isinstance(messages[-4], m.ParseComplete)
    assert messages[-3] == m.ParameterDescription((INT4,))
    assert isinstance(messages[-2], m.RowDescription)
    assert database.sessions[0].executed == []


def test_describe_of_a_statement_without_rows_is_no_data():
    messages = after_startup(m.Parse("", "insert", ()), m.Describe("S", ""), m.Sync())
    assert kinds(messages) == "1 t n Z"


def test_binary_result_format_per_column():
    messages = after_startup(
        m.Parse("", "select $1, $2::text", (INT4, TEXT)),
        m.Bind("", "", (), (b"7", b"x"), (1, 0)),
        m.Describe("P", ""),
        m.Execute("", 0),
        m.Sync(),
    )
    description = messages[2]
    assert isinstance(description, m.RowDescription)
    assert [f.format_code for f in description.fields] == [1, 0]
    assert [f.type_size for f in description.fields] == [4, -1]
    assert messages[3] == m.DataRow((b"\x00\x00\x00\x07", b"x"))


def test_execute_with_max_rows_suspends_and_resumes_the_same_stream():
    messages = after_startup(
        m.Parse("", "select rows 5", ()),
        m.Bind("", "", (), (), ()),
        m.Execute("", 2),
        m.Execute("", 2),
        m.Execute("", 2),
        m.Sync(),
    )
    assert kinds(messages) == "1 2 D D s D D s D C Z"
    values = [msg.values[0] for msg in messages if isinstance(msg, m.DataRow)]
    assert values == [b"1", b"2", b"3", b"4", b"5"]
    assert messages[-2] == m.CommandComplete("SELECT 1")


def test_max_rows_splitting_a_batch_keeps_the_remainder():
    messages = after_startup(
        m.Parse("", "select rows 4", ()),
        m.Bind("", "", (), (), ()),
        m.Execute("", 3),
        m.Execute("", 0),
        m.Sync(),
    )
    values = [msg.values[0] for msg in messages if isinstance(msg, m.DataRow)]
    assert values == [b"1", b"2", b"3", b"4"]
    assert kinds(messages) == "1 2 D D D s D C Z"


def test_small_chunks_still_send_every_row():
    messages = after_startup(m.Query("select rows 5"), result_chunk_rows=1, write_buffer_bytes=1)
    assert kinds(messages) == "T D D D D D C Z"


def test_named_portal_survives_sync_inside_a_transaction_block():
    messages = after_startup(
        m.Query("begin"),
        m.Parse("", "select rows 3", ()),
        m.Bind("c1", "", (), (), ()),
        m.Execute("c1", 2),
        m.Sync(),
        m.Execute("c1", 2),
        m.Close("P", "c1"),
        m.Sync(),
    )
    assert kinds(messages) == "C Z 1 2 D D s Z D C 3 Z"


def test_portals_are_dropped_at_sync_outside_a_transaction_block():
    messages = after_startup(
        m.Parse("", "select rows 3", ()),
        m.Bind("c1", "", (), (), ()),
        m.Execute("c1", 1),
        m.Sync(),
        m.Execute("c1", 1),
        m.Sync(),
    )
    assert kinds(messages) == "1 2 D s Z E Z"
    assert messages[5].get("C") == "34000"  # type: ignore[union-attr]


def test_error_in_pipeline_skips_to_sync():
    messages = after_startup(
        m.Parse("", "fail", ()),
        m.Bind("", "", (), (), ()),
        m.Execute("", 0),
        m.Parse("", "insert", ()),
        m.Bind("", "", (), (), ()),
        m.Execute("", 0),
        m.Sync(),
        m.Parse("", "insert", ()),
        m.Bind("", "", (), (), ()),
        m.Execute("", 0),
        m.Sync(),
    )
    assert kinds(messages) == "1 2 E Z 1 2 C Z"


def test_ready_for_query_after_pipeline_error_is_e_inside_a_block():
    messages = after_startup(
        m.Query("begin"),
        m.Parse("", "fail", ()),
        m.Bind("", "", (), (), ()),
        m.Execute("", 0),
        m.Sync(),
    )
    assert [msg.status for msg in messages if isinstance(msg, m.ReadyForQuery)] == ["T", "E"]


def test_bind_with_the_wrong_parameter_count_is_a_protocol_violation():
    messages = after_startup(
        m.Parse("", "select $1", ()), m.Bind("", "", (), (b"1", b"2"), ()), m.Sync()
    )
    assert kinds(messages) == "1 E Z"
    assert messages[1].get("C") == "08P01"  # type: ignore[union-attr]


def test_bad_parameter_text_is_22p02():
    messages = after_startup(
        m.Parse("", "select $1", (INT4,)), m.Bind("", "", (), (b"x",), ()), m.Sync()
    )
    assert messages[1].get("C") == "22P02"  # type: ignore[union-attr]


def test_named_statement_cannot_be_parsed_twice_but_unnamed_is_replaced():
    messages = after_startup(
        m.Parse("s", "insert", ()),
        m.Parse("s", "insert", ()),
        m.Sync(),
        m.Parse("", "insert", ()),
        m.Parse("", "insert", ()),
        m.Close("S", "s"),
        m.Parse("s", "insert", ()),
        m.Sync(),
    )
    assert kinds(messages) == "1 E Z 1 1 3 1 Z"
    assert messages[1].get("C") == "42P05"  # type: ignore[union-attr]


def test_unknown_statement_and_portal_names():
    messages = after_startup(
        m.Bind("", "nope", (), (), ()),
        m.Sync(),
        m.Execute("nope", 0),
        m.Sync(),
        m.Describe("P", "x"),
        m.Sync(),
    )
    codes = [msg.get("C") for msg in messages if isinstance(msg, m.ErrorResponse)]
    assert codes == ["26000", "34000", "34000"]


def test_empty_query_in_extended_protocol():
    messages = after_startup(
        m.Parse("", "", ()),
        m.Bind("", "", (), (), ()),
        m.Describe("P", ""),
        m.Execute("", 0),
        m.Sync(),
    )
    assert kinds(messages) == "1 2 n I Z"


def test_flush_sends_pending_output_without_ready_for_query():
    output, _ = converse(STARTUP, m.Parse("", "insert", ()), m.Flush(), m.Terminate())
    assert isinstance(backend(output)[-1], m.ParseComplete)


def test_unknown_message_type_is_08p01_and_the_connection_survives():
    messages = after_startup(m.UnknownMessage(b"y", b""), m.Query("insert"))
    assert kinds(messages) == "E Z C Z"
    assert messages[0].get("C") == "08P01"  # type: ignore[union-attr]


def test_function_call_is_refused_as_not_supported():
    messages = after_startup(m.UnknownMessage(b"F", b"\x00"))
    assert messages[0].get("C") == "0A000"  # type: ignore[union-attr]


def test_copy_messages_outside_copy_are_ignored():
    assert kinds(after_startup(m.CopyData(b"x"), m.CopyDone(), m.Query("insert"))) == "C Z"


def test_oversized_message_is_fatal_before_its_body_arrives():
    header = b"Q" + (10_000).to_bytes(4, "big")
    output, _ = converse(STARTUP, raw=header, max_message_size_bytes=1000)
    error = backend(output)[-1]
    assert isinstance(error, m.ErrorResponse)
    assert (error.get("S"), error.get("C")) == ("FATAL", "08P01")


def test_output_is_coalesced_until_the_sync_point():
    writer_counts = []

    async def run() -> None:
        messages = [STARTUP] + [m.Query("insert")] * 3 + [m.Terminate()]
        stream, transport = connected(
            b"".join(codec.encode_frontend(msg) for msg in messages), Config()
        )
        connection = Connection(
            stream,
            database=FakeDatabase(),
            config=Config(),  # type: ignore[arg-type]
            executor=InlineExecutor(),
            authenticator=TrustAuthenticator(),
            process_id=1,
            secret_key=1,
            on_cancel_request=lambda pid, key: None,
        )
        await connection.run()
        writer_counts.append(transport.writes)

    asyncio.run(run())
    assert writer_counts == [4]


def test_session_is_closed_when_the_client_leaves():
    _, database = converse(STARTUP)
    assert database.sessions[0].closed


@pytest.mark.parametrize("status", ["begin", "commit"])
def test_simple_query_drops_the_unnamed_statement(status):
    messages = after_startup(
        m.Parse("", "insert", ()), m.Sync(), m.Query(status), m.Bind("", "", (), (), ()), m.Sync()
    )
    assert messages[-2].get("C") == "26000"  # type: ignore[union-attr]


def test_malformed_query_is_an_error_followed_by_ready_for_query():
    messages = after_startup(m.UnknownMessage(b"Q", b"\xff\xfe\x00"), m.Query("insert"))
    assert kinds(messages) == "E Z C Z"
    assert messages[0].get("C") == "22021"  # type: ignore[union-attr]


def test_malformed_extended_message_skips_to_sync():
    messages = after_startup(
        m.UnknownMessage(b"E", b"no terminator"), m.Parse("", "insert", ()), m.Sync()
    )
    assert kinds(messages) == "E Z"
    assert messages[0].get("C") == "08P01"  # type: ignore[union-attr]


def test_password_message_after_startup_is_a_protocol_violation():
    messages = after_startup(m.PasswordMessage(b"secret\x00"))
    assert kinds(messages) == "E Z"
    assert messages[0].get("C") == "08P01"  # type: ignore[union-attr]


def test_a_named_portal_outlives_a_new_unnamed_statement():
    messages = after_startup(
        m.Query("begin"),
        m.Parse("", "select rows 3", ()),
        m.Bind("c1", "", (), (), ()),
        m.Execute("c1", 1),
        m.Parse("", "insert", ()),
        m.Bind("", "", (), (), ()),
        m.Execute("", 0),
        m.Execute("c1", 0),
        m.Sync(),
    )
    assert kinds(messages) == "C Z 1 2 D s 1 2 C D D C Z"


def test_a_short_read_runs_on_the_event_loop_until_it_stops_being_short():
    """The first rows of an inline read come without a thread hop; where the read says its
    rows stop being short (ReadPause), the rest is pulled on the statement thread."""
    executor = CountingExecutor()
    database = FakeDatabase()
    original = database.session

    def session(*args: Any, **kwargs: Any) -> Any:
        made = original(*args, **kwargs)
        made.hops = executor
        return made

    database.session = session  # type: ignore[method-assign]
    output, _ = converse(
        STARTUP,
        m.Parse("", "select short rows 5", ()),
        m.Bind("", "", (), (), ()),
        m.Execute("", 0),
        m.Sync(),
        m.Terminate(),
        database=database,
        executor=executor,
    )
    messages = backend(output)
    first_ready = next(i for i, msg in enumerate(messages) if isinstance(msg, m.ReadyForQuery))
    answer = messages[first_ready + 1 :]
    assert kinds(answer) == "1 2 D D D D D C Z"
    assert answer[-3:-1] == [m.DataRow((b"5",)), m.CommandComplete("SELECT 5")]
    first, second, third = database.sessions[0].pulls
    assert second == first + 1 == third  # one hop, after the first (short) batch


def test_portals_of_writes_close_without_a_thread_hop():
    """A write's portal has no rows to abandon: dropping it (next Bind, Sync) costs no hop;
    only Parse and the two Executes go to the statement thread."""
    executor = CountingExecutor()
    output, _ = converse(
        STARTUP,
        m.Parse("w", "insert", ()),
        m.Bind("", "w", (), (), ()),
        m.Execute("", 0),
        m.Bind("", "w", (), (), ()),
        m.Execute("", 0),
        m.Sync(),
        m.Terminate(),
        executor=executor,
    )
    messages = backend(output)
    first_ready = next(i for i, msg in enumerate(messages) if isinstance(msg, m.ReadyForQuery))
    assert kinds(messages[first_ready + 1 :]) == "1 2 C 2 C Z"
    assert executor.calls == 1 + 1 + 2 + 1  # session, Parse, two Executes, closing the session


@pytest.mark.parametrize("rows", [0, 1, 2, 3, 5])
def test_a_short_read_taken_whole_answers_as_the_row_by_row_path(rows):
    """An Execute of a short read without a row limit takes its rows whole on the event loop
    (``_advance_portal`` at once); with a row limit above its row count it goes ``_pump_rows``' way, and
    a statement not run inline goes to the thread: all three answer alike, and rows past a
    ReadPause still go on the thread."""

    def answer(text: str, max_rows: int) -> list[m.BackendMessage]:
        database = FakeDatabase()
        output, _ = converse(
            STARTUP,
            m.Parse("", text, ()),
            m.Bind("", "", (), (), ()),
            m.Describe("P", ""),
            m.Execute("", max_rows),
            m.Sync(),
            m.Terminate(),
            database=database,
        )
        messages = backend(output)
        first_ready = next(i for i, msg in enumerate(messages) if isinstance(msg, m.ReadyForQuery))
        return messages[first_ready + 1 :]

    whole = answer(f"select short rows {rows}", 0)
    assert whole == answer(f"select short rows {rows}", 1000)
    assert whole == answer(f"select rows {rows}", 0)
    assert kinds(whole) == "1 2 T " + "D " * rows + "C Z"
    assert whole[-2] == m.CommandComplete(f"SELECT {rows}")
