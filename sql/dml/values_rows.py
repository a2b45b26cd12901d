"""Multi-row VALUES of parameters, planned from their one-row form.

pgjdbc's ``reWriteBatchedInserts`` (and Spark's JDBC writer through it) sends
a batch as ``INSERT ... VALUES ($1, $2), ($3, $4), ...`` in several shapes
(128, 64, ... rows), each a new text that a new connection plans from
scratch: parsing, binding and transpiling a VALUES list of hundreds of
parameters costs a second of sqlglot work per shape, more than writing the
rows.  Every row of such a statement is the first row with its parameters
shifted, so the statement is planned as its one-row form (``one_row_form``:
read from the tokens, never parsed; the session's plan cache keeps that plan
for every shape) and the N-row plan derived from it (``derive``): the
key-write path gets the row's cells N times, and the general path runs the
one-row source once per row (``WritePlan.repeats``).  Only a plain INSERT whose
one-row plan takes the key-write path (no RETURNING, ON CONFLICT, CHECK,
index or foreign key) is derived; anything else is planned whole.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot.tokens import Token, TokenType

from sql.dml import key_writes
from sql.dml.write_plan import WritePlan


@dataclass(frozen=True, slots=True)
class OneRowForm:
    """A multi-row VALUES statement's first row alone: its text, declared types and rows."""

    sql: str
    declared: tuple[int, ...]
    rows: int
    width: int

    def derive(self, plan: WritePlan) -> WritePlan | None:
        """The plan of all ``rows`` rows, from the plan of ``sql``; None if it cannot be."""
        write = plan.key_write
        if (
            plan.kind != "INSERT"
            or write is None
            or len(write.rows) != 1
            or plan.returning is not None
            or plan.conflict is not None
            or plan.checks is not None
            or plan.references is not None
            or plan.repeats != 1
            or len(plan.param_oids) != self.width
        ):
            return None
        (cells,) = write.rows
        rows = [
            [
                cell if cell.param is None else dataclasses.replace(cell, param=cell.param + shift)
                for cell in cells
            ]
            for shift in range(0, self.rows * self.width, self.width)
        ]
        many = key_writes.KeyWrite(write.kind, write.table, write.columns, rows, write.reads)
        return dataclasses.replace(
            plan, key_write=many, param_oids=plan.param_oids * self.rows, repeats=self.rows
        )


def one_row_form(sql: str, tokens: list[Token], declared: Sequence[int]) -> OneRowForm | None:
    """``INSERT ... VALUES ($1, ..., $k), ($k+1, ..., $2k), ...`` (two rows or more, each
    the next k parameters in order, nothing after them) as its first row alone; else None.
    Declared parameter types must repeat row by row (or be none)."""
    if len(tokens) < 8 or tokens[0].token_type is not TokenType.INSERT:
        return None
    start = next((i for i, t in enumerate(tokens) if t.token_type is TokenType.VALUES), None)
    if start is None or any(t.token_type is TokenType.PARAMETER for t in tokens[:start]):
        return None
    rows = _parameter_rows(tokens[start + 1 :])
    if rows is None:
        return None
    count, width = rows
    if count < 2 or (declared and len(declared) != count * width):
        return None
    first = tuple(declared[:width])
    if any(tuple(declared[i : i + width]) != first for i in range(width, len(declared), width)):
        return None
    # Padded to where it starts in ``sql``: an error's position stays where it was.
    head = " " * tokens[0].start + sql[tokens[0].start : tokens[start].end + 1]
    row = ", ".join(f"${n}" for n in range(1, width + 1))
    return OneRowForm(f"{head} ({row})", first, count, width)


def _parameter_rows(tokens: list[Token]) -> tuple[int, int] | None:
    """(rows, width) when ``tokens`` are ``($1, ..., $k), ($k+1, ...), ...`` exactly."""
    expected = 1
    rows = 0
    width: int | None = None
    at = 0
    while True:
        if at >= len(tokens) or tokens[at].token_type is not TokenType.L_PAREN:
            return None
        at += 1
        cells = 0
        while True:
            number = _parameter(tokens, at)
            if number != expected:
                return None
            expected += 1
            cells += 1
            at += 2
            kind: Any = tokens[at].token_type if at < len(tokens) else None
            at += 1
            if kind is TokenType.R_PAREN:
                break
            if kind is not TokenType.COMMA:
                return None
        if width is None:
            width = cells
        elif cells != width:
            return None
        rows += 1
        if at == len(tokens):
            return rows, width
        if tokens[at].token_type is not TokenType.COMMA:
            return None
        at += 1


def _parameter(tokens: list[Token], at: int) -> int | None:
    """The number of the ``$n`` at ``at``, or None."""
    if at + 1 >= len(tokens):
        return None
    sign, number = tokens[at], tokens[at + 1]
    if (
        sign.token_type is not TokenType.PARAMETER
        or sign.text != "$"
        or number.token_type is not TokenType.NUMBER
        or number.start != sign.end + 1
        or not number.text.isdigit()
    ):
        return None
    return int(number.text)
