"""Protocol fuzzing: mutated and random frontend messages never get XX000 or take the server down.

Hypothesis builds a connection's worth of traffic: an optional hostile
start-up (garbage, wrong lengths, unknown protocol versions, bad start-up
parameters), then a run of frontend messages drawn from every kind the
protocol has (Parse/Bind/Describe/Execute/Close with random names, parameter
counts, formats, OIDs and values; simple queries; COPY sub-protocol messages
out of place; unknown type bytes), each possibly mutated on the wire
(truncated, padded, length field rewritten, a byte flipped, garbage
inserted).  After each case the connection must either answer a marker
query or be closed by the server, every ErrorResponse must carry a real
SQLSTATE other than XX000, the server log must show no internal error, and a
second connection must still be served.

``NYALA_FUZZ_EXAMPLES`` sets the number of cases (``make fuzz`` runs many).
"""

from __future__ import annotations

import os
import re
import socket
import struct
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import psycopg
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from server import codec
from server import messages as m
from tests.support.servers import NyalaServer

FUZZ_EXAMPLES = int(os.environ.get("NYALA_FUZZ_EXAMPLES", "150"))
ANSWER_TIMEOUT_S = 20.0
MARKER = "fuzz-end-marker"
_SQLSTATE = re.compile(r"^[0-9A-Z]{5}$")
_INTERNAL = re.compile(r"internal error|Traceback|Unhandled exception")

SETUP = (
    "CREATE TABLE fuzz_kv (k bigint PRIMARY KEY, v text, b bytea, d numeric(10, 2), ts timestamp)",
    "INSERT INTO fuzz_kv VALUES (1, 'one', '\\x01', 1.5, '2024-01-01 00:00:00')",
)

QUERIES = (
    "",
    "SELECT 1",
    "SELECT $1",
    "SELECT $1::int4 + 1",
    "SELECT $1::text, $2::bytea",
    "SELECT $1::numeric * 2, $2::date, $3::timestamptz",
    "SELECT $1::int8[]",
    "SELECT * FROM fuzz_kv WHERE k = $1",
    "SELECT * FROM fuzz_kv",
    "SELECT generate_series(1, 500)",
    "INSERT INTO fuzz_kv VALUES ($1, $2, $3, $4, $5)",
    "INSERT INTO fuzz_kv (k, v) VALUES ($1, $2)",
    "INSERT INTO fuzz_kv (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v",
    "UPSERT INTO fuzz_kv (k, v) VALUES ($1, $2)",
    "UPDATE fuzz_kv SET v = $2 WHERE k = $1",
    "DELETE FROM fuzz_kv WHERE k = $1",
    "COPY fuzz_kv FROM STDIN",
    "COPY fuzz_kv (k, v) FROM STDIN (FORMAT csv)",
    "COPY fuzz_kv FROM STDIN (FORMAT binary)",
    "COPY fuzz_kv TO STDOUT",
    "COPY (SELECT 1) TO STDOUT (FORMAT binary)",
    "BEGIN",
    "BEGIN ISOLATION LEVEL REPEATABLE READ",
    "COMMIT",
    "ROLLBACK",
    "SAVEPOINT s",
    "ROLLBACK TO SAVEPOINT s",
    "SELECT 1; SELECT 2",
    "SELECT 1; COMMIT; SELECT $1",
    "DECLARE c CURSOR WITH HOLD FOR SELECT 1",
    "FETCH 1 FROM c",
    "CLOSE c",
    "PREPARE p (int) AS SELECT $1",
    "EXECUTE p(1)",
    "DEALLOCATE p",
    "DEALLOCATE ALL",
    "DISCARD ALL",
    "SET statement_timeout = 5000",
    "SHOW ALL",
    "SELECT pg_sleep($1)",
    "SELECT 1/0",
    "SELEC 1",
)

