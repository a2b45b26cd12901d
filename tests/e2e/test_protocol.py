"""Raw protocol edge cases against a real nyala server process, message by message.

A small socket client built on ``server.codec`` sends exact frontend
messages and reads the backend messages back, so these tests see what a
driver would hide: SSL/GSSENC refusals, the message sequence of a pipeline,
skip-to-Sync after an error, portal suspension, cancel, and the limits.

Tests taking ``connect`` run against nyala and against a throwaway
PostgreSQL 15, so every expected sequence is PostgreSQL's own; tests taking
``connect_nyala`` say where and why nyala differs.
"""

from __future__ import annotations

import time

import pytest

from server import messages as m
from tests.support.raw_client import RawClient, connector, errors, kinds

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["nyala", "postgres"])
def connect(request):
    make, clients = connector(request.getfixturevalue(f"{request.param}_server"))
    yield make
    for client in clients:
        client.close()


@pytest.fixture
def connect_nyala(nyala_server):
    make, clients = connector(nyala_server)
    yield make
    for client in clients:
        client.close()


def test_ssl_request_is_answered_n_then_startup_works_on_the_same_socket(connect):
    client = connect(startup=False)
    client.send(m.SSLRequest())
    assert client.read_byte() == b"N"
    messages = client.startup()
    assert isinstance(messages[0], m.AuthenticationOk)
    assert messages[-1] == m.ReadyForQuery("I")


def test_gssenc_request_is_answered_n(connect_nyala):
    # differs from PostgreSQL built with GSSAPI, which answers 'G' and expects a GSS handshake
    client = connect_nyala(startup=False)
    client.send(m.GSSENCRequest())
    assert client.read_byte() == b"N"
    client.send(m.SSLRequest())
    assert client.read_byte() == b"N"
    assert client.startup()[-1] == m.ReadyForQuery("I")


def test_startup_reports_the_parameters_drivers_check(connect):
    client = connect(startup=False)
    messages = client.startup()
    status = {msg.name: msg.value for msg in messages if isinstance(msg, m.ParameterStatus)}
    assert status["client_encoding"] == "UTF8"
    assert status["DateStyle"].startswith("ISO")
    assert status["integer_datetimes"] == "on"
    assert status["standard_conforming_strings"] == "on"
    assert status["server_version"].split()[0].replace(".", "").isdigit()
    assert client.key is not None


def test_unknown_database_is_fatal_3d000(connect):
    client = connect(startup=False)
    client.send(m.StartupMessage(parameters={"user": "nyala", "database": "nope"}))
    messages = []
    while (message := client.receive()) is not None:
        messages.append(message)
    assert isinstance(messages[-1], m.ErrorResponse)
    assert (messages[-1].get("S"), messages[-1].get("C")) == ("FATAL", "3D000")


def test_multi_statement_query_gives_one_result_per_statement(connect):
    assert kinds(connect().query("select 1; select 2")) == "T D C T D C Z"


def test_empty_query_gives_empty_query_response(connect):
    assert kinds(connect().query("")) == "I Z"


def test_query_stops_at_the_first_error(connect):
    messages = connect().query("select 1; select 1/0; select 3")
    assert kinds(messages) == "T D C E Z"
    assert errors(messages) == ["22012"]


def _failing_pipeline() -> list[m.FrontendMessage]:
    return [
        m.Parse("", "select 1/$1::int", ()),
        m.Bind("", "", (), (b"0",), ()),
        m.Execute("", 0),
        m.Parse("", "select 2", ()),
        m.Bind("", "", (), (), ()),
        m.Execute("", 0),
        m.Sync(),
    ]


def _skipped_to_sync(messages: list[m.BackendMessage]) -> bool:
    """The error is the last thing before ReadyForQuery and the second Parse was skipped.

    PostgreSQL folds ``1/$1`` while planning at Bind, nyala fails at Execute,
    so the error may come before or after BindComplete.
    """
    sequence = kinds(messages)
    return sequence.endswith("E Z") and sequence.count("1") == 1


