"""COPY in the protocol: the CopyIn exchange and the CopyOut stream of text, CSV or binary rows.

COPY FROM STDIN: the backend sends CopyInResponse and takes CopyData until
CopyDone (then CommandComplete ``COPY n``) or CopyFail (57014).  CopyData is
gathered on the event loop and handed to the statement's ``CopyIn`` sink on a
worker thread once ``FEED_BYTES`` have arrived, so the sink parses batches.
Flush and Sync are ignored while copying, as PostgreSQL does; any other
message is a protocol violation that ends the COPY.

COPY TO STDOUT: CopyOutResponse, then one CopyData per row, formatted batch
by batch with Arrow string kernels (text escapes, CSV quoting) and framed
with numpy; binary tuples are DataRow bodies with another type byte, so they
come from the same encoder.  Then CopyDone and ``COPY n``.  ``FORMAT arrow``
streams an Arrow IPC stream instead (``arrow_copy``).
"""

from __future__ import annotations

import struct
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from server import messages as m
from server import pgtypes
from server.arrow_copy import ArrowCopyOutStream
from server.codec import encode
from server.portal import Fetched, ResultStream
from sql.common.result import Result
from sql.frontend.statements import CopyOptions
from storage.errors import ProtocolViolation, QueryCanceled

FEED_BYTES = 1024 * 1024
BINARY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
_BINARY_TRAILER = struct.pack("!h", -1)
_TEXT_ESCAPES = (
    ("\\", "\\\\"),
    ("\b", "\\b"),
    ("\f", "\\f"),
    ("\n", "\\n"),
    ("\r", "\\r"),
    ("\t", "\\t"),
    ("\v", "\\v"),
)


# -- COPY FROM STDIN -------------------------------------------------------------------------


def copy_in_response(sink: Any) -> m.CopyInResponse:
    fmt = 1 if sink.options.is_binary else 0
    return m.CopyInResponse(fmt, (fmt,) * sink.column_count)


async def copy_in(
    sink: Any,
    receive: Callable[[], Awaitable[m.FrontendMessage | None]],
    run: Callable[..., Awaitable[Any]],
    is_cancelled: Callable[[], bool] = lambda: False,
) -> str:
    """Take CopyData until CopyDone and return the command tag; raise on CopyFail or an error.

    ``run`` calls a function on a worker thread.  A lost connection, a
    protocol error or a cancel (``is_cancelled``, checked as each message
    arrives) aborts the sink, so nothing of the COPY is written.
    """
    pending: list[bytes] = []
    size = 0
    try:
        while True:
            message = await receive()
            if is_cancelled():
                raise QueryCanceled("canceling statement due to user request")
            if isinstance(message, m.CopyData):
                pending.append(message.data)
                size += len(message.data)
                if size >= FEED_BYTES:
                    data, pending, size = b"".join(pending), [], 0
                    await run(sink.feed, data)
            elif isinstance(message, m.CopyDone):
                if pending:
                    await run(sink.feed, b"".join(pending))
                tag: str = await run(sink.finish)
                return tag
            elif isinstance(message, m.CopyFail):
                await run(sink.fail, message.message)
            elif isinstance(message, (m.Flush, m.Sync)):
                continue
            elif message is None or isinstance(message, m.Terminate):
                raise ConnectionError("client left during COPY FROM STDIN")
            else:
                code: bytes = getattr(message, "TYPE", b"") or getattr(message, "type_code", b"?")
                raise ProtocolViolation(
                    f"unexpected message type 0x{code[0]:02X} during COPY from stdin"
                )
    except BaseException:
        await run(sink.abort)
        raise


# -- COPY TO STDOUT --------------------------------------------------------------------------


def copy_out_stream(result: Result) -> CopyOutStream | ArrowCopyOutStream:
    """The stream that sends a COPY TO's rows in the format it asked for."""
    if result.copy_out.is_arrow:
        return ArrowCopyOutStream(result)
    return CopyOutStream(result)


