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

from collections.abc import Callable
from dataclasses import dataclass

from server import messages as m
from storage.errors import DbError

MIN_BATCH_ROWS = 2
"""Fewer batched rows than this run one by one: a batch would save nothing."""


@dataclass(frozen=True, slots=True)
class Row:
    """One row of a run: its Bind, whether a Describe of the portal came before its Execute
    (libpq's ``PQsendQueryPrepared`` sends one), and where in the taken messages it ends."""

    bind: m.Bind
    described: bool
    end: int


def take_run(
    first: m.Bind, next_message: Callable[[], m.FrontendMessage | None]
) -> tuple[list[m.FrontendMessage | DbError], list[Row]]:
    """``first`` and the messages after it that are already buffered, as long as they go on
    Bind, [Describe portal], Execute, Bind, ... of the same statement into the unnamed portal
    (the message that broke the run, or the error decoding it raised, ends the list); and the
    whole rows that open it."""
    taken: list[m.FrontendMessage | DbError] = [first]
    rows: list[Row] = []
    bind: m.Bind | None = first
    described = False
    while True:
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
