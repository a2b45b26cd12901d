"""A prepared read by key or one index answered as ``ShortRows``: no Arrow batch rebuilt.

``QueryRunner.read_by_key`` answers such a read with wire-ready Arrow batches
(``DirectShape.wire_batch``), which the server takes apart again to frame a row or
two.  Here the same ``ReadPlan`` read hands the batches storage gave back as they are,
each wrapped in a ``ShortRows`` that the server frames from its Python values, or turns
into the very batch ``read_by_key`` would have given where it cannot.  Only an Execute
(``Result.pause`` set) reads this way: other callers of a Result (COPY TO, the simple
query's implicit transactions) read its batches as Arrow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from sql.common.result import ResultColumn, ShortRows
from sql.execution import read_plan
from sql.execution.direct_shape import DirectShape
from sql.execution.runner import QueryRunner
from sql.planner.compiled_query import CompiledQuery
from storage.transaction import Transaction


def read_by_key(
    runner: QueryRunner,
    compiled: CompiledQuery,
    txn: Transaction,
    params: list[Any],
    now: Any,
    short: bool,
    check_cancel: Callable[[], None],
) -> tuple[tuple[ResultColumn, ...], Sequence[pa.RecordBatch | ShortRows]] | None:
    """``runner.read_by_key``, as ``ShortRows`` where ``short`` (an Execute) and ``read``
    can."""
    if short:
        rows = read(runner, compiled, txn, params, check_cancel)
        if rows is not None:
            return rows
    return runner.read_by_key(compiled, txn, params, now)


def read(
    runner: QueryRunner,
    compiled: CompiledQuery,
    txn: Transaction,
    params: list[Any],
    check_cancel: Callable[[], None],
) -> tuple[tuple[ResultColumn, ...], list[ShortRows]] | None:
    """``runner.read_by_key`` of a read its ``ReadPlan`` answers, as ``ShortRows``; None
    for any other read (or execution), which ``read_by_key`` answers."""
    if compiled.direct is None:
        return None
    plan = read_plan.of(compiled)
    if plan is None:
        return None
    compiled.check_params(params)
    if runner.read_snapshot() is not None:
        return None  # a time-travel read: ``run`` checks its snapshot first
    found = plan.read(txn, params)
    if found is None:
        return None
    columns = runner.describe(compiled)
    shape = plan.shape
    if shape is None or shape.columns is not columns:
        shape = plan.shape = DirectShape.of(columns, compiled.direct, plan.projection)
    zone = runner.zone.arrow
    rows, out = 0, []
    for batch in found:
        check_cancel()
        rows += batch.num_rows
        out.append(ShortRows(batch, shape, zone))
    activity = runner.direct_activity
    if activity is not None and plan.table.tablet_ids:
        activity.scanned(plan.table.tablet_ids[0], True, rows, 0)
    return shape.columns, out
