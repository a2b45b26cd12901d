"""ReadPlan: a prepared read by primary key or through one index, worked out once per plan.

A direct read (``CompiledQuery.direct``) of an unpartitioned table whose pushed
predicates are all equalities, with no LIMIT and no snapshot of its own, finds its rows
the same way at every execution: by its primary key when those equalities pin every key
column (``point_read.keys_of``), else through the index ``index_scan`` plans for their
columns.  What the general path (``QueryRunner.read_by_key``) decides per execution (the
ScanSpec, ``index_scan.choose``, ``point_read.pinning``, the tablets, the columns read and
the predicates left to apply to them) is decided here once, so an execution goes from its
parameters straight to the storage calls.  Wherever a value would not take that path
exactly as it takes the general one (not pushed, a key that does not encode, an index
value whose encoding is not exact, a long index range) ``read`` answers None and the
general path decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from catalog.indexes import IndexInfo
from catalog.table import TableInfo
from sql.execution import index_scan, point_read
from sql.execution.direct_shape import DirectShape
from sql.planner.compiled_query import CompiledQuery
from sql.planner.pushdown import PushedPredicate, same_objects
from storage.data_type import ColumnId, DataType, TabletId
from storage.key_encoding import encode_key, encode_value, prefix_successor
from storage.predicate import ColumnPredicate, PredicateKind
from storage.transaction import Transaction

_NOT_NULL = b"\x00"
"""``encode_sortable``'s flag byte for a non-NULL value, as ``index_scan`` prefixes it."""
_UNPLANNED = object()
"""``CompiledQuery.read_plan`` of a query this module has no plan for."""


@dataclass(slots=True)
class ReadPlan:
    """One prepared read's way from its parameters to its rows (see the module)."""

    table: TableInfo
    predicates: tuple[PushedPredicate, ...]
    tablet_ids: tuple[TabletId, ...]
    projection: tuple[ColumnId, ...]
    """The columns the query outputs (``CompiledQuery.direct``), each once: not the scan's
    projection, which holds the key its WHERE names too, so a batch read already has the
    output's columns in order (``DirectShape.renamed``)."""
    needed: tuple[ColumnId, ...]
    """The columns read: the projection, then those of ``residual`` predicates."""
    select: list[int] | None
    """Where each projected column is in ``needed``, when they differ."""
    pinning: tuple[int, ...]
    """The predicates that name the rows: one per key column, or per index column."""
    types: tuple[DataType, ...]
    """The type of each ``pinning`` predicate's column."""
    residual: tuple[int, ...]
    """The predicates applied to the rows read (not implied by how they were found)."""
    index: IndexInfo | None = None
    exact: tuple[type, ...] = ()
    """Per index column, the one value type whose key encoding is exact (``index_scan``)."""
    checks: tuple[tuple[int, int | None, int] | None, ...] = ()
    """Per predicate whose operand is a parameter of an integer or text column, the
    parameter's index and the integer range (None for text): a value of exactly that type
    (and range) is what ``PushedPredicate.equal_value`` gives, read without its calls."""
    _last: tuple[tuple[object, ...], list[object] | None] | None = field(default=None)
    shape: DirectShape | None = None
    """How this plan's batches become wire-ready, for the description it was made for."""

    def values(self, params: Sequence[object]) -> list[object] | None:
        """Each predicate's value with ``params``, or None when one is not pushed (the
        query is then not answered by its scan alone: ``runner.runs_direct``).  Asked
        again with the very same parameter objects (``runs_direct``, then ``read``), the
        answer is kept."""
        last = self._last
        if last is not None and same_objects(last[0], params):
            return last[1]
        values: list[object] | None = []
        count = len(params)
        for predicate, check in zip(self.predicates, self.checks, strict=True):
            if check is not None and check[0] < count:
                value = params[check[0]]
                low = check[1]
                if low is None:
                    if type(value) is str:
                        values.append(value)  # type: ignore[union-attr]  # not None here
                        continue
                elif type(value) is int and low <= value <= check[2]:
                    values.append(value)  # type: ignore[union-attr]  # not None here
                    continue
            value = predicate.equal_value(params)
            if value is None:
                values = None
                break
            values.append(value)  # type: ignore[union-attr]  # not None until the break
        self._last = (tuple(params), values)
        return values

    def read(self, txn: Transaction, params: Sequence[object]) -> list[pa.RecordBatch] | None:
        """The rows of this execution (the projection's columns, as ``point_read.read``
        gives them), or None when the general path must decide (see the module)."""
        values = self.values(params)
        if values is None:
            return None
        keys = self._key(values) if self.index is None else self._index_keys(txn, values)
        if keys is None:
            return None
        out: list[pa.RecordBatch] = []
        if not keys:
            return out
        for tablet_id in self.tablet_ids:
            batch = txn.read_keys(tablet_id, keys, self.needed)
            if not batch.num_rows:
                continue
            if self.residual:
                predicates = self.predicates
                batch = point_read.matching(
                    batch,
                    self.needed,
                    [
                        ColumnPredicate(predicates[i].column.id, PredicateKind.EQUALITY, values[i])
                        for i in self.residual
                    ],
                )
            if self.select is not None:
                batch = batch.select(self.select)
            if batch.num_rows:
                out.append(batch)
        return out

    def _key(self, values: list[object]) -> list[bytes] | None:
        """The one primary key the values name, None when it does not encode."""
        try:
            if len(self.pinning) == 1:
                return [encode_value(values[self.pinning[0]], self.types[0], is_last=True)]
            return [encode_key([values[i] for i in self.pinning], self.types)]
        except (ValueError, OverflowError, TypeError, ArithmeticError):
            return None

    def _index_keys(self, txn: Transaction, values: list[object]) -> list[bytes] | None:
        """The primary keys the index names for the values, when they are few."""
        assert self.index is not None, "only an index plan reads the index"
        prefix = b""
        for position, data_type, exact in zip(self.pinning, self.types, self.exact, strict=True):
            value = values[position]
            if type(value) is not exact:
                return None
            try:
                prefix += _NOT_NULL + encode_value(value, data_type, is_last=False)
            except (ValueError, OverflowError, TypeError):
                return None
        ranges = ((prefix, prefix_successor(prefix)),)
        return index_scan.keys_in_ranges(txn, self.table, self.index, ranges, None)