def test_error_in_a_pipeline_skips_to_sync_and_reports_idle(connect):
    client = connect()
    client.send(*_failing_pipeline())
    messages = client.until_ready()
    assert _skipped_to_sync(messages)
    assert errors(messages) == ["22012"]
    assert messages[-1] == m.ReadyForQuery("I")
    assert kinds(client.query("select 3")) == "T D C Z"


def test_error_in_a_pipeline_inside_begin_reports_failed_transaction(connect):
    client = connect()
    assert client.query("begin")[-1] == m.ReadyForQuery("T")
    client.send(*_failing_pipeline())
    messages = client.until_ready()
    assert _skipped_to_sync(messages)
    assert messages[-1] == m.ReadyForQuery("E")
    assert errors(client.query("select 1")) == ["25P02"]
    assert client.query("rollback")[-1] == m.ReadyForQuery("I")


def test_describe_statement_infers_parameter_types_without_executing(connect):
    client = connect()
    client.send(
        m.Parse("s1", "select $1::int", (0,)),
        m.Describe("S", "s1"),
        m.Parse("s2", "select 1/0", ()),
        m.Describe("S", "s2"),
        m.Sync(),
    )
    messages = client.until_ready()
    assert kinds(messages) == "1 t T 1 t T Z"
    assert messages[1] == m.ParameterDescription((23,))
    description = messages[2]
    assert isinstance(description, m.RowDescription)
    assert (description.fields[0].type_oid, description.fields[0].type_size) == (23, 4)


def test_execute_with_max_rows_suspends_and_resumes(connect):
    client = connect()
    client.send(
        m.Parse("", "select x from (values (1), (2), (3), (4), (5)) as v(x)", ()),
        m.Bind("", "", (), (), (1,)),
        m.Execute("", 2),
        m.Execute("", 2),
        m.Execute("", 2),
        m.Sync(),
    )
    messages = client.until_ready()
    assert kinds(messages) == "1 2 D D s D D s D C Z"
    rows = [int.from_bytes(msg.values[0], "big") for msg in messages if isinstance(msg, m.DataRow)]
    assert rows == [1, 2, 3, 4, 5]
    assert messages[-2] == m.CommandComplete("SELECT 1")


def test_named_portal_survives_sync_inside_a_transaction(connect):
    client = connect()
    client.query("begin")
    client.send(
        m.Parse("", "select x from (values (1), (2), (3)) as v(x)", ()),
        m.Bind("c1", "", (), (), ()),
        m.Execute("c1", 2),
        m.Sync(),
    )
    assert kinds(client.until_ready()) == "1 2 D D s Z"
    client.send(m.Execute("c1", 2), m.Close("P", "c1"), m.Sync())
    assert kinds(client.until_ready()) == "D C 3 Z"
    client.query("commit")


def test_a_named_portal_outlives_a_new_unnamed_statement(connect):
    client = connect()
    client.query("begin")
    client.send(
        m.Parse("", "select x from (values (1), (2), (3)) as v(x)", ()),
        m.Bind("c1", "", (), (), ()),
        m.Execute("c1", 1),
        m.Parse("", "select 5", ()),
        m.Bind("", "", (), (), ()),
        m.Execute("", 0),
        m.Execute("c1", 0),
        m.Sync(),
    )
    assert kinds(client.until_ready()) == "1 2 D s 1 2 D C D D C Z"
    client.query("rollback")


def test_suspension_at_the_exact_end_needs_one_more_execute(connect):
    client = connect()
    client.send(
        m.Parse("", "select x from (values (1), (2), (3), (4)) as v(x)", ()),
        m.Bind("", "", (), (), ()),
        m.Execute("", 2),
        m.Execute("", 2),
        m.Execute("", 2),
        m.Execute("", 2),
        m.Sync(),
    )
    messages = client.until_ready()
    assert kinds(messages) == "1 2 D D s D D s C C Z"
    assert [msg.tag for msg in messages if isinstance(msg, m.CommandComplete)] == [
        "SELECT 0",
        "SELECT 0",
    ]


