"""Sans-IO framing of the PostgreSQL v3 protocol: bytes to messages and messages to bytes.

No sockets and no asyncio here: the connection feeds received bytes into a
``FrontendDecoder`` and writes what ``encode`` returns.  Both directions of
both sides are implemented, so tests and the e2e client speak through the
same code the server does.

Frame layout (all integers big-endian)::

    startup phase:  int32 length (self included) | int32 code | body
    afterwards:     byte type | int32 length (self included, type excluded) | body

A declared length above the configured maximum is refused from the header
alone, before the body is read, with a FATAL ProtocolViolation: the stream
cannot be resynchronised after it.  A malformed body is an ERROR for that
message only, because the frame itself was consumed whole.

Result rows do not go through ``DataRow`` objects: ``encode_data_rows`` frames
a whole batch of already-encoded column values with numpy in one pass.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from server import messages as m
from storage.errors import CharacterNotInRepertoire, ProtocolViolation

MAX_STARTUP_PACKET_BYTES = 10_000

_I16 = struct.Struct("!h")
_I32 = struct.Struct("!i")
_U32 = struct.Struct("!I")
_HEADER = struct.Struct("!ci")
FRAME_HEADER = _HEADER
"""A typed message's type byte and length."""
_STARTUP_HEADER = struct.Struct("!ii")


def _fatal(message: str, detail: str | None = None) -> ProtocolViolation:
    return ProtocolViolation(message, detail=detail, severity="FATAL")


