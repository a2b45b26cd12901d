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
from dataclasses import dataclass

from server import codec, metrics, param_columns
from server import messages as m
from server.portal import resolve_formats
from storage.errors import DbError, ProtocolViolation

MIN_BATCH_ROWS = 2
"""Fewer batched rows than this run one by one: a batch would save nothing."""


@dataclass(frozen=True, slots=True)
class Row:
    """One row of a run: its Bind, whether a Describe of the portal came before its Execute
    (libpq's ``PQsendQueryPrepared`` sends one), and where in the taken messages it ends."""

    bind: m.Bind
    described: bool
    end: int


_DESCRIBE = m.Describe("P", "")
_EXECUTE = m.Execute("", 0)
_DESCRIBE_FRAMED = codec.encode_frontend(_DESCRIBE)
_EXECUTE_FRAMED = codec.encode_frontend(_EXECUTE)


_LONE_ENDS = tuple(
    b"".join(codec.encode_frontend(message) for message in messages)
    for messages in ((_EXECUTE, m.Sync()), (_DESCRIBE, _EXECUTE, m.Sync()))
)


def is_lone(decoder: codec.FrontendDecoder) -> bool:
    """Whether the Bind just taken is followed by its Execute (maybe after a Describe of the
    portal) and Sync: one row, no run (a single write's messages, recognised without
    taking them)."""
    return decoder.starts_with(_LONE_ENDS[0]) or decoder.starts_with(_LONE_ENDS[1])


MAX_RUN_VALUES = 1 << 20
"""A run waits for more of its rows from the client until it holds this many parameters."""


class RunTaker:
    """Takes ``first`` and the messages after it, as long as they go on Bind, [Describe
    portal], Execute, Bind, ... of the same statement into the unnamed portal.

    ``take`` lifts what is buffered; when it stops only because the buffer ran out, the
    connection may read more and call it again (``waiting``): pgjdbc sends a batch of
    10,000 rows in several reads' worth of messages before its Sync, and a run cut at each
    read's end was a few hundred rows a tablet, too few for a bulk insert.  ``taken`` ends
    with the message that broke the run (or the error decoding it raised), if any."""

    def __init__(self, first: m.Bind) -> None:
        self.taken: list[m.FrontendMessage | DbError] = [first]
        self.rows: list[Row] = []
        self._first = first
        self._bind: m.Bind | None = first
        self._described = False
        self._broken = False
        self._values = 0

    @property
    def waiting(self) -> bool:
        """Whether the run may go on past what is buffered (nothing broke it, and it is not
        yet as large as a run gets)."""
        return not self._broken and self._values < MAX_RUN_VALUES

    def take(self, decoder: codec.FrontendDecoder) -> None:
        """Take what ``decoder`` holds of the run (it never waits for more)."""
        taken, first = self.taken, self._first
        next_message, next_if = decoder.next_message, decoder.next_if
        while not self._broken:
            bind = self._bind
            if bind is not None:
                # The usual row, [Describe portal ""], Execute "" 0, compared rather than decoded.
                if not self._described and next_if(_DESCRIBE_FRAMED):
                    taken.append(_DESCRIBE)
                    self._described = True
                if next_if(_EXECUTE_FRAMED):
                    taken.append(_EXECUTE)
                    self._row_done(bind)
                    continue
            try:
                message = next_message()
            except DbError as exc:
                taken.append(exc)
                self._broken = True
                return
            if message is None:
                return
            taken.append(message)
            if bind is not None:
                if isinstance(message, m.Describe) and message.kind == "P" and not message.name:
                    if self._described:
                        self._broken = True
                        return
                    self._described = True
                    continue
                if not isinstance(message, m.Execute) or message.portal != "":
                    self._broken = True
                    return
                self._row_done(bind)
            elif (
                isinstance(message, m.Bind)
                and message.portal == ""
                and message.statement == first.statement
                and message.param_formats == first.param_formats
                and message.result_formats == first.result_formats
            ):
                self._bind, self._described = message, False
            else:
                self._broken = True

    def _row_done(self, bind: m.Bind) -> None:
        self.rows.append(Row(bind, self._described, len(self.taken) - 1))
        self._values += max(len(bind.params), 1)
        self._bind = None
        if self._values >= MAX_RUN_VALUES:
            self._broken = True


def bind_rows(
    binds: Sequence[m.Bind], param_oids: Sequence[int], date_order: str, zone: str = "UTC"
) -> list[list[object]]:
    """The parameters of every Bind of a run, decoded by the statement's parameter types (the
    run shares its format codes: ``RunTaker`` sees to it).  Any DbError means the run is to be
    answered one by one, where each Bind reports its own error.  Decoded column by column
    (``param_columns``)."""
    expected = len(param_oids)
    formats = resolve_formats(binds[0].param_formats, expected, "parameter")
    if any(len(bind.params) != expected for bind in binds):
        raise ProtocolViolation("bind message supplies the wrong number of parameters")
    # Parameters of one type are decoded together: a multi-row VALUES (reWriteBatchedInserts)
    # has as many of each as it has rows.
    groups: dict[tuple[int, int], list[int]] = {}
    for index, kind in enumerate(zip(param_oids, formats, strict=True)):
        groups.setdefault(kind, []).append(index)
    rows: list[list[object]] = [[None] * expected for _ in binds]
    for (oid, fmt), indices in groups.items():
        raws = [bind.params[i] for bind in binds for i in indices]
        values = iter(param_columns.decode_column(raws, oid, fmt, indices[0] + 1, date_order, zone))
        for row in rows:
            for i in indices:
                row[i] = next(values)
    return rows


def answers(rows: Sequence[Row], tags: Sequence[str]) -> bytes:
    """What PostgreSQL answers to each row of an applied run: BindComplete, NoData if the
    portal was described, CommandComplete; each distinct answer encoded once."""
    encoded: dict[tuple[bool, str], bytes] = {}
    out = bytearray()
    for row, tag in zip(rows, tags, strict=True):
        answer = encoded.get((row.described, tag))
        if answer is None:
            answer = encoded[(row.described, tag)] = b"".join(
                codec.encode(message)
                for message in (
                    m.BindComplete(),
                    *((m.NoData(),) if row.described else ()),
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
        metrics.statements(kind).inc(count)
    return kind