def test_names_parameter_counts_and_missing_objects(connect):
    client = connect()
    client.send(m.Parse("s1", "select 1", ()), m.Parse("s1", "select 1", ()), m.Sync())
    assert errors(client.until_ready()) == ["42P05"]
    client.send(m.Bind("", "s1", (), (b"1",), ()), m.Sync())
    assert errors(client.until_ready()) == ["08P01"]
    client.send(m.Parse("", "select $1::int", ()), m.Bind("", "", (), (b"x",), ()), m.Sync())
    assert errors(client.until_ready()) == ["22P02"]
    client.send(m.Close("S", "nope"), m.Close("P", "nope"), m.Sync())
    assert kinds(client.until_ready()) == "3 3 Z"
    client.send(m.Close("S", "s1"), m.Sync())
    client.until_ready()


def test_query_and_extended_messages_pipelined_back_to_back(connect):
    client = connect()
    client.send(m.Query("select 1"), m.Parse("", "select 1", ()), m.Sync())
    assert kinds(client.until_ready()) == "T D C Z"
    assert kinds(client.until_ready()) == "1 Z"


def test_unknown_message_type_is_08p01_and_the_connection_survives(connect_nyala):
    # differs from PostgreSQL, which reports it FATAL and closes the connection
    client = connect_nyala()
    client.send(m.UnknownMessage(b"y", b"whatever"))
    messages = client.until_ready()
    assert kinds(messages) == "E Z"
    assert errors(messages) == ["08P01"]
    assert kinds(client.query("select 1")) == "T D C Z"


def test_oversized_message_is_refused_and_the_connection_closed(connect_nyala):
    # differs from PostgreSQL, which only logs "invalid message length" and hangs up
    client = connect_nyala()
    client.sock.sendall(b"Q" + (2**31 - 1).to_bytes(4, "big") + b"select")
    message = client.receive()
    assert isinstance(message, m.ErrorResponse)
    assert (message.get("S"), message.get("C")) == ("FATAL", "08P01")
    assert client.receive() is None


def test_set_of_a_reported_parameter_sends_parameter_status(connect):
    messages = connect().query("set application_name = 'raw-test'")
    assert m.ParameterStatus("application_name", "raw-test") in messages
    assert kinds(messages) == "C S Z"


def test_cancel_request_cancels_a_running_statement(connect):
    client = connect()
    probe = client.query("select pg_sleep(0)")
    if errors(probe):
        pytest.skip(f"pg_sleep is not available: {errors(probe)}")
    client.send(m.Query("select pg_sleep(3)"))
    time.sleep(0.5)
    canceller = connect(startup=False)
    canceller.send(m.SSLRequest())
    assert canceller.read_byte() == b"N"
    assert client.key is not None
    started = time.monotonic()
    canceller.send(m.CancelRequest(client.key.process_id, client.key.secret_key))
    assert canceller.receive() is None
    messages = client.until_ready()
    assert errors(messages) == ["57014"]
    assert time.monotonic() - started < 2.0
    assert kinds(client.query("select 1")) == "T D C Z"


def test_cancel_request_with_a_wrong_secret_is_ignored(connect):
    client = connect()
    probe = client.query("select pg_sleep(0)")
    if errors(probe):
        pytest.skip(f"pg_sleep is not available: {errors(probe)}")
    client.send(m.Query("select pg_sleep(1)"))
    time.sleep(0.2)
    assert client.key is not None
    canceller = connect(startup=False)
    canceller.send(m.CancelRequest(client.key.process_id, client.key.secret_key ^ 1))
    assert canceller.receive() is None
    assert errors(client.until_ready()) == []


def test_terminate_closes_the_connection(connect):
    client = connect()
    client.send(m.Terminate())
    assert client.receive() is None


def test_sigterm_ends_idle_connections_with_57p01_and_exits_cleanly(fresh_nyala_server):
    client = RawClient(fresh_nyala_server.host, fresh_nyala_server.port)
    try:
        client.startup()
        assert fresh_nyala_server.stop() == 0
        message = client.receive()
        assert isinstance(message, m.ErrorResponse)
        assert (message.get("S"), message.get("C")) == ("FATAL", "57P01")
        assert client.receive() is None
    finally:
        client.close()


