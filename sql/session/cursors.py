"""SQL cursors: DECLARE ... CURSOR FOR <query>, FETCH, MOVE and CLOSE, as PostgreSQL runs them.

The statements are parsed by the frontend (``sql.frontend.cursors``).

A cursor starts its query at DECLARE, in the transaction block's snapshot,
and hands out rows as FETCH asks for them, pulling batches from the query's
stream only as far as needed.  Cursors end with their transaction; one
declared ``WITH HOLD`` is read to the end at COMMIT and lives on until
CLOSE or the end of the session.  Only forward fetching is supported, as
for PostgreSQL's ``NO SCROLL`` cursors.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa

from sql.common.result import Result, ResultColumn
from sql.frontend.statements import CursorStatement
from storage.errors import DuplicateCursor, InvalidCursorName, NoActiveSqlTransaction


@dataclass(slots=True)
class Cursor:
    """An open cursor: its row description and what is left of its result stream."""

    name: str
    columns: tuple[ResultColumn, ...]
    batches: Iterator[pa.RecordBatch]
    hold: bool
    statement: str = ""
    pending: list[pa.RecordBatch] = field(default_factory=list)
    materialised: bool = False

    def take(self, count: int | None) -> list[pa.RecordBatch]:
        """Up to ``count`` rows (all when None), as batches, removed from the cursor."""
        out: list[pa.RecordBatch] = []
        wanted = count
        while wanted is None or wanted > 0:
            if self.pending:
                batch = self.pending.pop(0)
            else:
                batch = next(self.batches, None)
                if batch is None:
                    break
            if wanted is not None and batch.num_rows > wanted:
                out.append(batch.slice(0, wanted))
                self.pending.insert(0, batch.slice(wanted))
                wanted = 0
                break
            out.append(batch)
            if wanted is not None:
                wanted -= batch.num_rows
        return out

    def materialise(self) -> None:
        """Read the rest of the stream now, so the cursor outlives its transaction."""
        self.pending.extend(self.batches)
        self.batches = iter(())
        self.materialised = True

    def close(self) -> None:
        close = getattr(self.batches, "close", None)
        if close is not None:
            close()


class Cursors:
    """A session's open cursors by name."""

    def __init__(self) -> None:
        self._open: dict[str, Cursor] = {}

    def declare(
        self,
        statement: CursorStatement,
        columns: tuple[ResultColumn, ...],
        batches: Iterator[pa.RecordBatch],
        in_block: bool,
    ) -> Result:
        if not in_block and not statement.hold:
            raise NoActiveSqlTransaction("DECLARE CURSOR can only be used in transaction blocks")
        if statement.name in self._open:
            raise DuplicateCursor(f'cursor "{statement.name}" already exists')
        cursor = Cursor(statement.name, columns, batches, statement.hold, statement.text)
        if not in_block:
            cursor.materialise()
        self._open[statement.name] = cursor
        return Result(command_tag="DECLARE CURSOR")

    def has(self, name: str) -> bool:
        return name in self._open

    def listing(self) -> tuple[tuple[str, str, bool], ...]:
        """(name, statement, holdable) of each open cursor, for pg_cursors."""
        return tuple((c.name, c.statement, c.hold) for c in self._open.values())

    def _get(self, name: str) -> Cursor:
        cursor = self._open.get(name)
        if cursor is None:
            raise InvalidCursorName(f'cursor "{name}" does not exist')
        return cursor

    def columns(self, name: str) -> tuple[ResultColumn, ...]:
        return self._get(name).columns

    def fetch(self, statement: CursorStatement) -> Result:
        cursor = self._get(statement.name)
        batches = cursor.take(statement.count)
        rows = sum(b.num_rows for b in batches)
        if statement.kind == "MOVE":
            return Result(command_tag=f"MOVE {rows}")
        return Result(columns=cursor.columns, batches=iter(batches), command_tag=f"FETCH {rows}")

    def close(self, statement: CursorStatement) -> Result:
        if not statement.name:
            self.close_all()
            return Result(command_tag="CLOSE CURSOR ALL")
        self._get(statement.name).close()
        del self._open[statement.name]
        return Result(command_tag="CLOSE CURSOR")

    def end_transaction(self, committed: bool) -> None:
        """Close the transaction's cursors; at COMMIT, keep WITH HOLD ones, read to the end."""
        for name, cursor in list(self._open.items()):
            if committed and cursor.hold:
                cursor.materialise()
                continue
            if cursor.materialised:
                continue
            cursor.close()
            del self._open[name]

    def close_all(self) -> None:
        for cursor in self._open.values():
            cursor.close()
        self._open.clear()
