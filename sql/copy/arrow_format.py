"""COPY's Arrow format on input: cut an Arrow IPC stream at message boundaries, read whole batches.

CopyData chunks cut the stream anywhere, and pyarrow reads IPC only from a
source that holds whole messages.  Each encapsulated message is
``0xFFFFFFFF``, an int32 metadata length, a flatbuffer ``Message`` (whose
``bodyLength`` says how many body bytes follow) and the body; a metadata
length of 0 ends the stream.  ``ArrowStreamCutter`` reads just those lengths,
so it knows when a message is complete without parsing the buffer twice, and
hands complete record batches to pyarrow together with the schema and the
dictionaries seen so far (a later batch may use a dictionary sent earlier).

Complete batches wait until they hold ``batch_bytes`` (or the stream ends):
clients send CopyData of 128 KiB (psycopg) holding a fraction of a batch, and
every write pays a fixed cost (planning the INSERT's projection, routing to
tablets, a segment per tablet), which profiling showed as a third of an Arrow
COPY's server time when each 10,000-row batch of a Spark task was its own write.
"""

from __future__ import annotations

import struct

import pyarrow as pa

from storage.errors import BadCopyFileFormat

_CONTINUATION = b"\xff\xff\xff\xff"
END_OF_STREAM = _CONTINUATION + b"\x00\x00\x00\x00"
# Message.header_type values (Arrow's Schema.fbs MessageHeader union).
_SCHEMA = 1
_DICTIONARY_BATCH = 2
_RECORD_BATCH = 3
_UINT16 = struct.Struct("<H")
_INT32 = struct.Struct("<i")
_INT64 = struct.Struct("<q")


class ArrowStreamCutter:
    """Bytes in, ``pa.Table``s out: one per ``batch_bytes`` of complete record batches."""

    def __init__(self, batch_bytes: int = 0) -> None:
        self._buffer = bytearray()
        self._schema: bytes | None = None
        self._dictionaries: list[bytes] = []
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._batch_bytes = batch_bytes
        self.saw_end = False

    @property
    def schema(self) -> pa.Schema | None:
        if self._schema is None:
            return None
        return pa.ipc.read_schema(pa.py_buffer(self._schema))

    def feed(self, data: bytes) -> pa.Table | None:
        """Take more of the stream; the record batches of ``batch_bytes`` or more (or up to the
        stream's end) it completes, or None while fewer wait."""
        if self.saw_end:
            if data:
                raise BadCopyFileFormat("data after the end of the Arrow stream")
            return None
        self._buffer += data
        batches = self._pending
        pos = 0
        while (cut := self._message_at(pos)) is not None:
            end, header_type = cut
            if header_type is None:
                self.saw_end = True
                pos = end
                break
            message = bytes(self._buffer[pos:end])
            if header_type == _SCHEMA:
                if self._schema is not None:
                    raise BadCopyFileFormat("a second schema in the Arrow stream")
                self._schema = message
            elif self._schema is None:
                raise BadCopyFileFormat("the Arrow stream does not start with a schema")
            elif header_type == _DICTIONARY_BATCH:
                self._dictionaries.append(message)
                batches.append(message)
            elif header_type == _RECORD_BATCH:
                batches.append(message)
                self._pending_bytes += len(message)
            else:
                raise BadCopyFileFormat(f"unexpected Arrow IPC message type {header_type}")
            pos = end
        del self._buffer[:pos]
        if self.saw_end and self._buffer:
            raise BadCopyFileFormat("data after the end of the Arrow stream")
        if self._pending_bytes >= self._batch_bytes or self.saw_end:
            return self._take()
        return None

    def finish(self) -> pa.Table | None:
        """End of COPY data: the stream must have ended, or at least stopped between messages;
        the record batches still waiting, or None."""
        if self._buffer:
            raise BadCopyFileFormat("unexpected EOF in COPY data")
        if self._schema is None:
            raise BadCopyFileFormat("COPY file signature not recognized")
        return self._take()

    def _take(self) -> pa.Table | None:
        """The waiting record batches read as one table (None: no batch waits)."""
        batches, self._pending, self._pending_bytes = self._pending, [], 0
        if not any(_header_type(b) == _RECORD_BATCH for b in batches):
            return None
        return self._read(batches)

    def _read(self, messages: list[bytes]) -> pa.Table:
        """Read ``messages`` as a stream: the schema, earlier dictionaries, then these."""
        assert self._schema is not None, "batches follow the schema"
        earlier = self._dictionaries[: len(self._dictionaries) - _count_dictionaries(messages)]
        stream = b"".join([self._schema, *earlier, *messages, END_OF_STREAM])
        try:
            return pa.ipc.open_stream(pa.py_buffer(stream)).read_all()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
            raise BadCopyFileFormat(f"invalid Arrow IPC stream: {exc}") from exc

    def _message_at(self, pos: int) -> tuple[int, int | None] | None:
        """(end, header type) of the whole message at ``pos``; header None at end of stream."""
        buffer = self._buffer
        if len(buffer) - pos < 8:
            return None
        if buffer[pos : pos + 4] == _CONTINUATION:
            pos += 4
        (length,) = _INT32.unpack_from(buffer, pos)
        pos += 4
        if length == 0:
            return pos, None
        if length < 0:
            raise BadCopyFileFormat("invalid Arrow IPC message length")
        if len(buffer) < pos + length:
            return None
        header_type, body = _message_fields(bytes(buffer[pos : pos + length]))
        end = pos + length + body
        return (end, header_type) if len(buffer) >= end else None


def _header_type(message: bytes) -> int:
    offset = 8 if message[:4] == _CONTINUATION else 4
    return _message_fields(message[offset:])[0]


def _count_dictionaries(messages: list[bytes]) -> int:
    return sum(_header_type(message) == _DICTIONARY_BATCH for message in messages)


def _message_fields(metadata: bytes) -> tuple[int, int]:
    """``header_type`` and ``bodyLength`` of a flatbuffer ``Message`` (fields 1 and 3)."""
    try:
        (table,) = _INT32.unpack_from(metadata, 0)
        (vtable_offset,) = _INT32.unpack_from(metadata, table)
        vtable = table - vtable_offset
        (vtable_size,) = _UINT16.unpack_from(metadata, vtable)

        def field(index: int) -> int:
            slot = 4 + 2 * index
            return _UINT16.unpack_from(metadata, vtable + slot)[0] if slot < vtable_size else 0

        header_at, body_at = field(1), field(3)
        header_type = metadata[table + header_at] if header_at else 0
        body = _INT64.unpack_from(metadata, table + body_at)[0] if body_at else 0
    except (struct.error, IndexError) as exc:
        raise BadCopyFileFormat("invalid Arrow IPC message") from exc
    if body < 0:
        raise BadCopyFileFormat("invalid Arrow IPC message")
    return header_type, body