def test_short_reads_by_key_answer_as_postgresql_does(connect):
    """Reads by key and small LIMITs run on nyala's event loop; the messages are PostgreSQL's."""
    client = connect()
    client.query("drop table if exists short_reads")
    client.query("create table short_reads (k int primary key, v text)")
    client.query("insert into short_reads select i, 'v' || i from generate_series(1, 20) i")
    one = (1).to_bytes(4, "big")
    client.send(
        m.Parse("point", "select v, k from short_reads where k = $1", (23,)),
        m.Parse("few", "select k from short_reads where k > $1 limit 5", (23,)),
        m.Bind("", "point", (1,), (b"\x00\x00\x00\x07",), ()),
        m.Execute("", 0),
        m.Bind("", "point", (0,), (b"99",), ()),
        m.Execute("", 0),
        m.Bind("", "few", (1,), (one,), (1,)),
        m.Execute("", 2),
        m.Execute("", 0),
        m.Sync(),
    )
    messages = client.until_ready()
    assert kinds(messages) == "1 1 2 D C 2 C 2 D D s D D D C Z"
    rows = [msg.values for msg in messages if isinstance(msg, m.DataRow)]
    assert rows[0] == (b"v7", b"7")
    assert [int.from_bytes(r[0], "big") for r in rows[1:]] == [2, 3, 4, 5, 6]
    assert [msg.tag for msg in messages if isinstance(msg, m.CommandComplete)] == [
        "SELECT 1",
        "SELECT 0",
        "SELECT 3",
    ]
    client.send(m.Bind("", "point", (0,), (b"x",), ()), m.Execute("", 0), m.Sync())
    assert errors(client.until_ready()) == ["22P02"]
    client.query("set statement_timeout = 1")
    client.send(m.Bind("", "point", (0,), (b"3",), ()), m.Execute("", 0), m.Sync())
    assert kinds(client.until_ready()) == "2 D C Z"
    client.query("set statement_timeout = 0")
    client.query("alter table short_reads add column w int")
    client.send(m.Bind("", "point", (0,), (b"3",), ()), m.Execute("", 0), m.Sync())
    answer = client.until_ready()
    assert kinds(answer) == "2 D C Z"
    assert [msg.values for msg in answer if isinstance(msg, m.DataRow)] == [(b"v3", b"3")]
    client.query("drop table short_reads")


def _pipelined_inserts(client, keys, *, begin=False, describe=False):
    """One prepared INSERT, a Bind/Execute per key, then Sync (what executemany sends)."""
    client.query("drop table if exists batch_rows")
    client.query("create table batch_rows (k int primary key, v smallint not null)")
    client.query("insert into batch_rows values (100, 0)")
    if begin:
        client.query("begin")
    messages: list[m.FrontendMessage] = [
        m.Parse("ins", "insert into batch_rows values ($1, $2)", ())
    ]
    client.send(m.Close("S", "ins"), m.Sync())
    client.until_ready()
    for key, value in keys:
        params = (None if key is None else str(key).encode(), str(value).encode())
        messages += [m.Bind("", "ins", (), params, ())]
        messages += [m.Describe("P", "")] if describe else []
        messages += [m.Execute("", 0)]
    client.send(*messages, m.Sync())
    answer = client.until_ready()
    if begin:
        client.query("commit")
    rows = client.query("select k from batch_rows order by k")
    client.query("drop table batch_rows")
    return (
        kinds(answer),
        errors(answer),
        [msg.values[0] for msg in rows if isinstance(msg, m.DataRow)],
    )


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ([(k, 1) for k in range(1, 9)], "1" + " 2 C" * 8 + " Z"),
        ([(100, 1)] + [(k, 1) for k in range(1, 8)], "1 2 E Z"),
        ([(k, 1) for k in range(1, 5)] + [(100, 1)] + [(k, 1) for k in range(5, 8)],
         "1" + " 2 C" * 4 + " 2 E Z"),
        ([(k, 1) for k in range(1, 8)] + [(100, 1)], "1" + " 2 C" * 7 + " 2 E Z"),
        ([(k, 1) for k in range(1, 5)] + [(2, 1), (9, 1), (10, 1)], "1" + " 2 C" * 4 + " 2 E Z"),
        ([(k, 1) for k in range(1, 4)] + [(None, 1), (9, 1), (10, 1)], "1" + " 2 C" * 3 + " 2 E Z"),
        ([(k, 1) for k in range(1, 4)] + [(4, 40000), (9, 1), (10, 1)], "1" + " 2 C" * 3 + " E Z"),
    ],
    ids=["all-rows", "fails-first", "fails-middle", "fails-last", "duplicate-within",
         "null-key", "out-of-range"],
)  # fmt: skip
def test_pipelined_inserts_answer_row_by_row_and_fail_whole(connect, keys, expected):
    """A run of Bind/Execute of one INSERT (nyala applies it as one batch) answers as
    PostgreSQL does, message by message; a failing row leaves nothing of the run behind."""
    client = connect()
    answer, codes, rows = _pipelined_inserts(client, keys)
    assert answer == expected
    if "E" in answer:
        assert codes[0] in ("23505", "23502", "22003")
        assert rows == [b"100"]
    else:
        assert len(rows) == len(keys) + 1
    answer, codes, rows = _pipelined_inserts(client, keys, begin=True)
    assert answer == expected
    assert len(rows) == (1 if "E" in answer else len(keys) + 1)


