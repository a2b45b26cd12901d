"""Framing: every message survives encode -> decode, byte layouts match the protocol docs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from server import batches, codec
from server import messages as m
from storage.errors import CharacterNotInRepertoire, ProtocolViolation

names = st.text(st.characters(blacklist_characters="\x00", codec="utf-8"), max_size=20)
int16s = st.integers(-(2**15), 2**15 - 1)
int32s = st.integers(-(2**31), 2**31 - 1)
uint32s = st.integers(0, 2**32 - 1)
values = st.one_of(st.none(), st.binary(max_size=30))
fields = st.lists(st.tuples(st.sampled_from("SVCMDHPFLR"), names), max_size=6).map(tuple)

FRONTEND_STRATEGIES = {
    m.StartupMessage: st.builds(
        m.StartupMessage,
        st.just(m.PROTOCOL_VERSION_3_0),
        st.dictionaries(names.filter(bool), names, max_size=4),
    ),
    m.SSLRequest: st.just(m.SSLRequest()),
    m.GSSENCRequest: st.just(m.GSSENCRequest()),
    m.CancelRequest: st.builds(m.CancelRequest, int32s, int32s),
    m.PasswordMessage: st.builds(m.PasswordMessage, st.binary(max_size=40)),
    m.Query: st.builds(m.Query, names),
    m.Parse: st.builds(m.Parse, names, names, st.lists(uint32s, max_size=5).map(tuple)),
    m.Bind: st.builds(
        m.Bind,
        names,
        names,
        st.lists(st.sampled_from([0, 1]), max_size=4).map(tuple),
        st.lists(values, max_size=5).map(tuple),
        st.lists(st.sampled_from([0, 1]), max_size=4).map(tuple),
    ),
    m.Describe: st.builds(m.Describe, st.sampled_from("SP"), names),
    m.Execute: st.builds(m.Execute, names, int32s),
    m.Close: st.builds(m.Close, st.sampled_from("SP"), names),
    m.Sync: st.just(m.Sync()),
    m.Flush: st.just(m.Flush()),
    m.Terminate: st.just(m.Terminate()),
    m.CopyData: st.builds(m.CopyData, st.binary(max_size=40)),
    m.CopyDone: st.just(m.CopyDone()),
    m.CopyFail: st.builds(m.CopyFail, names),
    m.UnknownMessage: st.builds(
        m.UnknownMessage, st.sampled_from([b"F", b"y", b"!"]), st.binary(max_size=10)
    ),
}

BACKEND_STRATEGIES = {
    m.AuthenticationOk: st.just(m.AuthenticationOk()),
    m.AuthenticationCleartextPassword: st.just(m.AuthenticationCleartextPassword()),
    m.AuthenticationMD5Password: st.builds(
        m.AuthenticationMD5Password, st.binary(min_size=4, max_size=4)
    ),
    m.AuthenticationSASL: st.builds(
        m.AuthenticationSASL, st.lists(names.filter(bool), max_size=3).map(tuple)
    ),
    m.AuthenticationSASLContinue: st.builds(m.AuthenticationSASLContinue, st.binary(max_size=30)),
    m.AuthenticationSASLFinal: st.builds(m.AuthenticationSASLFinal, st.binary(max_size=30)),
    m.ParameterStatus: st.builds(m.ParameterStatus, names, names),
    m.BackendKeyData: st.builds(m.BackendKeyData, int32s, int32s),
    m.NotificationResponse: st.builds(m.NotificationResponse, int32s, names, names),
    m.NegotiateProtocolVersion: st.builds(
        m.NegotiateProtocolVersion, int32s, st.lists(names, max_size=3).map(tuple)
    ),
    m.ReadyForQuery: st.builds(m.ReadyForQuery, st.sampled_from("ITE")),
    m.RowDescription: st.builds(
        m.RowDescription,
        st.lists(
            st.builds(
                m.FieldDescription,
                names,
                uint32s,
                int16s,
                uint32s,
                int16s,
                int32s,
                st.sampled_from([0, 1]),
            ),
            max_size=4,
        ).map(tuple),
    ),
    m.DataRow: st.builds(m.DataRow, st.lists(values, max_size=6).map(tuple)),
    m.CommandComplete: st.builds(m.CommandComplete, names),
    m.EmptyQueryResponse: st.just(m.EmptyQueryResponse()),
    m.ErrorResponse: st.builds(m.ErrorResponse, fields),
    m.NoticeResponse: st.builds(m.NoticeResponse, fields),
    m.ParseComplete: st.just(m.ParseComplete()),
    m.BindComplete: st.just(m.BindComplete()),
    m.CloseComplete: st.just(m.CloseComplete()),
    m.NoData: st.just(m.NoData()),
    m.ParameterDescription: st.builds(
        m.ParameterDescription, st.lists(uint32s, max_size=5).map(tuple)
    ),
    m.PortalSuspended: st.just(m.PortalSuspended()),
    m.CopyInResponse: st.builds(
        m.CopyInResponse, st.sampled_from([0, 1]), st.lists(st.sampled_from([0, 1])).map(tuple)
    ),
    m.CopyOutResponse: st.builds(
        m.CopyOutResponse, st.sampled_from([0, 1]), st.lists(st.sampled_from([0, 1])).map(tuple)
    ),
}
BACKEND_COPY_STRATEGIES = {
    m.CopyData: st.builds(m.CopyData, st.binary(max_size=40)),
    m.CopyDone: st.just(m.CopyDone()),
}
FRONTEND = st.one_of(*FRONTEND_STRATEGIES.values())
BACKEND = st.one_of(*BACKEND_STRATEGIES.values(), *BACKEND_COPY_STRATEGIES.values())
TYPED_FRONTEND = st.one_of(
    *(s for c, s in FRONTEND_STRATEGIES.items() if hasattr(c, "TYPE") or c is m.UnknownMessage)
)


def _decode_all_frontend(data: bytes, chunk: int = 0) -> list[m.FrontendMessage]:
    decoder = codec.FrontendDecoder(max_message_size_bytes=1 << 20)
    decoder.in_startup = False
    out: list[m.FrontendMessage] = []
    pieces = [data] if not chunk else [data[i : i + chunk] for i in range(0, len(data), chunk)]
    for piece in pieces:
        decoder.feed(piece)
        out.extend(decoder)
    return out


@given(FRONTEND)
def test_every_frontend_message_round_trips(message):
    data = codec.encode_frontend(message)
    decoder = codec.FrontendDecoder(max_message_size_bytes=1 << 20)
    startup_phase = (m.StartupMessage, m.SSLRequest, m.GSSENCRequest, m.CancelRequest)
    decoder.in_startup = isinstance(message, startup_phase)
    decoder.feed(data)
    assert list(decoder) == [message]
    assert decoder.buffered_bytes() == 0


@given(BACKEND)
def test_every_backend_message_round_trips(message):
    decoder = codec.BackendDecoder()
    decoder.feed(codec.encode(message))
    assert list(decoder) == [message]


def test_every_message_class_has_a_round_trip_strategy():
    classes = {
        c
        for c in vars(m).values()
        if isinstance(c, type) and dataclasses.is_dataclass(c) and c is not m.FieldDescription
    }
    assert classes == set(FRONTEND_STRATEGIES) | set(BACKEND_STRATEGIES)


@given(st.lists(TYPED_FRONTEND, max_size=8), st.integers(1, 7))
def test_a_stream_split_anywhere_decodes_to_the_same_messages(messages, chunk):
    data = b"".join(codec.encode_frontend(msg) for msg in messages)
    assert _decode_all_frontend(data, chunk) == messages


def test_query_layout_matches_the_protocol_docs():
    assert codec.encode_frontend(m.Query("select 1")) == b"Q\x00\x00\x00\x0dselect 1\x00"


def test_ready_for_query_layout():
    assert codec.encode(m.ReadyForQuery("I")) == b"Z\x00\x00\x00\x05I"


def test_ssl_request_is_eight_bytes_with_its_code():
    assert codec.encode_frontend(m.SSLRequest()) == b"\x00\x00\x00\x08\x04\xd2\x16\x2f"


def test_startup_phase_ends_after_the_startup_message():
    decoder = codec.FrontendDecoder(max_message_size_bytes=1 << 20)
    decoder.feed(codec.encode_frontend(m.SSLRequest()))
    assert decoder.next_message() == m.SSLRequest() and decoder.in_startup
    decoder.feed(codec.encode_frontend(m.StartupMessage(parameters={"user": "u"})))
    decoder.feed(codec.encode_frontend(m.Sync()))
    assert list(decoder) == [m.StartupMessage(parameters={"user": "u"}), m.Sync()]
    assert not decoder.in_startup


def test_oversized_message_is_refused_from_its_header_alone():
    decoder = codec.FrontendDecoder(max_message_size_bytes=100)
    decoder.in_startup = False
    decoder.feed(b"Q\x00\x00\x10\x00")
    with pytest.raises(ProtocolViolation) as caught:
        decoder.next_message()
    assert caught.value.severity == "FATAL"


def test_oversized_startup_packet_is_refused():
    decoder = codec.FrontendDecoder(max_message_size_bytes=1 << 20)
    decoder.feed((20_000).to_bytes(4, "big") + m.PROTOCOL_VERSION_3_0.to_bytes(4, "big"))
    with pytest.raises(ProtocolViolation):
        decoder.next_message()


def test_length_below_four_is_refused():
    decoder = codec.FrontendDecoder(max_message_size_bytes=100)
    decoder.in_startup = False
    decoder.feed(b"Q\x00\x00\x00\x02")
    with pytest.raises(ProtocolViolation):
        decoder.next_message()


def test_malformed_body_is_an_error_for_that_message_only():
    decoder = codec.FrontendDecoder(max_message_size_bytes=100)
    decoder.in_startup = False
    decoder.feed(b"E\x00\x00\x00\x06ab" + codec.encode_frontend(m.Sync()))
    with pytest.raises(ProtocolViolation) as caught:
        decoder.next_message()
    assert caught.value.severity == "ERROR"
    assert decoder.next_message() == m.Sync()


def test_invalid_utf8_in_a_query_is_22021():
    decoder = codec.FrontendDecoder(max_message_size_bytes=100)
    decoder.in_startup = False
    decoder.feed(b"Q\x00\x00\x00\x07\xff\xfe\x00")
    with pytest.raises(CharacterNotInRepertoire):
        decoder.next_message()


def test_unknown_type_decodes_to_unknown_message():
    assert _decode_all_frontend(b"y\x00\x00\x00\x06hi") == [m.UnknownMessage(b"y", b"hi")]


@given(st.lists(st.lists(values, min_size=3, max_size=3), max_size=20))
def test_bulk_data_rows_equal_one_data_row_per_row(rows):
    columns = []
    for column_idx in range(3):
        cells = [row[column_idx] for row in rows]
        lengths = np.array([-1 if c is None else len(c) for c in cells], dtype=np.int32)
        data = np.frombuffer(b"".join(c for c in cells if c is not None), dtype=np.uint8)
        columns.append(codec.ColumnValues(lengths, data))
    expected = b"".join(codec.encode(m.DataRow(tuple(row))) for row in rows)
    assert codec.encode_data_rows(columns, len(rows)) == expected


def test_bulk_data_rows_without_columns():
    assert codec.encode_data_rows([], 2) == codec.encode(m.DataRow(())) * 2


def test_next_if_takes_a_message_only_when_its_bytes_match_whole():
    decoder = codec.FrontendDecoder(1 << 20)
    decoder.in_startup = False
    execute = codec.encode_frontend(m.Execute("", 0))
    decoder.feed(execute + codec.encode_frontend(m.Execute("", 5)) + execute[:-1])
    assert decoder.next_if(execute) and decoder.last_type_code == b"E"
    assert not decoder.next_if(execute)  # max_rows 5: decoded as usual
    assert decoder.next_message() == m.Execute("", 5)
    assert not decoder.next_if(execute)  # not all of it has arrived
    decoder.feed(execute[-1:])
    assert decoder.next_if(execute) and decoder.buffered_bytes() == 0


def test_common_frames_are_the_messages_their_bodies_decode_to():
    """The frames taken whole (Sync, Execute of the unnamed portal, ...) are what decoding
    their bodies gives; a frame of the same type with a longer body is decoded as ever."""
    assert codec._COMMON_FRAMES
    for frame, message in codec._COMMON_FRAMES.items():
        assert codec.decode_frontend(frame[:1], frame[5:]) == message
        assert _decode_all_frontend(frame) == [message]
    decoder = codec.FrontendDecoder(max_message_size_bytes=100)
    decoder.in_startup = False
    decoder.feed(b"S\x00\x00\x00\x05x" + b"E\x00\x00\x00\x09\x00\x00\x00\x00\x07")
    with pytest.raises(ProtocolViolation):
        decoder.next_message()
    assert decoder.next_message() == m.Execute("", 7)


@pytest.mark.parametrize(
    "body",
    [
        b"\x00\x00\x00\x02\x00\x00",  # two format codes announced, one given
        b"\x00\x00\x00\x01",  # a format count and no codes
        b"\x00\x00\x00",  # no format count at all
        b"\x00\x00\x00\x00\x00\x00\x00\x03\x00\x01",  # three result formats, one given
    ],
)
def test_a_bind_cut_short_in_its_format_codes_is_a_protocol_violation(body):
    with pytest.raises(ProtocolViolation) as caught:
        codec.decode_frontend(b"B", body)
    assert caught.value.severity == "ERROR"


def _bind_outcome(read, body: bytes) -> object:
    """What reading a Bind body gives: the message with the body left, or the error."""
    cursor = codec._Body(body)
    try:
        message = read(cursor)
    except Exception as exc:
        return type(exc), str(exc)
    return message, cursor.at_end()


@given(
    st.builds(
        m.Bind,
        st.sampled_from(["", "p"]),
        st.sampled_from(["", "_pg3_0", "s\u00e9"]),
        st.lists(st.sampled_from([0, 1]), max_size=4).map(tuple),
        st.lists(values, max_size=5).map(tuple),
        st.lists(st.sampled_from([0, 1]), max_size=4).map(tuple),
    ),
    st.integers(0, 60),
    st.binary(max_size=3),
)
def test_the_usual_bind_reads_as_the_field_by_field_reading(bind, cut, tail):
    """The one-pass Bind reading gives what the general one gives, on whole, cut and
    overlong bodies (where it leaves the body to the general reading's error)."""
    body = codec.encode_frontend(bind)[5:]
    for variant in (body, body[:cut], body + tail, body[:cut] + tail):
        general = _bind_outcome(codec._decode_bind_fields, variant)
        assert _bind_outcome(codec._decode_bind, variant) == general
    assert codec.decode_frontend(b"B", body) == bind


def test_starts_with_looks_ahead_without_taking():
    decoder = codec.FrontendDecoder(1 << 20)
    decoder.feed(codec.encode_frontend(m.StartupMessage(parameters={"user": "u"})))
    assert decoder.next_message() is not None
    execute, sync = codec.encode_frontend(m.Execute("", 0)), codec.encode_frontend(m.Sync())
    bind = codec.encode_frontend(m.Bind("", "s", (), (b"1",), ()))
    decoder.feed(execute + sync)
    assert decoder.starts_with(execute) and batches.is_lone(decoder)
    assert decoder.next_message() == m.Execute("", 0)
    assert not decoder.starts_with(execute) and not batches.is_lone(decoder)
    assert decoder.next_message() == m.Sync()
    decoder.feed(execute + bind + execute + sync)
    assert not batches.is_lone(decoder)  # a run of two rows
    decoder.feed(b"")
    assert decoder.next_message() == m.Execute("", 0)


def test_a_runs_answers_are_each_rows_in_order():
    def one(described: bool, tag: str) -> bytes:
        messages = [m.BindComplete(), *([m.NoData()] if described else []), m.CommandComplete(tag)]
        return b"".join(codec.encode(message) for message in messages)

    for described, tags in (
        ([True] * 3, ["INSERT 0 1"] * 3),
        ([False, True, False], ["DELETE 1", "DELETE 1", "DELETE 0"]),
        ([False], ["UPDATE 1"]),
    ):
        expected = b"".join(one(d, t) for d, t in zip(described, tags, strict=True))
        assert batches.answers(described, tags) == expected
