"""Pipelined batches: a run of Bind/Execute of one prepared INSERT, UPDATE or DELETE before
Sync, as one write.

psycopg's ``executemany``, pgjdbc's ``executeBatch`` and Spark's JDBC writer
send one Bind and one Execute per row, then Sync.  Taken one at a time, each
row pays a statement's fixed cost; taken together they are one write
(vectorised where the rows allow: see ``sql.dml.key_writes``).  ``take_run``
lifts such a run out of the messages already received (it never waits for
more), and the connection applies all but its last pair
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


def take_run(
    first: m.Bind, decoder: codec.FrontendDecoder
) -> tuple[list[m.FrontendMessage | DbError], list[Row]]:
    """``first`` and the messages after it that are already buffered, as long as they go on
    Bind, [Describe portal], Execute, Bind, ... of the same statement into the unnamed portal
    (the message that broke the run, or the error decoding it raised, ends the list); and the
    whole rows that open it."""
    taken: list[m.FrontendMessage | DbError] = [first]
    rows: list[Row] = []
    bind: m.Bind | None = first
    described = False
    next_message, next_if = decoder.next_message, decoder.next_if
    while True:
        if bind is not None:
            # The usual row, [Describe portal ""], Execute "" 0, compared rather than decoded.
            if not described and next_if(_DESCRIBE_FRAMED):
                taken.append(_DESCRIBE)
                described = True
            if next_if(_EXECUTE_FRAMED):
                taken.append(_EXECUTE)
                rows.append(Row(bind, described, len(taken) - 1))
                bind = None
                continue
        try:
            message = next_message()
        except DbError as exc:
            taken.append(exc)
            return taken, rows
        if message is None:
            return taken, rows
        taken.append(message)
        if bind is not None:
            if isinstance(message, m.Describe) and message.kind == "P" and not message.name:
                if described:
                    return taken, rows
                described = True
                continue
            if not isinstance(message, m.Execute) or message.portal != "":
                return taken, rows
            rows.append(Row(bind, described, len(taken) - 1))
            bind = None
        elif (
            isinstance(message, m.Bind)
            and message.portal == ""
            and message.statement == first.statement
            and message.param_formats == first.param_formats
            and message.result_formats == first.result_formats
        ):
            bind, described = message, False
        else:
            return taken, rows


def bind_rows(
    binds: Sequence[m.Bind], param_oids: Sequence[int], date_order: str
) -> list[list[object]]:
    """The parameters of every Bind of a run, decoded by the statement's parameter types (the
    run shares its format codes: ``take_run`` sees to it).  Any DbError means the run is to be
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
        values = iter(param_columns.decode_column(raws, oid, fmt, indices[0] + 1, date_order))
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
