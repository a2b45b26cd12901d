"""Pipelined batches: a run of Bind/Execute of one prepared INSERT, UPDATE or DELETE before
Sync, as one write.

psycopg's ``executemany``, pgjdbc's ``executeBatch`` and Spark's JDBC writer
send one Bind and one Execute per row, then Sync.  Taken one at a time, each
row pays a statement's fixed cost; taken together they are one write
(vectorised where the rows allow: see ``sql.dml.key_writes``).  ``RunTaker``
lifts such a run out of the messages received, the connection reading more while
the run goes on unbroken (up to ``MAX_RUN_VALUES`` parameters; a client sends
Sync or Flush before it waits for answers), and applies all but its last pair
through ``Session.execute_batch``; the last pair runs as usual, so the portal
is left as PostgreSQL leaves it.  When the batch cannot be applied whole,
nothing of it is written and the messages are answered one by one, which
gives exactly PostgreSQL's answers: the rows before a failing one complete,
that row's ErrorResponse follows, and the rest is skipped to Sync.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence

import numpy as np

from server import codec, metrics, param_columns
from server import messages as m
from server.portal import resolve_formats
from storage.errors import ProtocolViolation

MIN_BATCH_ROWS = 2
"""Fewer batched rows than this run one by one: a batch would save nothing."""


_DESCRIBE_FRAMED = codec.encode_frontend(m.Describe("P", ""))
_EXECUTE_HEAD = codec.encode_frontend(m.Execute("", 0))[:6]
"""An Execute of the unnamed portal up to its row limit (any limit: a write returns no rows)."""
_EXECUTE_BYTES = len(_EXECUTE_HEAD) + 4
_DESCRIBED_HEAD = _DESCRIBE_FRAMED + _EXECUTE_HEAD
_DESCRIBED_BYTES = len(_DESCRIBE_FRAMED) + _EXECUTE_BYTES
_LONE_ENDS = tuple(
    b"".join(codec.encode_frontend(message) for message in messages)
    for messages in (
        (m.Execute("", 0), m.Sync()),
        (m.Describe("P", ""), m.Execute("", 0), m.Sync()),
    )
)


def is_lone(decoder: codec.FrontendDecoder) -> bool:
    """Whether the Bind just taken is followed by its Execute (maybe after a Describe of the
    portal) and Sync: one row, no run (a single write's messages, recognised without
    taking them)."""
    return decoder.starts_with(_LONE_ENDS[0]) or decoder.starts_with(_LONE_ENDS[1])


MAX_RUN_VALUES = 1 << 20
"""A run waits for more of its rows from the client until it holds this many parameters."""


class RunTaker:
    """Frames ``first`` and the rows after it in the decoder's buffer, as long as they go on
    [Describe portal], Execute, Bind, ... of the same statement into the unnamed portal,
    without taking any of them: ``take_rows`` takes the rows applied, and whatever is not
    taken is decoded message by message as usual (so a row that breaks the run, a Bind
    cut short or with the wrong parameter count, gets exactly PostgreSQL's answer).

    Each row is found by comparing bytes, not by decoding messages: every Bind of the run
    shares its first Bind's bytes up to its parameter values (portal, statement, format
    codes, parameter count) and after them (result formats), so a row is its frame length,
    two comparisons and its Execute.  Its parameter values are framed afterwards for all
    rows at once, a parameter at a time (``columns``).  ``scan`` lifts what is buffered;
    when it stops only because the buffer ran out, the connection may read more and call it
    again (``waiting``): pgjdbc sends a batch of 10,000 rows in several reads' worth of
    messages before its Sync, and a run cut at each read's end was a few hundred rows a
    tablet, too few for a bulk insert."""

    def __init__(self, first: m.Bind, decoder: codec.FrontendDecoder) -> None:
        self._first = first
        self._decoder = decoder
        self._head, self._tail = codec.bind_frame_ends(first)
        self._width = max(len(first.params), 1)
        self._base = decoder.taken_bytes
        self._first_end = 0
        """Where the first row's Execute ends, from the first unread byte (its Bind was
        taken and decoded already); 0 until it is found."""
        self._starts: list[int] = []
        """Where each later row's Bind starts, from the first unread byte."""
        self._end = 0
        """Where the last row framed ends."""
        self._broken = False
        self.described: list[bool] = []
        """Whether a Describe of the portal came before each row's Execute (libpq's
        ``PQsendQueryPrepared`` sends one), for the rows ``columns`` framed."""

    @property
    def rows(self) -> int:
        return 1 + len(self._starts) if self._first_end else 0

    @property
    def waiting(self) -> bool:
        """Whether the run may go on past what is buffered (nothing broke it, and it is not
        yet as large as a run gets)."""
        return not self._broken and self.rows * self._width < MAX_RUN_VALUES

    def end(self, rows: int) -> int:
        """Where the first ``rows`` rows end, from the first unread byte."""
        if rows <= 0:
            return 0
        return self._starts[rows - 1] if rows <= len(self._starts) else self._end

    def scan(self) -> None:
        """Frame the rows the decoder holds (it never waits for more)."""
        decoder = self._decoder
        assert decoder.taken_bytes == self._base, "nothing is taken while a run is framed"
        buffer, start = decoder.unread()
        if not self._first_end:
            self._first_row(buffer, start)
            if self._broken:
                return
        head, tail, limit = self._head, self._tail, decoder.max_message_size_bytes
        tail_size = len(tail)
        tail_executed, tail_described = tail + _EXECUTE_HEAD, tail + _DESCRIBED_HEAD
        shortest = 4 + len(head) + tail_size
        size, unpack, starts = len(buffer), codec.FRAME_HEADER.unpack_from, self._starts
        rows_left = MAX_RUN_VALUES // self._width - self.rows
        at = start + self._end
        while rows_left > 0:
            if at + 5 > size:
                break
            type_code, length = unpack(buffer, at)
            if type_code != b"B" or not shortest <= length <= limit:
                self._broken = True
                break
            bind_end = at + 1 + length
            if bind_end > size:
                break
            if not buffer.startswith(head, at + 5):
                self._broken = True
                break
            if buffer.startswith(tail_executed, bind_end - tail_size):
                row_end = bind_end + _EXECUTE_BYTES
            elif buffer.startswith(tail_described, bind_end - tail_size):
                row_end = bind_end + _DESCRIBED_BYTES
            else:
                # The result formats differ, or what follows is not (the start of) this
                # row's Execute: the run ends here.
                rest = bytes(buffer[bind_end:size])
                self._broken = not buffer.startswith(tail, bind_end - tail_size) or not (
                    _EXECUTE_HEAD.startswith(rest) or _DESCRIBED_HEAD.startswith(rest)
                )
                break
            if row_end > size:
                break
            starts.append(at - start)
            rows_left -= 1
            at = row_end
        self._end = at - start

    def _first_row(self, buffer: bytearray, start: int) -> None:
        """The first row: its Bind is decoded; its [Describe,] Execute are to come."""
        if buffer.startswith(_EXECUTE_HEAD, start):
            end = _EXECUTE_BYTES
        elif buffer.startswith(_DESCRIBED_HEAD, start):
            end = _DESCRIBED_BYTES
        else:
            end = 0
        if not end or start + end > len(buffer):
            self._broken = True  # not worth waiting for: the client sent the rest in one go
            return
        self._first_end = self._end = end

    def columns(self, rows: int) -> tuple[int, list[list[bytes | None]]]:
        """How many of the first ``rows`` rows are well formed, and their parameter values, a
        list per parameter: a Bind whose values do not fill it exactly ends the run before
        its row (that Bind is then decoded, and refused, on its own).  Sets ``described``."""
        buffer, start = self._decoder.unread()
        data = bytes(buffer[start : start + self.end(rows)])
        raw = np.frombuffer(data, dtype=np.uint8)
        starts = np.asarray(self._starts[: rows - 1], dtype=np.int64)
        ends = np.asarray([*self._starts[1 : rows - 1], self.end(rows)], dtype=np.int64)
        lengths = _int32s(raw, starts + 1)
        bind_ends = starts + 1 + lengths
        value_starts = starts + 5 + len(self._head)
        value_ends = bind_ends - len(self._tail)
        count = len(self._first.params)
        if len(starts) >= _VECTOR_ROWS:
            kept, columns = _columns_of_many(raw, data, value_starts, value_ends, count)
        else:
            kept, columns = _columns_of_few(data, value_starts.tolist(), value_ends.tolist(), count)
        if kept < len(starts):
            self._broken = True
        first = self._first
        self.described = [self._first_end == _DESCRIBED_BYTES]
        self.described += (ends[:kept] - bind_ends[:kept] == _DESCRIBED_BYTES).tolist()
        return 1 + kept, [[first.params[index], *column] for index, column in enumerate(columns)]

    def take_rows(self, rows: int) -> None:
        """Take the first ``rows`` rows' messages from the decoder (they were applied)."""
        self._decoder.skip(self.end(rows))