PARAM_OIDS = (
    0, 16, 17, 18, 19, 20, 21, 23, 25, 26, 114, 700, 701, 705, 1000, 1007, 1016, 1042, 1043,
    1082, 1083, 1114, 1184, 1186, 1700, 2249, 2278, 2950, 3802, 4294967295, 99999,
)  # fmt: skip

TEXT_VALUES = (
    b"1", b"-7", b"0", b"2147483648", b"9223372036854775808", b"1e400", b"NaN", b"-Infinity",
    b"abc", b"", b" 12 ", b"t", b"maybe", b"2024-02-30", b"2024-01-01 12:00:00+02",
    b"1 day", b"{1,2,3}", b"{1,{2}}", b"\\x0g", b"\\xff", b'{"a": 1}', b"0.001", b"0.05",
    b"\xff\xfe", b"a\x00b",
)  # fmt: skip

NAMES = ("", "s1", "p1", "c", "\u00e9")


def _binary_values() -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.integers(-(2**31), 2**31 - 1).map(lambda v: struct.pack("!i", v)),
        st.integers(-(2**63), 2**63 - 1).map(lambda v: struct.pack("!q", v)),
        st.integers(-(2**15), 2**15 - 1).map(lambda v: struct.pack("!h", v)),
        st.floats().map(lambda v: struct.pack("!d", v)),
        st.binary(max_size=24),
    )


param_values = st.one_of(
    st.none(), st.sampled_from(TEXT_VALUES), _binary_values(), st.binary(max_size=40)
)
formats = st.lists(st.sampled_from((0, 1, 1, 2, -1, 0x7FFF)), max_size=6).map(tuple)
names = st.sampled_from(NAMES)
queries = st.one_of(st.sampled_from(QUERIES), st.text(max_size=40))


def _messages() -> st.SearchStrategy[m.FrontendMessage]:
    return st.one_of(
        st.builds(
            m.Parse,
            names,
            queries,
            st.lists(st.sampled_from(PARAM_OIDS), max_size=6).map(tuple),
        ),
        st.builds(
            m.Bind,
            names,
            names,
            formats,
            st.lists(param_values, max_size=7).map(tuple),
            formats,
        ),
        st.builds(m.Describe, st.sampled_from("SPSPx"), names),
        st.builds(m.Execute, names, st.sampled_from((0, 0, 1, 2, -1, 2**31 - 1))),
        st.builds(m.Close, st.sampled_from("SPSPz"), names),
        st.just(m.Sync()),
        st.just(m.Flush()),
        st.builds(m.Query, queries),
        st.builds(
            m.CopyData,
            st.one_of(
                st.sampled_from((b"5\tfive\n", b"x\ty\n", b"\\.\n", b"PGCOPY\n\xff\r\n\x00")),
                st.binary(max_size=40),
            ),
        ),
        st.just(m.CopyDone()),
        st.builds(m.CopyFail, st.text(max_size=10)),
        st.builds(m.PasswordMessage, st.binary(max_size=20)),
        st.builds(
            m.UnknownMessage,
            st.binary(min_size=1, max_size=1).filter(lambda b: b not in b"X"),
            st.binary(max_size=20),
        ),
    )


@dataclass
class Frame:
    """One message on the wire; ``may_derail``: its damage may leave the server waiting for
    bytes that never come or make it a Terminate, so the marker query may go unanswered."""

    data: bytes
    may_derail: bool = False


