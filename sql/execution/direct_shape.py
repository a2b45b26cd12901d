"""DirectShape: how a direct read's batches become wire-ready rows, worked out once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from sql.common.datatypes import to_wire
from sql.common.result import ResultColumn
from storage.schema import ColumnSchema
from storage.type_oids import TypeOid


@dataclass(frozen=True, slots=True)
class DirectShape:
    """How a direct read's batches (its scan's projection) become wire-ready rows: which
    column each output takes, as which type (worked out once, not per execution)."""

    columns: tuple[ResultColumn, ...]
    positions: tuple[int, ...]
    names: list[str]
    oids: tuple[int, ...]
    typmods: tuple[int, ...]
    plain: list[tuple[pa.Schema, bool]] = field(default_factory=list)
    """The batch schema seen whose every column ``to_wire`` passes through unchanged, once
    one was (``wire_batch``): ``to_wire`` decides by type alone (the zone aside, so never
    for ``timestamptz``; nor for ``numeric`` or ``char(n)``), so a batch of that schema
    needs only its columns picked; and whether those are the batch's own, in order, and
    renaming them gives just what picking them does (no field metadata or NOT NULL flag),
    as renaming costs a fifth of picking.  One tuple, so sessions sharing the plan that
    add one at once never pair a schema with another's answer."""
    rowwise: list[tuple[pa.Schema, bool]] = field(default_factory=list)
    """The first batch schema ``values`` saw, and whether ``to_wire`` passes each output
    column of it unchanged (so a row's Python values are the wire batch's)."""

    @classmethod
    def of(
        cls,
        columns: tuple[ResultColumn, ...],
        direct: list[ColumnSchema],
        projection: tuple[int, ...],
    ) -> DirectShape:
        return cls(
            columns,
            tuple(projection.index(c.id) for c in direct),
            [c.name for c in columns],
            tuple(c.type_oid for c in columns),
            tuple(c.typmod for c in columns),
        )

    def wire_batch(self, batch: pa.RecordBatch, zone: Any) -> pa.RecordBatch:
        plain = self.plain
        if plain and batch.schema.equals(plain[0][0], check_metadata=True):
            if plain[0][1]:
                return batch.rename_columns(self.names)
            return pa.RecordBatch.from_arrays(
                [batch.column(i) for i in self.positions], names=self.names
            )
        sources = [batch.column(i) for i in self.positions]
        arrays = [
            to_wire(a, oid, zone, typmod)
            for a, oid, typmod in zip(sources, self.oids, self.typmods, strict=True)
        ]
        out = pa.RecordBatch.from_arrays(arrays, names=self.names)
        if (
            not plain
            and not any(oid in _BY_VALUE for oid in self.oids)
            and all(a is source for a, source in zip(arrays, sources, strict=True))
        ):
            renamed = self.positions == tuple(range(batch.num_columns)) and batch.rename_columns(
                self.names
            ).schema.equals(out.schema, check_metadata=True)
            plain.append((batch.schema, renamed))
        return out

    def values(self, batch: pa.RecordBatch) -> list[tuple[Any, ...]] | None:
        """``batch``'s rows as the output's Python values, as ``wire_batch`` would hold
        them; None when ``to_wire`` would change a column (``ShortRows.values``)."""
        rowwise = self.rowwise
        if rowwise and batch.schema.equals(rowwise[0][0], check_metadata=True):
            passes = rowwise[0][1]
        else:
            passes = self._passes(batch)
            if not rowwise:
                rowwise.append((batch.schema, passes))
        if not passes:
            return None
        if not self.positions:  # ``select from``: rows without columns
            return [()] * batch.num_rows
        try:
            if len(self.positions) == 1:
                return [(v,) for v in batch.column(self.positions[0]).to_pylist()]
            return list(zip(*[batch.column(i).to_pylist() for i in self.positions], strict=True))
        except (ValueError, OverflowError):
            return None  # a date beyond Python's (BC, far years, infinity): Arrow spells it

    def _passes(self, batch: pa.RecordBatch) -> bool:
        """Whether ``to_wire`` gives each output column of ``batch`` back as it is: it
        decides by type alone for these oids, so once per schema."""
        if any(oid in _BY_VALUE for oid in self.oids):
            return False
        return all(
            to_wire(column, oid, "UTC", typmod) is column
            for column, oid, typmod in zip(
                (batch.column(i) for i in self.positions), self.oids, self.typmods, strict=True
            )
        )


_BY_VALUE = frozenset((TypeOid.TIMESTAMPTZ, TypeOid.NUMERIC, TypeOid.BPCHAR))
"""Result types ``to_wire`` may convert by more than the column's Arrow type."""