class CopyOutStream(ResultStream):
    """A COPY TO's rows as CopyData messages, ending with CopyDone; its tag is ``COPY n``."""

    def __init__(self, result: Result) -> None:
        options: CopyOptions = result.copy_out
        fmt = 1 if options.is_binary else 0
        super().__init__(result, (fmt,) if result.columns else ())
        self.options = options
        self._is_started = False

    def response(self) -> bytes:
        fmt = 1 if self.options.is_binary else 0
        return encode(m.CopyOutResponse(fmt, (fmt,) * len(self.type_oids)))

    def command_tag(self, sent: int) -> str:
        return f"COPY {sent}"

    def fetch(self, max_rows: int) -> Fetched:
        """Pull and format up to ``max_rows`` rows as CopyData (worker thread)."""
        binary = self.options.is_binary
        parts: list[bytes] = []
        prefix = b""
        if not self._is_started:
            self._is_started = True
            prefix = self._prefix()
            if prefix and not binary:
                parts.append(encode(m.CopyData(prefix)))
                prefix = b""
        count = 0
        while count < max_rows:
            batch = self.rows.take(max_rows - count)
            if batch is None:
                break
            data = self._encode(batch)
            if prefix and data:
                data = _prepend_to_first_message(prefix, data)
                prefix = b""
            parts.append(data)
            count += batch.num_rows
        if self.rows.is_exhausted:
            if binary:
                parts.append(encode(m.CopyData(prefix + _BINARY_TRAILER)))
            parts.append(encode(m.CopyDone()))
        elif prefix:
            self._is_started = False
        return Fetched(b"".join(parts), count, self.rows.is_exhausted)

    def _prefix(self) -> bytes:
        """The binary signature, or the header line of text and CSV (b"" if none)."""
        if self.options.is_binary:
            return BINARY_SIGNATURE
        if not self.options.header:
            return b""
        cells = [pa.array([c.name], pa.string()) for c in self.result.columns or ()]
        line = self._join([self._format_cell(cell, force=False) for cell in cells])
        return str(line[0].as_py()).encode("utf-8")

    def _encode(self, batch: pa.RecordBatch) -> bytes:
        if self.options.is_binary:
            return pgtypes.encode_rows(batch, self.type_oids, self.formats, type_code=b"d")
        force_all = self.options.force_quote_all
        forced = set(self.options.force_quote or ())
        columns = self.result.columns or ()
        cells = [
            self._format_cell(
                pgtypes.text_column(
                    batch.column(i),
                    oid,
                    self.result.date_style,
                    self.result.interval_style,
                    self.result.bytea_output,
                ).cast(pa.string()),
                force=force_all or columns[i].name in forced,
            )
            for i, oid in enumerate(self.type_oids)
        ]
        return frame_copy_data(self._join(cells))

    def _join(self, cells: list[pa.Array]) -> pa.Array:
        delimiter = self.options.delimiter or "\t"
        if not cells:
            return pa.array([""] * 0, pa.string())
        line = pc.binary_join_element_wise(*cells, delimiter) if len(cells) > 1 else cells[0]
        return pc.binary_join_element_wise(line, pa.scalar(""), "\n")

    def _format_cell(self, values: pa.Array, force: bool) -> pa.Array:
        options = self.options
        null = options.null if options.null is not None else ""
        if not options.is_csv:
            escaped = values
            for plain, replacement in _TEXT_ESCAPES:
                escaped = pc.replace_substring(escaped, plain, replacement)
            if options.delimiter not in (None, "\t"):
                escaped = pc.replace_substring(escaped, options.delimiter, "\\" + options.delimiter)
            return pc.fill_null(escaped, null)
        quote = options.quote or '"'
        escape = options.escape or quote
        body = values
        if escape != quote:
            body = pc.replace_substring(body, escape, escape + escape)
        body = pc.replace_substring(body, quote, escape + quote)
        quoted = pc.binary_join_element_wise(pa.scalar(quote), body, pa.scalar(quote), "")
        if force:
            needs = pc.is_valid(values)
        else:
            needs = pc.equal(values, null)
            for special in (options.delimiter or ",", quote, "\n", "\r"):
                needs = pc.or_(needs, pc.match_substring(values, special))
            if len(self.type_oids) == 1:
                needs = pc.or_(needs, pc.equal(values, "\\."))
        return pc.fill_null(pc.if_else(needs, quoted, values), null)


def frame_copy_data(lines: pa.Array) -> bytes:
    """One CopyData message per string of ``lines``, framed with numpy in one pass."""
    count = len(lines)
    if count == 0:
        return b""
    lines = lines.cast(pa.large_binary())
    buffers = lines.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64)[lines.offset : lines.offset + count + 1]
    data = (
        np.frombuffer(buffers[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
        if buffers[2] is not None
        else np.empty(0, dtype=np.uint8)
    )
    lengths = np.diff(offsets)
    sizes = lengths + 5
    starts = np.cumsum(sizes) - sizes
    out = np.empty(int(sizes.sum()), dtype=np.uint8)
    out[starts] = ord("d")
    header = (lengths + 4).astype(">i4").view(np.uint8).reshape(count, 4)
    out[starts[:, None] + 1 + np.arange(4)] = header
    if data.size:
        source_starts = offsets[:-1] - offsets[0]
        targets = np.repeat(starts + 5 - source_starts, lengths) + np.arange(data.size)
        out[targets] = data
    return out.tobytes()


def _prepend_to_first_message(prefix: bytes, framed: bytes) -> bytes:
    """Put ``prefix`` at the start of the first CopyData of ``framed`` (the binary signature)."""
    (length,) = struct.unpack_from("!i", framed, 1)
    return b"d" + struct.pack("!i", length + len(prefix)) + prefix + framed[5:]