@st.composite
def mutated(draw: st.DrawFn, message: m.FrontendMessage) -> Frame:
    """Encode ``message``, then maybe damage it the way a broken client or an attacker would."""
    data = codec.encode_frontend(message)
    kind = draw(st.sampled_from(("none",) * 20 + ("truncate", "pad", "length", "flip", "garbage")))
    body = data[5:]
    if kind == "truncate" and body:
        cut = draw(st.integers(0, len(body) - 1))
        return Frame(data[:1] + struct.pack("!i", 4 + cut) + body[:cut])
    if kind == "pad":
        extra = draw(st.binary(min_size=1, max_size=8))
        return Frame(data[:1] + struct.pack("!i", 4 + len(body) + len(extra)) + body + extra)
    if kind == "length":
        length = draw(st.sampled_from((-1, 0, 3, 4, 5, 2**31 - 1, 1 << 30, 100_000)))
        true_length = 4 + len(body)
        return Frame(data[:1] + struct.pack("!i", length) + body, may_derail=length != true_length)
    if kind == "flip":
        index = draw(st.integers(0, len(data) - 1))
        flipped = bytearray(data)
        flipped[index] ^= draw(st.integers(1, 255))
        return Frame(bytes(flipped), may_derail=index < 5)
    if kind == "garbage":
        garbage = draw(st.binary(min_size=1, max_size=16))
        return Frame(garbage + data, may_derail=True)
    return Frame(data)


@st.composite
def startups(draw: st.DrawFn) -> tuple[Frame, ...]:
    """The start-up phase: mostly a good StartupMessage, sometimes something hostile first."""
    parameters = {"user": "nyala", "database": "nyala", "options": "-c statement_timeout=5000"}
    good = codec.encode_frontend(m.StartupMessage(parameters=parameters))
    kind = draw(
        st.sampled_from(("good",) * 5 + ("ssl", "gss", "garbage", "params", "version", "length"))
    )
    if kind == "ssl":
        return (Frame(codec.encode_frontend(m.SSLRequest())), Frame(good))
    if kind == "gss":
        return (Frame(codec.encode_frontend(m.GSSENCRequest())), Frame(good))
    if kind == "garbage":
        return (Frame(draw(st.binary(min_size=1, max_size=64)), may_derail=True),)
    if kind == "params":
        keys = st.sampled_from(
            ("user", "database", "options", "application_name", "DateStyle", "_pq_.x")
        )
        values = st.one_of(
            st.text(max_size=12), st.sampled_from(("-c statement_timeout=x", "nyala"))
        )
        params = draw(st.dictionaries(keys, values, max_size=4))
        return (Frame(codec.encode_frontend(m.StartupMessage(parameters=params))),)
    if kind == "version":
        version = draw(
            st.sampled_from((0, 1 << 16, 2 << 16, (3 << 16) | 1, (3 << 16) | 99, 4 << 16))
        )
        return (Frame(codec.encode_frontend(m.StartupMessage(version, {"user": "nyala"}))),)
    if kind == "length":
        length = draw(st.sampled_from((0, 4, 7, 10_001, 2**31 - 1, -8)))
        return (Frame(struct.pack("!i", length) + good[4:], may_derail=True),)
    return (Frame(good),)


@st.composite
def sessions(draw: st.DrawFn) -> list[Frame]:
    frames = list(draw(startups()))
    for message in draw(st.lists(_messages(), max_size=12)):
        frames.append(draw(mutated(message)))
    return frames


@dataclass
class Outcome:
    """What came back on one fuzzed connection."""

    sqlstates: list[str] = field(default_factory=list)
    fatal: bool = False
    saw_marker: bool = False


def _read_to_end(sock: socket.socket) -> Outcome:
    """Read every answer until the server closes the connection (it has seen our EOF)."""
    decoder = codec.BackendDecoder()
    outcome = Outcome()
    deadline = time.monotonic() + ANSWER_TIMEOUT_S
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"connection not closed within {ANSWER_TIMEOUT_S}s: {outcome}")
        sock.settimeout(remaining)
        try:
            data = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            data = b""
        if not data:
            return outcome
        decoder.feed(data)
        for message in decoder:
            if isinstance(message, m.ErrorResponse):
                fields = dict(message.fields)
                outcome.sqlstates.append(fields.get("C", ""))
                outcome.fatal |= fields.get("S") in ("FATAL", "PANIC")
            elif isinstance(message, m.DataRow) and message.values == (MARKER.encode(),):
                outcome.saw_marker = True