@pytest.mark.parametrize("fail_at", [None, 0, 3, 7])
def test_libpq_style_pipelines_with_describe_match_postgresql(
    nyala_server, postgres_server, fail_at
):
    """libpq's pipelines (psycopg executemany) send Bind, Describe portal, Execute per row."""
    keys = [(100 if i == fail_at else i + 1, 1) for i in range(8)]
    answers = []
    for server in (nyala_server, postgres_server):
        make, clients = connector(server)
        client = make()
        try:
            answers.append(
                [_pipelined_inserts(client, keys, describe=True, begin=begin) for begin in (0, 1)]
            )
        finally:
            client.close()
    assert answers[0] == answers[1]
    assert ("2 n E" in answers[0][0][0]) is (fail_at is not None)


def test_a_failed_batch_then_another_pipeline_in_the_same_packet(nyala_server, postgres_server):
    """After a failing run is answered one by one, the next pipeline (already received)
    is answered in order."""
    answers = []
    for server in (nyala_server, postgres_server):
        make, clients = connector(server)
        client = make()
        try:
            client.query("drop table if exists batch_rows")
            client.query("create table batch_rows (k int primary key)")
            client.query("insert into batch_rows values (3)")
            messages: list[m.FrontendMessage] = [
                m.Parse("", "insert into batch_rows values ($1)", ())
            ]
            for keys in ((1, 2, 3, 4, 5, 6), (7, 8, 9, 10, 11, 12)):
                for key in keys:
                    messages += [m.Bind("", "", (), (str(key).encode(),), ()), m.Execute("", 0)]
                messages.append(m.Sync())
            client.send(*messages)
            first, second = client.until_ready(), client.until_ready()
            rows = client.query("select k from batch_rows order by k")
            client.query("drop table batch_rows")
            answers.append(
                (
                    kinds(first),
                    kinds(second),
                    [r.values[0] for r in rows if isinstance(r, m.DataRow)],
                )
            )
        finally:
            client.close()
    assert answers[0] == answers[1]
    assert answers[0][2] == [b"3", b"7", b"8", b"9", b"10", b"11", b"12"]


def _pipelined_changes(client, sql, rows, *, begin=False, describe=False):
    """A prepared UPDATE or DELETE by key, a Bind/Execute per parameter row, then Sync:
    the answer's message kinds, tags and error codes, and the table after it."""
    client.query("drop table if exists batch_rows")
    client.query("create table batch_rows (k int primary key, v smallint not null)")
    client.query("insert into batch_rows select i, i from generate_series(1, 10) i")
    if begin:
        client.query("begin")
    messages: list[m.FrontendMessage] = [m.Parse("chg", sql, ())]
    client.send(m.Close("S", "chg"), m.Sync())
    client.until_ready()
    for params in rows:
        encoded = tuple(str(p).encode() for p in params)
        messages += [m.Bind("", "chg", (), encoded, ())]
        messages += [m.Describe("P", "")] if describe else []
        messages += [m.Execute("", 0)]
    client.send(*messages, m.Sync())
    answer = client.until_ready()
    if begin:
        client.query("commit")
    table = client.query("select k, v from batch_rows order by k")
    client.query("drop table batch_rows")
    return (
        kinds(answer),
        [msg.tag for msg in answer if isinstance(msg, m.CommandComplete)],
        errors(answer),
        [msg.values for msg in table if isinstance(msg, m.DataRow)],
    )


