"""RowLockQueue: writers waiting on one row's lock wait in line; a release wakes only the first.

Without a line, every waiter sleeps on the holder's ``TxnState``: when the
holder finishes they all wake, race for the tablet lock, one wins, and the rest
find the winner's new write and go back to sleep, so n waiters cost n^2
wake-ups and retries (a thundering herd).  As with PostgreSQL's tuple lock,
only the first waiter of a row (the head) waits for the holder; the others wait
for their turn.  The head keeps its place until its write of the row is done,
its statement ends or it gives up; then the next waiter becomes head, retries
its write, finds the previous head's write and waits for that transaction.

A transaction holds a place in one line at a time (``Transaction`` leaves
every other line before it waits), so no waiter waits for a transaction the
waits-for graph does not know about for longer than a write takes.
"""

from __future__ import annotations

import collections
import threading

from storage.data_type import TabletId
from storage.mvcc import TxnState

RowId = tuple[TabletId, bytes]
"""A row lock's name: the tablet and the row's encoded key."""


class Ticket:
    """One transaction's place in one row's line."""

    __slots__ = ("row", "txn", "_turn")

    def __init__(self, row: RowId, txn: TxnState) -> None:
        self.row = row
        self.txn = txn
        self._turn = threading.Event()

    @property
    def is_head(self) -> bool:
        return self._turn.is_set()

    def wait_turn(self, timeout_s: float | None) -> bool:
        """Block until this ticket is at the head of its line; False on timeout."""
        return self._turn.wait(timeout_s)


class RowLockQueue:
    """The database's lines of row-lock waiters, first come first served; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: dict[RowId, collections.deque[Ticket]] = {}

    def join(self, row: RowId, txn: TxnState) -> Ticket:
        """Put ``txn`` at the end of ``row``'s line (at its head if the line is empty)."""
        ticket = Ticket(row, txn)
        with self._lock:
            line = self._lines.setdefault(row, collections.deque())
            line.append(ticket)
            if len(line) == 1:
                ticket._turn.set()
        return ticket

    def leave(self, ticket: Ticket) -> None:
        """Take ``ticket`` out of its line; if it was the head, the next waiter's turn comes."""
        with self._lock:
            line = self._lines.get(ticket.row)
            if line is None or ticket not in line:
                return
            was_head = line[0] is ticket
            line.remove(ticket)
            if not line:
                del self._lines[ticket.row]
            elif was_head:
                line[0]._turn.set()

    def has_line(self, row: RowId) -> bool:
        """Whether some transaction waits in ``row``'s line (or has just reached its head)."""
        with self._lock:
            return row in self._lines

    def waiting(self) -> int:
        """How many transactions wait in some line (a gauge for tests and status pages)."""
        with self._lock:
            return sum(len(line) for line in self._lines.values())