class _Body:
    """A cursor over one message body; running off its end is a protocol violation."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def int16(self) -> int:
        value: int = _I16.unpack_from(self.take(2))[0]
        return value

    def int32(self) -> int:
        value: int = _I32.unpack_from(self.take(4))[0]
        return value

    def uint32(self) -> int:
        value: int = _U32.unpack_from(self.take(4))[0]
        return value

    def byte(self) -> str:
        return self.take(1).decode("ascii", "replace")

    def rest(self) -> bytes:
        data = self._data[self._pos :]
        self._pos = len(self._data)
        return data

    def cstring(self) -> str:
        end = self._data.find(b"\x00", self._pos)
        if end < 0:
            raise ProtocolViolation("invalid string in message")
        start, self._pos = self._pos, end + 1
        if start == end:
            return ""  # the unnamed statement or portal: most messages of a pipeline
        return decode_utf8(self._data[start:end])

    def at_end(self) -> bool:
        return self._pos >= len(self._data)

    def int16s(self) -> tuple[int, ...]:
        """A count and that many int16s (Bind's format codes), in one unpack."""
        data, pos = self._data, self._pos
        if pos + 2 > len(data):
            raise ProtocolViolation("insufficient data left in message")
        count: int = _I16.unpack_from(data, pos)[0]
        pos += 2
        if count <= 0:
            self._pos = pos
            return ()
        if pos + 2 * count > len(data):
            raise ProtocolViolation("insufficient data left in message")
        self._pos = pos + 2 * count
        if count == 1:
            return (_I16.unpack_from(data, pos)[0],)
        codes: tuple[int, ...] = _int16_run(count).unpack_from(data, pos)
        return codes

    def values(self) -> tuple[bytes | None, ...]:
        """A count and that many length-prefixed values (-1: NULL), as Bind carries its
        parameters; one loop over the buffer, since a pipelined batch decodes thousands."""
        count = self.int16()
        data, pos, end = self._data, self._pos, len(self._data)
        values: list[bytes | None] = []
        for _ in range(count):
            if pos + 4 > end:
                raise ProtocolViolation("insufficient data left in message")
            length = _I32.unpack_from(data, pos)[0]
            pos += 4
            if length == -1:
                values.append(None)
                continue
            if length < 0 or pos + length > end:
                raise ProtocolViolation("insufficient data left in message")
            values.append(data[pos : pos + length])
            pos += length
        self._pos = pos
        return tuple(values)

    def usual_bind(self) -> m.Bind | None:
        """A Bind into the unnamed portal read in one pass over the body, as every statement
        of a driver sends one; None for a named portal or a malformed body, which the
        field-by-field reading takes (and reports as it always has)."""
        data = self._data
        end = len(data)
        if end < 7 or data[0] != 0:
            return None
        cut = data.find(b"\x00", 1)
        if cut < 0 or cut + 5 > end:
            return None
        statement = decode_utf8(data[1:cut]) if cut > 1 else ""
        pos = cut + 1
        param_formats, pos = _format_codes(data, pos, end)
        if pos < 0 or pos + 2 > end:
            return None
        count: int = _I16.unpack_from(data, pos)[0]
        pos += 2
        if count < 0:
            return None
        params: list[bytes | None] = []
        unpack = _I32.unpack_from
        for _ in range(count):
            if pos + 4 > end:
                return None
            (length,) = unpack(data, pos)
            pos += 4
            if length == -1:
                params.append(None)
                continue
            if length < 0 or pos + length > end:
                return None
            params.append(data[pos : pos + length])
            pos += length
        result_formats, pos = _format_codes(data, pos, end)
        if pos != end:
            return None
        self._pos = end
        return m.Bind("", statement, param_formats, tuple(params), result_formats)

    def take(self, count: int) -> bytes:
        if count < 0 or self._pos + count > len(self._data):
            raise ProtocolViolation("insufficient data left in message")
        data = self._data[self._pos : self._pos + count]
        self._pos += count
        return data


_INT16_RUNS: dict[int, struct.Struct] = {}


def _int16_run(count: int) -> struct.Struct:
    """The Struct of ``count`` int16s, made once per count."""
    found = _INT16_RUNS.get(count)
    if found is None:
        found = _INT16_RUNS[count] = struct.Struct(f"!{count}h")
    return found


def _format_codes(data: bytes, pos: int, end: int) -> tuple[tuple[int, ...], int]:
    """Bind's format codes at ``pos`` and where they end; -1 as the end when they run past
    ``end`` or their count is negative (``_Body.usual_bind``)."""
    if pos + 2 > end:
        return (), -1
    count: int = _I16.unpack_from(data, pos)[0]
    pos += 2
    if count == 0:
        return (), pos
    if count < 0 or pos + 2 * count > end:
        return (), -1
    if count == 1:
        return (_I16.unpack_from(data, pos)[0],), pos + 2
    codes: tuple[int, ...] = _int16_run(count).unpack_from(data, pos)
    return codes, pos + 2 * count


def decode_utf8(raw: bytes) -> str:
    """Decode client text; invalid UTF-8 is 22021, as PostgreSQL reports it."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.start + 1].hex()
        raise CharacterNotInRepertoire(
            f'invalid byte sequence for encoding "UTF8": 0x{bad}'
        ) from None


def _cstr(text: str) -> bytes:
    return text.encode("utf-8") + b"\x00"


def _i16s(values: Sequence[int]) -> bytes:
    return _I16.pack(len(values)) + b"".join(_I16.pack(v) for v in values)


def _read_i16s(body: _Body) -> tuple[int, ...]:
    return tuple(body.int16() for _ in range(body.int16()))


def _value(data: bytes | None) -> bytes:
    return _I32.pack(-1) if data is None else _I32.pack(len(data)) + data


def _read_value(body: _Body) -> bytes | None:
    length = body.int32()
    return None if length == -1 else body.take(length)


def _fields(fields: Sequence[tuple[str, str]]) -> bytes:
    return b"".join(code.encode("ascii") + _cstr(value) for code, value in fields) + b"\x00"


def _read_fields(body: _Body) -> tuple[tuple[str, str], ...]:
    fields = []
    while (code := body.byte()) != "\x00":
        fields.append((code, body.cstring()))
    return tuple(fields)


# -- frontend bodies --------------------------------------------------------------------------

_FRONTEND_ENCODERS: dict[type[Any], Callable[[Any], bytes]] = {
    m.PasswordMessage: lambda msg: msg.data,
    m.Query: lambda msg: _cstr(msg.query),
    m.Parse: lambda msg: _cstr(msg.statement) + _cstr(msg.query) + _u32s(msg.param_oids),
    m.Bind: lambda msg: (
        _cstr(msg.portal)
        + _cstr(msg.statement)
        + _i16s(msg.param_formats)
        + _I16.pack(len(msg.params))
        + b"".join(_value(p) for p in msg.params)
        + _i16s(msg.result_formats)
    ),
    m.Describe: lambda msg: msg.kind.encode("ascii") + _cstr(msg.name),
    m.Execute: lambda msg: _cstr(msg.portal) + _I32.pack(msg.max_rows),
    m.Close: lambda msg: msg.kind.encode("ascii") + _cstr(msg.name),
    m.Sync: lambda msg: b"",
    m.Flush: lambda msg: b"",
    m.Terminate: lambda msg: b"",
    m.CopyData: lambda msg: msg.data,
    m.CopyDone: lambda msg: b"",
    m.CopyFail: lambda msg: _cstr(msg.message),
}


def _u32s(values: Sequence[int]) -> bytes:
    return _I16.pack(len(values)) + b"".join(_U32.pack(v) for v in values)


def _decode_parse(body: _Body) -> m.Parse:
    name, query = body.cstring(), body.cstring()
    return m.Parse(name, query, tuple(body.uint32() for _ in range(body.int16())))


def bind_frame_ends(bind: m.Bind) -> tuple[bytes, bytes]:
    """A Bind's body before its parameter values (portal, statement, format codes, value
    count) and after them (result formats): what every Bind of a pipelined run repeats."""
    head = (
        _cstr(bind.portal)
        + _cstr(bind.statement)
        + _i16s(bind.param_formats)
        + _I16.pack(len(bind.params))
    )
    return head, _i16s(bind.result_formats)


def split_values(data: bytes, start: int, stop: int, count: int) -> list[bytes | None] | None:
    """The ``count`` length-prefixed values (-1: NULL) that fill ``data[start:stop]``
    exactly, as a Bind carries its parameters; None if they do not."""
    values: list[bytes | None] = []
    unpack = _I32.unpack_from
    for _ in range(count):
        if start + 4 > stop:
            return None
        (length,) = unpack(data, start)
        start += 4
        if length == -1:
            values.append(None)
            continue
        if length < 0 or start + length > stop:
            return None
        values.append(data[start : start + length])
        start += length
    return values if start == stop else None


def _decode_bind(body: _Body) -> m.Bind:
    usual = body.usual_bind()
    return usual if usual is not None else _decode_bind_fields(body)


def _decode_bind_fields(body: _Body) -> m.Bind:
    """A Bind read field by field: any Bind, and every fault in one reported."""
    portal, statement = body.cstring(), body.cstring()
    formats = body.int16s()
    params = body.values()
    return m.Bind(portal, statement, formats, params, body.int16s())


def _decode_kind_name(cls: type[m.Describe] | type[m.Close]) -> Callable[[_Body], Any]:
    def decode(body: _Body) -> m.Describe | m.Close:
        kind = body.byte()
        if kind not in ("S", "P"):
            what = "Describe" if cls is m.Describe else "Close"
            raise ProtocolViolation(f"invalid {what} message subtype {ord(kind)}")
        return cls(kind, body.cstring())

    return decode


_FRONTEND_DECODERS: dict[bytes, Callable[[_Body], Any]] = {
    b"p": lambda body: m.PasswordMessage(body.rest()),
    b"Q": lambda body: m.Query(body.cstring()),
    b"P": _decode_parse,
    b"B": _decode_bind,
    b"D": _decode_kind_name(m.Describe),
    b"E": lambda body: m.Execute(body.cstring(), body.int32()),
    b"C": _decode_kind_name(m.Close),
    b"S": lambda body: m.Sync(),
    b"H": lambda body: m.Flush(),
    b"X": lambda body: m.Terminate(),
    b"d": lambda body: m.CopyData(body.rest()),
    b"c": lambda body: m.CopyDone(),
    b"f": lambda body: m.CopyFail(body.cstring()),
}


_COMMON_FRAMES: dict[bytes, m.FrontendMessage] = {}
"""The messages every extended-protocol statement sends, whole frames and all, by their
bytes: a frame found here is answered without decoding its body (the messages are
immutable, so one instance serves every connection)."""


def encode_frontend(msg: m.FrontendMessage) -> bytes:
    """Frame a frontend message (the client side; used by tests and tools)."""
    if isinstance(msg, m.StartupMessage):
        params = b"".join(_cstr(k) + _cstr(v) for k, v in msg.parameters.items()) + b"\x00"
        return _STARTUP_HEADER.pack(8 + len(params), msg.protocol_version) + params
    if isinstance(msg, m.SSLRequest):
        return _STARTUP_HEADER.pack(8, m.SSL_REQUEST_CODE)
    if isinstance(msg, m.GSSENCRequest):
        return _STARTUP_HEADER.pack(8, m.GSSENC_REQUEST_CODE)
    if isinstance(msg, m.CancelRequest):
        return (
            _STARTUP_HEADER.pack(16, m.CANCEL_REQUEST_CODE)
            + _I32.pack(msg.process_id)
            + _I32.pack(msg.secret_key)
        )
    if isinstance(msg, m.UnknownMessage):
        return _HEADER.pack(msg.type_code, 4 + len(msg.body)) + msg.body
    body = _FRONTEND_ENCODERS[type(msg)](msg)
    return _HEADER.pack(msg.TYPE, 4 + len(body)) + body


def decode_startup_packet(code: int, payload: bytes) -> m.FrontendMessage:
    """Decode a startup-phase packet from its code and the bytes after it."""
    body = _Body(payload)
    if code == m.SSL_REQUEST_CODE:
        return m.SSLRequest()
    if code == m.GSSENC_REQUEST_CODE:
        return m.GSSENCRequest()
    if code == m.CANCEL_REQUEST_CODE:
        return m.CancelRequest(body.int32(), body.int32())
    params: dict[str, str] = {}
    while not body.at_end():
        key = body.cstring()
        if not key:
            break
        params[key] = body.cstring()
    return m.StartupMessage(code, params)


def decode_frontend(type_code: bytes, payload: bytes) -> m.FrontendMessage:
    """Decode one typed frontend message body; unknown types become ``UnknownMessage``."""
    decoder = _FRONTEND_DECODERS.get(type_code)
    if decoder is None:
        return m.UnknownMessage(type_code, payload)
    body = _Body(payload)
    msg: m.FrontendMessage = decoder(body)
    if not body.at_end():
        raise ProtocolViolation(f"invalid message format: {len(payload)}-byte {type(msg).__name__}")
    return msg


class FrontendDecoder:
    """Splits the client's byte stream into frontend messages.

    Starts in the startup phase (untyped packets) and leaves it after a
    StartupMessage; SSLRequest, GSSENCRequest and CancelRequest keep it there.
    ``last_type_code`` is the type of the last typed message taken, so a
    caller can tell which message a decoding error belongs to.
    """

    def __init__(self, max_message_size_bytes: int) -> None:
        self.max_message_size_bytes = max_message_size_bytes
        self.in_startup = True
        self.last_type_code = b""
        self._buffer = bytearray()
        self._pos = 0
        self.taken_bytes = 0
        """How many bytes have been taken since the connection began."""

    def feed(self, data: bytes) -> None:
        if self._pos and self._pos == len(self._buffer):
            self._buffer.clear()
            self._pos = 0
        self._buffer += data

    def buffered_bytes(self) -> int:
        return len(self._buffer) - self._pos

    def __iter__(self) -> Iterator[m.FrontendMessage]:
        while (msg := self.next_message()) is not None:
            yield msg

    def next_message(self) -> m.FrontendMessage | None:
        """Return the next complete message, or None until more bytes arrive."""
        if self.in_startup:
            return self._next_startup()
        available = len(self._buffer) - self._pos
        if available < 5:
            return None
        type_code, length = _HEADER.unpack_from(self._buffer, self._pos)
        if length < 4:
            raise _fatal("invalid message length")
        if length > self.max_message_size_bytes:
            raise _fatal(
                "invalid message length",
                f"A {length}-byte message exceeds the limit of {self.max_message_size_bytes} bytes.",
            )
        if available < 1 + length:
            return None
        if length <= _COMMON_FRAME_BODY:
            common = _COMMON_FRAMES.get(bytes(self._buffer[self._pos : self._pos + 1 + length]))
            if common is not None:
                self._consume(1 + length)
                self.last_type_code = type_code
                return common
        payload = bytes(self._buffer[self._pos + 5 : self._pos + 1 + length])
        self._consume(1 + length)
        self.last_type_code = type_code
        return decode_frontend(type_code, payload)

    def starts_with(self, framed: bytes) -> bool:
        """Whether the buffered messages begin with exactly these bytes (nothing is taken)."""
        return not self.in_startup and self._buffer.startswith(framed, self._pos)

    def unread(self) -> tuple[bytearray, int]:
        """The buffer and where its untaken bytes start, for framing a run of messages by
        their bytes (``server.batches``); to be read, not kept: ``feed`` and ``skip`` move
        them."""
        return self._buffer, self._pos

    def skip(self, count: int) -> None:
        """Take ``count`` bytes of whole messages framed from ``unread``."""
        self._consume(count)

    def next_if(self, framed: bytes) -> bool:
        """Take the next message if its bytes are exactly ``framed`` (a pipeline repeats the
        same Describe and Execute for every row: comparing beats decoding them)."""
        end = self._pos + len(framed)
        if self.in_startup or self._buffer[self._pos : end] != framed:
            return False
        self._consume(len(framed))
        self.last_type_code = framed[:1]
        return True

    def _next_startup(self) -> m.FrontendMessage | None:
        available = len(self._buffer) - self._pos
        if available < 8:
            return None
        length, code = _STARTUP_HEADER.unpack_from(self._buffer, self._pos)
        limit = min(MAX_STARTUP_PACKET_BYTES, self.max_message_size_bytes)
        if length < 8 or length > limit:
            raise _fatal("invalid length of startup packet")
        if available < length:
            return None
        payload = bytes(self._buffer[self._pos + 8 : self._pos + length])
        self._consume(length)
        msg = decode_startup_packet(code, payload)
        if isinstance(msg, m.StartupMessage):
            self.in_startup = False
        return msg

    def _consume(self, count: int) -> None:
        self._pos += count
        self.taken_bytes += count
        if self._pos > 65536 and self._pos * 2 > len(self._buffer):
            del self._buffer[: self._pos]
            self._pos = 0


# -- backend bodies ---------------------------------------------------------------------------


def _encode_auth(msg: Any) -> bytes:
    if isinstance(msg, m.AuthenticationOk):
        return _I32.pack(0)
    if isinstance(msg, m.AuthenticationCleartextPassword):
        return _I32.pack(3)
    if isinstance(msg, m.AuthenticationMD5Password):
        return _I32.pack(5) + msg.salt
    if isinstance(msg, m.AuthenticationSASL):
        return _I32.pack(10) + b"".join(_cstr(name) for name in msg.mechanisms) + b"\x00"
    if isinstance(msg, m.AuthenticationSASLContinue):
        return _I32.pack(11) + msg.data
    final: m.AuthenticationSASLFinal = msg
    return _I32.pack(12) + final.data


def _encode_field(f: m.FieldDescription) -> bytes:
    return _cstr(f.name) + struct.pack(
        "!IhIhih",
        f.table_oid,
        f.column_attnum,
        f.type_oid,
        f.type_size,
        f.type_modifier,
        f.format_code,
    )


_BACKEND_ENCODERS: dict[type[Any], Callable[[Any], bytes]] = {
    m.AuthenticationOk: _encode_auth,
    m.AuthenticationCleartextPassword: _encode_auth,
    m.AuthenticationMD5Password: _encode_auth,
    m.AuthenticationSASL: _encode_auth,
    m.AuthenticationSASLContinue: _encode_auth,
    m.AuthenticationSASLFinal: _encode_auth,
    m.ParameterStatus: lambda msg: _cstr(msg.name) + _cstr(msg.value),
    m.NotificationResponse: lambda msg: (
        struct.pack("!i", msg.process_id) + _cstr(msg.channel) + _cstr(msg.payload)
    ),
    m.BackendKeyData: lambda msg: _I32.pack(msg.process_id) + _I32.pack(msg.secret_key),
    m.NegotiateProtocolVersion: lambda msg: (
        _I32.pack(msg.newest_minor_version)
        + _I32.pack(len(msg.unrecognized_options))
        + b"".join(_cstr(o) for o in msg.unrecognized_options)
    ),
    m.ReadyForQuery: lambda msg: msg.status.encode("ascii"),
    m.RowDescription: lambda msg: (
        _I16.pack(len(msg.fields)) + b"".join(_encode_field(f) for f in msg.fields)
    ),
    m.DataRow: lambda msg: _I16.pack(len(msg.values)) + b"".join(_value(v) for v in msg.values),
    m.CommandComplete: lambda msg: _cstr(msg.tag),
    m.EmptyQueryResponse: lambda msg: b"",
    m.ErrorResponse: lambda msg: _fields(msg.fields),
    m.NoticeResponse: lambda msg: _fields(msg.fields),
    m.ParseComplete: lambda msg: b"",
    m.BindComplete: lambda msg: b"",
    m.CloseComplete: lambda msg: b"",
    m.NoData: lambda msg: b"",
    m.ParameterDescription: lambda msg: _u32s(msg.param_oids),
    m.PortalSuspended: lambda msg: b"",
    m.CopyInResponse: lambda msg: bytes([msg.format]) + _i16s(msg.column_formats),
    m.CopyOutResponse: lambda msg: bytes([msg.format]) + _i16s(msg.column_formats),
    m.CopyData: lambda msg: msg.data,
    m.CopyDone: lambda msg: b"",
}


def encode(msg: m.BackendMessage) -> bytes:
    """Frame one backend message."""
    body = _BACKEND_ENCODERS[type(msg)](msg)
    return _HEADER.pack(msg.TYPE, 4 + len(body)) + body


def _decode_auth(body: _Body) -> m.BackendMessage:
    kind = body.int32()
    if kind == 0:
        return m.AuthenticationOk()
    if kind == 3:
        return m.AuthenticationCleartextPassword()
    if kind == 5:
        return m.AuthenticationMD5Password(body.take(4))
    if kind == 10:
        mechanisms = []
        while name := body.cstring():
            mechanisms.append(name)
        return m.AuthenticationSASL(tuple(mechanisms))
    if kind == 11:
        return m.AuthenticationSASLContinue(body.rest())
    if kind == 12:
        return m.AuthenticationSASLFinal(body.rest())
    raise ProtocolViolation(f"unknown authentication request {kind}")


def _decode_row_description(body: _Body) -> m.RowDescription:
    fields = []
    for _ in range(body.int16()):
        name = body.cstring()
        table_oid, attnum, type_oid, size, modifier, fmt = struct.unpack("!IhIhih", body.take(18))
        fields.append(m.FieldDescription(name, table_oid, attnum, type_oid, size, modifier, fmt))
    return m.RowDescription(tuple(fields))


_BACKEND_DECODERS: dict[bytes, Callable[[_Body], Any]] = {
    b"R": _decode_auth,
    b"S": lambda body: m.ParameterStatus(body.cstring(), body.cstring()),
    b"A": lambda body: m.NotificationResponse(body.int32(), body.cstring(), body.cstring()),
    b"K": lambda body: m.BackendKeyData(body.int32(), body.int32()),
    b"v": lambda body: m.NegotiateProtocolVersion(
        body.int32(), tuple(body.cstring() for _ in range(body.int32()))
    ),
    b"Z": lambda body: m.ReadyForQuery(body.byte()),
    b"T": _decode_row_description,
    b"D": lambda body: m.DataRow(tuple(_read_value(body) for _ in range(body.int16()))),
    b"C": lambda body: m.CommandComplete(body.cstring()),
    b"I": lambda body: m.EmptyQueryResponse(),
    b"E": lambda body: m.ErrorResponse(_read_fields(body)),
    b"N": lambda body: m.NoticeResponse(_read_fields(body)),
    b"1": lambda body: m.ParseComplete(),
    b"2": lambda body: m.BindComplete(),
    b"3": lambda body: m.CloseComplete(),
    b"n": lambda body: m.NoData(),
    b"t": lambda body: m.ParameterDescription(tuple(body.uint32() for _ in range(body.int16()))),
    b"s": lambda body: m.PortalSuspended(),
    b"G": lambda body: m.CopyInResponse(body.take(1)[0], _read_i16s(body)),
    b"H": lambda body: m.CopyOutResponse(body.take(1)[0], _read_i16s(body)),
    b"d": lambda body: m.CopyData(body.rest()),
    b"c": lambda body: m.CopyDone(),
}


def decode_backend(type_code: bytes, payload: bytes) -> m.BackendMessage:
    """Decode one backend message body (the client side)."""
    decoder = _BACKEND_DECODERS.get(type_code)
    if decoder is None:
        raise ProtocolViolation(f"unknown backend message type {type_code!r}")
    body = _Body(payload)
    msg: m.BackendMessage = decoder(body)
    if not body.at_end():
        raise ProtocolViolation(f"invalid message format: {len(payload)}-byte {type(msg).__name__}")
    return msg


class BackendDecoder:
    """Splits the server's byte stream into backend messages (the client side)."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def __iter__(self) -> Iterator[m.BackendMessage]:
        while len(self._buffer) >= 5:
            type_code, length = _HEADER.unpack_from(self._buffer, 0)
            if len(self._buffer) < 1 + length:
                return
            payload = bytes(self._buffer[5 : 1 + length])
            del self._buffer[: 1 + length]
            yield decode_backend(type_code, payload)


