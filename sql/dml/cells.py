"""Cells: where each value of a key write comes from, and what they read when it runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sql.dml.assigned_values import Fallback
from sql.dml.key_expressions import Computed


@dataclass(frozen=True, slots=True)
class Cell:
    """Where a written column's value comes from: parameter ``param`` (0-based), ``value``,
    the next value of the sequence ``sequence`` (a SERIAL or hidden-key default), or an
    expression ``computed`` over the row's current values."""

    param: int | None
    value: object = None
    sequence: str | None = None
    computed: Computed | None = None
    is_now: bool = False
    """The transaction's start time: CURRENT_TIMESTAMP or now() into a timestamp column."""


@dataclass(frozen=True, slots=True)
class Values:
    """What cells read at run time: the parameters, and the transaction's start time."""

    params: list[Any]
    now: object

    def of(self, cell: Cell) -> object:
        if cell.param is not None:
            return self.params[cell.param]
        if cell.is_now:
            if self.now is None:
                raise Fallback
            return self.now
        return cell.value