_SET = "update batch_rows set v = $2 where k = $1"
_ADD = "update batch_rows set v = v + $2 where k = $1"
_DELETE = "delete from batch_rows where k = $1"


@pytest.mark.parametrize(
    ("sql", "rows"),
    [
        (_SET, [(k, k * 10) for k in range(1, 9)]),
        (_SET, [(1, 40000)] + [(k, 1) for k in range(2, 9)]),
        (_SET, [(k, 1) for k in range(1, 5)] + [(5, 40000)] + [(k, 1) for k in range(6, 9)]),
        (_SET, [(k, 1) for k in range(1, 8)] + [(8, 40000)]),
        (_SET, [(1, 5), (99, 5), (2, 6), (1, 7), (3, 8), (98, 1)]),
        (_ADD, [(1, 5), (2, 5), (1, 5), (77, 1), (3, 5)]),
        (_ADD, [(1, 5), (2, 5), (3, 32767), (4, 5)]),
        (_DELETE, [(k,) for k in range(1, 8)]),
        (_DELETE, [(1,), (50,), (2,), (2,), (3,)]),
    ],
    ids=["set-all", "set-fails-first", "set-fails-middle", "set-fails-last", "set-missing-and-repeated",
         "add-repeated-and-missing", "add-overflows-middle", "delete-all", "delete-missing-and-repeated"],
)  # fmt: skip
def test_pipelined_updates_and_deletes_match_postgresql(nyala_server, postgres_server, sql, rows):
    """Runs of Bind/Execute of one UPDATE or DELETE by key (nyala applies them as one batch)
    answer as PostgreSQL does, tag by tag; a failing row leaves nothing of the run behind."""
    answers = []
    for server in (nyala_server, postgres_server):
        make, _ = connector(server)
        client = make()
        try:
            answers.append(
                [
                    _pipelined_changes(client, sql, rows, begin=begin, describe=describe)
                    for begin, describe in ((False, False), (True, False), (False, True))
                ]
            )
        finally:
            client.close()
    assert answers[0] == answers[1]


@pytest.mark.parametrize("fail_at", [None, 0, 2, 5])
@pytest.mark.parametrize("keyed", [True, False], ids=["keyed", "keyless"])
def test_pipelined_multi_row_inserts_match_postgresql(
    nyala_server, postgres_server, fail_at, keyed
):
    """pgjdbc's reWriteBatchedInserts: a run of Bind/Execute of one three-row INSERT (nyala
    applies the run as one batch) answers as PostgreSQL does, tag by tag (INSERT 0 3), and a
    failing row (a duplicate key, or a NULL in a NOT NULL column) leaves nothing behind."""
    answers = []
    for server in (nyala_server, postgres_server):
        make, _ = connector(server)
        client = make()
        try:
            key = "k int primary key" if keyed else "k int"
            client.query("drop table if exists batch_rows")
            client.query(f"create table batch_rows ({key}, v text not null)")
            client.query("insert into batch_rows values (100, 'x')")
            sql = "insert into batch_rows values ($1, $2), ($3, $4), ($5, $6)"
            messages: list[m.FrontendMessage] = [m.Parse("multi", sql, ())]
            for statement in range(6):
                params: list[bytes | None] = []
                for row in range(3):
                    k = 100 if keyed and statement == fail_at and row == 1 else statement * 3 + row
                    v = None if not keyed and statement == fail_at and row == 2 else f"v{k}"
                    params += [str(k).encode(), None if v is None else v.encode()]
                messages += [m.Bind("", "multi", (), tuple(params), ()), m.Execute("", 0)]
            client.send(*messages, m.Sync())
            answer = client.until_ready()
            table = client.query("select k, v from batch_rows order by k, v")
            client.query("drop table batch_rows")
            answers.append(
                (
                    kinds(answer),
                    [msg.tag for msg in answer if isinstance(msg, m.CommandComplete)],
                    errors(answer),
                    [msg.values for msg in table if isinstance(msg, m.DataRow)],
                )
            )
        finally:
            client.close()
    assert answers[0] == answers[1]
    assert len(answers[0][3]) == (1 if fail_at is not None else 19)