# -- result rows ------------------------------------------------------------------------------


class ColumnValues(NamedTuple):
    """One result column's encoded values: ``lengths`` per row (-1 for NULL) and their bytes.

    ``data`` holds the non-NULL values back to back, in row order.
    """

    lengths: np.ndarray
    data: np.ndarray


def _put_int(out: np.ndarray, positions: np.ndarray, values: np.ndarray, dtype: str) -> None:
    raw = np.ascontiguousarray(values, dtype=dtype).view(np.uint8)
    width = raw.size // max(len(positions), 1)
    out[positions[:, None] + np.arange(width)] = raw.reshape(len(positions), width)


_SMALL_BATCH_FIELDS = 256
_NULL_FIELD = _I32.pack(-1)


def _encode_few_data_rows(
    columns: Sequence[ColumnValues], row_count: int, type_code: bytes = b"D"
) -> bytes:
    """Frame a handful of rows one by one: numpy's per-call overhead would dominate them."""
    lengths = [c.lengths.tolist() for c in columns]
    data = [c.data.tobytes() for c in columns]
    positions = [0] * len(columns)
    column_count = _I16.pack(len(columns))
    out = bytearray()
    # Per row: below _SMALL_BATCH_FIELDS fields this loop beats the vectorised framing.
    for row_idx in range(row_count):
        parts = [column_count]
        for column_idx, column_lengths in enumerate(lengths):
            length = column_lengths[row_idx]
            if length < 0:
                parts.append(_NULL_FIELD)
                continue
            start = positions[column_idx]
            parts.append(_I32.pack(length) + data[column_idx][start : start + length])
            positions[column_idx] = start + length
        body = b"".join(parts)
        out += type_code + _I32.pack(4 + len(body)) + body
    return bytes(out)