_VECTOR_ROWS = 32
"""From this many rows a run's values are framed a parameter at a time, vectorised over
its rows; below it (pgjdbc's rewritten multi-row INSERTs: a few Binds of hundreds of values)
a row at a time, as a Bind's own decoding does."""
_INT32_BYTES = np.arange(4, dtype=np.int64)


def _columns_of_few(
    data: bytes, starts: list[int], stops: list[int], count: int
) -> tuple[int, list[list[bytes | None]]]:
    """``_columns_of_many``, a row at a time."""
    rows: list[list[bytes | None]] = []
    for start, stop in zip(starts, stops, strict=True):
        values = codec.split_values(data, start, stop, count)
        if values is None:
            break
        rows.append(values)
    if not rows:
        return 0, [[] for _ in range(count)]
    return len(rows), [list(column) for column in zip(*rows, strict=True)]


def _int32s(raw: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The big-endian int32 at each of ``at`` in ``raw``."""
    return raw[at[:, None] + _INT32_BYTES].view(">i4").ravel().astype(np.int64)


def _columns_of_many(
    raw: np.ndarray, data: bytes, starts: np.ndarray, stops: np.ndarray, count: int
) -> tuple[int, list[list[bytes | None]]]:
    """The ``count`` length-prefixed values (-1: NULL) between each of ``starts`` and its
    ``stops`` in ``data``, a list per value, framed one value position at a time for all
    rows at once; how many rows, from the first, hold exactly ``count`` values."""
    cursor, ends = starts, stops
    good = np.ones(len(cursor), dtype=bool)
    offsets: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    for _ in range(count):
        good &= cursor + 4 <= ends
        at = np.where(good, cursor, 0)
        length = _int32s(raw, at)
        size = np.maximum(length, 0)
        good &= (length >= -1) & (cursor + 4 + size <= ends)
        offsets.append(cursor + 4)
        lengths.append(length)
        cursor = cursor + 4 + size
    good &= cursor == ends
    kept = len(good) if good.all() else int(np.argmin(good))
    columns: list[list[bytes | None]] = []
    for offset, length in zip(offsets, lengths, strict=True):
        columns.append(
            [
                None if size < 0 else data[at : at + size]
                for at, size in zip(offset[:kept].tolist(), length[:kept].tolist(), strict=True)
            ]
        )
    return kept, columns


def bind_rows(
    first: m.Bind,
    rows: int,
    columns: Sequence[Sequence[bytes | None]],
    param_oids: Sequence[int],
    date_order: str,
    zone: str = "UTC",
) -> list[list[object]]:
    """The parameters of every row of a run, decoded by the statement's parameter types
    (the run shares its first Bind's format codes: ``RunTaker`` sees to it), a row per list.
    Any DbError means the run is to be answered one by one, where each Bind reports its own
    error.  Decoded column by column (``param_columns``)."""
    expected = len(param_oids)
    formats = resolve_formats(first.param_formats, expected, "parameter")
    if len(columns) != expected:
        raise ProtocolViolation("bind message supplies the wrong number of parameters")
    if not columns:
        return [[] for _ in range(rows)]
    # Parameters of one type are decoded together: a multi-row VALUES (reWriteBatchedInserts)
    # has as many of each as it has rows.
    groups: dict[tuple[int, int], list[int]] = {}
    for index, kind in enumerate(zip(param_oids, formats, strict=True)):
        groups.setdefault(kind, []).append(index)
    decoded: list[list[object]] = [[] for _ in range(expected)]
    for (oid, fmt), indices in groups.items():
        raws = [raw for i in indices for raw in columns[i]]
        values = param_columns.decode_column(raws, oid, fmt, indices[0] + 1, date_order, zone)
        for position, i in enumerate(indices):
            decoded[i] = values[position * rows : (position + 1) * rows]
    return [list(row) for row in zip(*decoded, strict=True)]


def answers(described: Sequence[bool], tags: Sequence[str]) -> bytes:
    """What PostgreSQL answers to each row of an applied run: BindComplete, NoData if the
    portal was described, CommandComplete; each distinct answer encoded once."""
    encoded: dict[tuple[bool, str], bytes] = {}
    if len(tags) > 1 and len(set(described)) == 1 and len(set(tags)) == 1:
        return answers(described[:1], tags[:1]) * len(tags)  # the usual run: one answer
    out = bytearray()
    for was_described, tag in zip(described, tags, strict=True):
        answer = encoded.get((was_described, tag))
        if answer is None:
            answer = encoded[(was_described, tag)] = b"".join(
                codec.encode(message)
                for message in (
                    m.BindComplete(),
                    *((m.NoData(),) if was_described else ()),
                    m.CommandComplete(tag),
                )
            )
        out += answer
    return bytes(out)


def count_statements(tags: Sequence[str]) -> str:
    """Count the run's statements by kind (for /metrics); the kind of the last."""
    kind = ""
    for tag, count in collections.Counter(tags).items():
        kind = metrics.statement_kind(tag)
        metrics.TALLY.count(kind, count)
    return kind