def _run_case(port: int, frames: list[Frame]) -> Outcome:
    """Send the frames, a tail that ends any COPY, pipeline and transaction and runs a marker query, then EOF."""
    tail = b"".join(
        codec.encode_frontend(msg)
        for msg in (
            m.CopyFail("fuzz"),
            m.Sync(),
            m.Query("ROLLBACK"),
            m.Query(f"SELECT '{MARKER}'"),
        )
    )
    with socket.create_connection(("127.0.0.1", port), timeout=ANSWER_TIMEOUT_S) as sock:
        try:
            if _starts_with_request(frames):
                sock.sendall(frames[0].data)
                if sock.recv(1) != b"N":
                    return _read_to_end(sock)
                frames = frames[1:]
            sock.sendall(b"".join(frame.data for frame in frames) + tail)
            sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass
        return _read_to_end(sock)


def _starts_with_request(frames: list[Frame]) -> bool:
    """Whether the first frame is an SSLRequest or GSSENCRequest (answered by one byte)."""
    first = frames[0].data if frames else b""
    requests = (m.SSL_REQUEST_CODE, m.GSSENC_REQUEST_CODE)
    return len(first) == 8 and struct.unpack("!ii", first)[1] in requests


SEEN: Counter[str] = Counter()
"""Outcomes by SQLSTATE ("closed": the server closed the connection, "ok": no error)."""


@pytest.fixture(scope="module")
def fuzz_server(nyala_server: NyalaServer) -> Iterator[NyalaServer]:
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        for statement in SETUP:
            conn.execute(statement)
    yield nyala_server
    report = os.environ.get("NYALA_FUZZ_REPORT")
    if report:
        with open(report, "a", encoding="utf-8") as out:
            cases = sum(SEEN.values())
            out.write(f"protocol fuzz: {cases} outcomes, by SQLSTATE {dict(SEEN.most_common())}\n")


_STARTUP = (
    b"\x00\x00\x00E\x00\x03\x00\x00user\x00nyala\x00database\x00nyala\x00"
    b"options\x00-c statement_timeout=5000\x00\x00"
)


@settings(max_examples=FUZZ_EXAMPLES)
@given(frames=sessions())
@example(  # a length error during COPY FROM STDIN once closed the connection with XX000
    frames=[
        Frame(_STARTUP, may_derail=False),
        Frame(b"Q\x00\x00\x00\x1cCOPY fuzz_kv FROM STDIN\x00", may_derail=False),
        Frame(b"P\xff\xff\xff\xff\x00\x00\x00\x00", may_derail=True),
        Frame(b"P\x00\x00\x00\x08\x00\x00\x00\x00", may_derail=False),
    ]
)
@example(  # a message cut short during COPY FROM STDIN (the client left) was answered XX000
    frames=[
        Frame(_STARTUP, may_derail=False),
        Frame(b"Q\x00\x00\x00\x1cCOPY fuzz_kv FROM STDIN\x00", may_derail=False),
        Frame(b"P\x00\x01\x86\xa0\x00\x00\x00\x00", may_derail=True),
    ]
)
def test_hostile_frontend_messages(fuzz_server: NyalaServer, frames: list[Frame]) -> None:
    assert fuzz_server.port is not None
    internal_before = len(_INTERNAL.findall(fuzz_server.log))
    outcome = _run_case(fuzz_server.port, frames)
    SEEN.update(outcome.sqlstates or ["ok"])
    for sqlstate in outcome.sqlstates:
        assert _SQLSTATE.match(sqlstate), f"ErrorResponse without a SQLSTATE: {outcome}"
        assert sqlstate != "XX000", f"internal error answered: {outcome}"
    if not outcome.fatal and not any(frame.may_derail for frame in frames):
        assert outcome.saw_marker, f"the connection stopped answering: {outcome}"
    assert len(_INTERNAL.findall(fuzz_server.log)) <= internal_before, fuzz_server.log_tail(60)
    with psycopg.connect(fuzz_server.dsn, autocommit=True, connect_timeout=20) as other:
        assert other.execute("SELECT count(*) FROM fuzz_kv").fetchone() is not None