def frame_rows(
    columns: Sequence[Sequence[bytes | None]], row_count: int, type_code: bytes = b"D"
) -> bytes:
    """DataRow messages of a few rows whose fields are already bytes (None for NULL),
    column by column: ``encode_data_rows`` without the arrays in between."""
    column_count = _I16.pack(len(columns))
    if row_count == 1:
        return _frame_row([column[0] for column in columns], column_count, type_code)
    out = bytearray()
    for row_idx in range(row_count):
        parts = [column_count]
        for column in columns:
            value = column[row_idx]
            if value is None:
                parts.append(_NULL_FIELD)
            else:
                parts.append(_I32.pack(len(value)))
                parts.append(value)
        body = b"".join(parts)
        out += type_code + _I32.pack(4 + len(body)) + body
    return bytes(out)


def _frame_row(values: list[bytes | None], column_count: bytes, type_code: bytes) -> bytes:
    """One DataRow (a point select's answer) in one join."""
    parts = [type_code, b"", column_count]
    size = 6
    for value in values:
        if value is None:
            parts.append(_NULL_FIELD)
            size += 4
        else:
            parts.append(_I32.pack(len(value)))
            parts.append(value)
            size += 4 + len(value)
    parts[1] = _I32.pack(size)
    return b"".join(parts)