def _arriving_run(client, first, canceller=None, pause_s=0.0):
    """Three Bind/Execute rows of a prepared INSERT, a pause (a CancelRequest from
    ``canceller`` in it), then two more rows and Sync: the answer to the run."""

    def rows(keys):
        return [
            message
            for key in keys
            for message in (m.Bind("", "ins", (), (str(key).encode(),), ()), m.Execute("", 0))
        ]

    client.send(*rows(range(first, first + 3)))
    time.sleep(0.5)
    if canceller is not None:
        assert client.key is not None
        canceller.send(m.CancelRequest(client.key.process_id, client.key.secret_key))
        assert canceller.receive() is None  # the server closes it once the cancel is handled
    time.sleep(pause_s)
    client.send(*rows(range(first + 3, first + 5)), m.Sync())
    return client.until_ready()


def test_cancel_while_a_pipelined_run_still_arrives_cancels_the_run(connect_nyala):
    """nyala applies a pipelined run once it holds all of it (``batches.RunTaker`` reads
    ahead), so a CancelRequest that comes while the client is still sending the run is
    the run's: the first row reports 57014 and nothing of it is written.  (PostgreSQL runs
    each Execute as it comes and ignores a cancel that finds it between two messages.)"""
    client = connect_nyala()
    client.query("create table arriving (k int primary key)")
    client.send(m.Parse("ins", "insert into arriving values ($1)", ()), m.Sync())
    client.until_ready()
    answer = _arriving_run(client, 1)
    assert kinds(answer) == "2 C " * 5 + "Z"
    answer = _arriving_run(client, 10, canceller=connect_nyala(startup=False))
    assert kinds(answer) == "2 E Z"
    assert errors(answer) == ["57014"]
    rows = client.query("select k from arriving order by k")
    assert [msg.values[0] for msg in rows if isinstance(msg, m.DataRow)] == [
        b"1",
        b"2",
        b"3",
        b"4",
        b"5",
    ]
    client.query("set statement_timeout = '300ms'")
    answer = _arriving_run(client, 20, pause_s=0.5)
    assert errors(answer) == ["57014"]
    error = next(msg for msg in answer if isinstance(msg, m.ErrorResponse))
    assert "statement timeout" in (error.get("M") or "")
    client.query("reset statement_timeout")
    assert kinds(_arriving_run(client, 30)) == "2 C " * 5 + "Z"
    assert kinds(client.query("select count(*) from arriving")) == "T D C Z"


def test_row_descriptions_of_interleaved_statements_and_formats(nyala_server, postgres_server):
    """A connection keeps each statement's framed RowDescription: statements and result
    formats described in turn each get their own, as PostgreSQL sends them."""
    answers = []
    for server in (nyala_server, postgres_server):
        client = RawClient(server.host, server.port)
        try:
            client.startup()
            client.query("drop table if exists described")
            client.query("create table described (k int primary key, v text)")
            client.query("insert into described values (1, 'one')")
            client.send(
                m.Parse("s1", "select k from described where k = $1", (23,)),
                m.Parse("s2", "select v, k from described where k = $1", (23,)),
                m.Sync(),
            )
            client.until_ready()
            messages: list[m.FrontendMessage] = []
            for name, formats in [("s1", ()), ("s2", ()), ("s1", (1,)), ("s2", (0, 1)), ("s1", ())]:
                messages += [m.Bind("", name, (), (b"1",), formats), m.Describe("P", "")]
                messages += [m.Execute("", 0), m.Describe("S", name)]
            client.send(*messages, m.Sync())
            answer = client.until_ready()
            client.query("drop table described")
            answers.append(
                [
                    [(f.name, f.type_oid, f.format_code) for f in msg.fields]
                    if isinstance(msg, m.RowDescription)
                    else type(msg).TYPE
                    for msg in answer
                ]
            )
        finally:
            client.close()
    assert answers[0] == answers[1]