def of(compiled: CompiledQuery) -> ReadPlan | None:
    """``compiled``'s ReadPlan, made at its first execution and kept on it (a new plan,
    after DDL, is a new CompiledQuery); None when it has none (see the module)."""
    plan = compiled.read_plan
    if plan is None:
        plan = compiled.read_plan = _plan(compiled) or _UNPLANNED
    return plan if isinstance(plan, ReadPlan) else None


def _plan(compiled: CompiledQuery) -> ReadPlan | None:
    if compiled.direct is None or len(compiled.views) != 1:
        return None
    binding = compiled.views[0]
    scan = binding.scan
    table = scan.table
    if (
        binding.snapshot is not None
        or scan.limit is not None
        or scan.tablets is not None
        or table.partition_schema is not None
        or not scan.predicates
        or any(p.op != "=" or len(p.operands) != 1 for p in scan.predicates)
    ):
        return None
    predicates = tuple(scan.predicates)
    first: dict[ColumnId, int] = {}
    for position, predicate in enumerate(predicates):
        first.setdefault(predicate.column.id, position)
    key_columns = table.schema.key_columns
    index: IndexInfo | None = None
    exact: tuple[type, ...] = ()
    if key_columns and all(c.id in first for c in key_columns):
        pinning = tuple(first[c.id] for c in key_columns)
        types = tuple(c.type for c in key_columns)
    else:
        shape = tuple(p.column.id for p in predicates)
        if not table.indexes or (key_columns and key_columns[0].id in first):
            return None
        planned = index_scan.plan_index(table, shape, scan.partial_indexes)
        if planned.index is None or any(e is None for e in planned.exact):
            return None
        index = planned.index
        pinning = planned.positions
        types = tuple(c.type for c in planned.columns)
        exact = tuple(e for e in planned.exact if e is not None)
    residual = tuple(i for i in range(len(predicates)) if i not in pinning)
    projection = tuple(dict.fromkeys(c.id for c in compiled.direct)) or tuple(
        c.id for c in scan.columns
    )  # no output column (``select from``): the rows still count
    needed = tuple(dict.fromkeys((*projection, *(predicates[i].column.id for i in residual))))
    return ReadPlan(
        table,
        predicates,
        table.tablet_ids,
        projection,
        needed,
        None if needed == projection else [needed.index(c) for c in projection],
        pinning,
        types,
        residual,
        index,
        exact,
        tuple(_check(p) for p in predicates),
    )


def _check(predicate: PushedPredicate) -> tuple[int, int | None, int] | None:
    """``ReadPlan.checks``' entry for ``predicate`` (see ``pushdown.coerce``)."""
    (operand,) = predicate.operands
    data_type = predicate.column.type
    if operand.parameter is None or operand.blank_padded or data_type.text_type:
        return None
    if data_type.is_integer:
        low, high = data_type.integer_range
        return operand.parameter - 1, low, high
    if data_type.is_string:
        return operand.parameter - 1, None, 0
    return None