def encode_data_rows(
    columns: Sequence[ColumnValues], row_count: int, type_code: bytes = b"D"
) -> bytes:
    """Frame ``row_count`` DataRow messages from encoded columns, vectorised over rows.

    Each row is ``'D' | int32 length | int16 ncols | (int32 len | bytes)*``; the
    byte offsets of every field are computed with cumulative sums and every
    column is scattered into one output buffer with a single fancy assignment.
    """
    if row_count == 0:
        return b""
    if row_count * max(len(columns), 1) <= _SMALL_BATCH_FIELDS:
        return _encode_few_data_rows(columns, row_count, type_code)
    sizes = [4 + np.maximum(c.lengths, 0).astype(np.int64) for c in columns]
    body_lengths = np.full(row_count, 4 + 2, dtype=np.int64)
    for size in sizes:
        body_lengths += size
    starts = np.zeros(row_count + 1, dtype=np.int64)
    np.cumsum(body_lengths + 1, out=starts[1:])
    out = np.empty(int(starts[-1]), dtype=np.uint8)
    row_starts = starts[:-1]
    out[row_starts] = type_code[0]
    _put_int(out, row_starts + 1, body_lengths, ">i4")
    _put_int(out, row_starts + 5, np.full(row_count, len(columns)), ">i2")
    cursor = row_starts + 7
    for column, size in zip(columns, sizes, strict=True):
        _put_int(out, cursor, column.lengths, ">i4")
        if column.data.size:
            payload = np.maximum(column.lengths, 0).astype(np.int64)
            source_starts = np.cumsum(payload) - payload
            targets = np.repeat(cursor + 4 - source_starts, payload)
            targets += np.arange(column.data.size, dtype=np.int64)
            out[targets] = column.data
        cursor = cursor + size
    return out.tobytes()


_COMMON_FRAMES.update(
    (encode_frontend(msg), msg)
    for msg in (
        m.Sync(),
        m.Flush(),
        m.Execute("", 0),
        m.Describe("P", ""),
        m.Describe("S", ""),
        m.Close("P", ""),
        m.Close("S", ""),
    )
)
_COMMON_FRAME_BODY = max(len(frame) for frame in _COMMON_FRAMES) - 1
