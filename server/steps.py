"""What a statement's worker steps carry between event-loop turns: a Query's progress, one step's output.

A simple Query runs its statements on worker threads in steps that stop when
the output buffer fills, a COPY FROM needs the client's data, or the last
statement is done; these records carry the state across those steps.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from server.portal import ResultStream
from sql.common.result import Result


@dataclass(slots=True)
class QueryProgress:
    """Where a simple Query is: its statements' results, the one being sent, rows sent."""

    query: str
    results: Iterator[Result] | None = None
    stream: ResultStream | None = None
    sent: int = 0
    copy_in: Any = None

    def close(self) -> None:
        """Abandon the statements not yet run and the rows not yet sent (worker thread)."""
        if self.stream is not None:
            self.stream.close()
        close = getattr(self.results, "close", None)
        if close is not None:
            close()


@dataclass(slots=True)
class Step:
    """What one worker step produced: encoded messages, "done"/"suspended"/"more", or an error."""

    output: bytearray
    state: str
    error: Exception | None = None
    sent: int = 0
    copy_in: Any = None
