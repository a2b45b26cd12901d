"""Compile a bound query to DuckDB SQL once, for the session to run any number of times.

A ``CompiledQuery`` remembers the DuckDB SQL, the scan views it reads (one per
base-table reference), the PostgreSQL description of its output and its
parameter types; ``QueryRunner`` (sql/execution/runner.py) runs it.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from catalog.table import TableInfo
from sql.common.result import ResultColumn
from sql.planner import partial_index
from sql.planner.array_depths import deepened_sql, nested_depths
from sql.planner.binder import BoundQuery
from sql.planner.constant_select import ECHOED_TYPES, echoed_parameters, is_constant
from sql.planner.pushdown import (
    SHORT_LIMIT_ROWS,
    ScanPlan,
    direct_columns,
    is_short,
    plan_scans,
    short_limit_parameter,
)
from sql.planner.transpile import OutputColumn, SessionFacts, duckdb_tree, used_parameters
from storage.errors import UndefinedParameter
from storage.schema import ColumnSchema
from storage.type_oids import ARRAY_OID

_ARRAY_OIDS = frozenset(int(oid) for oid in ARRAY_OID.values())

_view_ids = itertools.count(1)


def new_view_name() -> str:
    """A DuckDB view name for one table reference's scan, unique in the process."""
    return f"__nyala_scan_{next(_view_ids)}"


@dataclass(slots=True)
class ViewBinding:
    view: str
    table: TableInfo
    columns: list[ColumnSchema]
    scan: ScanPlan
    snapshot: int | None = None
    via_view: str | None = None


@dataclass(slots=True)
class CompiledQuery:
    sql: str
    views: list[ViewBinding]
    outputs: list[OutputColumn]
    param_oids: list[int]
    uses_now: bool = False
    columns: tuple[ResultColumn, ...] | None = None
    direct: list[ColumnSchema] | None = None
    is_short: bool = False
    """A direct read of a few rows by key (``pushdown.is_short``): it never waits."""
    short_limit: int | None = None
    """The ``$n`` of a direct read's ``LIMIT $n``: short when its value is small enough."""
    used_params: list[int] | None = None
    """The ``$n`` the DuckDB SQL names, in its dense order (see ``to_duckdb``)."""
    views_read: list[tuple[str, str | None]] = field(default_factory=list)
    """The views the query reads, each with the view it was read through (for privileges)."""
    view_columns: list[frozenset[str]] = field(default_factory=list)
    """The columns read from each view in ``views_read`` (for column privileges)."""

    direct_shape: object = None
    """How a direct read's rows are made wire-ready (``runner.DirectShape``), kept here: a
    new plan (DDL, a new role) makes a new CompiledQuery."""
    read_plan: object = None
    """A direct read's way from its parameters to its rows (``read_plan.ReadPlan``), or the
    mark that it has none, kept here as ``direct_shape`` is."""
    constant: bool = False
    """The query's rows are fixed by its text (``constant_select.is_constant``)."""
    constant_rows: tuple[tuple[ResultColumn, ...], list[Any]] | None = None
    """A constant query's description and wire-ready batches, once DuckDB has given them:
    every later run answers with them, on the session's own thread (``is_short_with``)."""
    echoed: tuple[int, ...] | None = None
    """The ``$n`` each output gives back unchanged, when that is all the query does
    (``constant_select.echoed_parameters``): it is answered from its parameters."""
    duckdb_tree: exp.Expr | None = None
    """DuckDB SQL's tree, kept when a parameter is an array (see ``sql_for``)."""
    _deepened: dict[tuple[int, ...], str] = field(default_factory=dict)

    def sql_for(self, values: Sequence[Any]) -> str:
        """The DuckDB SQL to run with ``values`` (``duckdb_params``): array parameters cast
        to as many dimensions as their values have (``array_depths``)."""
        if self.duckdb_tree is None:
            return self.sql
        depths = nested_depths(values)
        if depths is None:
            return self.sql
        sql = self._deepened.get(depths)
        if sql is None:
            sql = self._deepened[depths] = deepened_sql(self.duckdb_tree, depths)
        return sql

    def check_params(self, params: Sequence[Any]) -> None:
        """42P02 when ``params`` has fewer values than the query has parameters."""
        if len(params) < len(self.param_oids):
            raise UndefinedParameter(f"there is no parameter ${len(params) + 1}")

    def duckdb_params(self, params: list[Any] | None, now: Any) -> list[Any]:
        values = list(params or [])
        self.check_params(values)
        if self.used_params is not None:
            values = [values[n - 1] for n in self.used_params]
        return values + [now] if self.uses_now else values

    def is_short_with(self, params: Sequence[Any]) -> bool:
        """Whether this execution is a short read: ``is_short``, or a direct read whose
        ``LIMIT $n`` is at most ``SHORT_LIMIT_ROWS`` rows this time; or a constant query
        whose rows are kept (``constant_rows``) or one that echoes its parameters, once
        described."""
        if self.is_short or self.constant_rows is not None:
            return True
        columns = self.columns
        if self.echoed is not None and columns is not None:
            return all(c.type_oid in ECHOED_TYPES for c in columns)
        n = self.short_limit
        if n is None or n > len(params):
            return False
        value = params[n - 1]
        return type(value) is int and 0 <= value <= SHORT_LIMIT_ROWS

    @property
    def duckdb_param_count(self) -> int:
        used = len(self.param_oids) if self.used_params is None else len(self.used_params)
        return used + self.uses_now


def compile_query(bound: BoundQuery, facts: SessionFacts) -> CompiledQuery:
    scans = plan_scans(bound)
    partial_index.mark_usable(bound, scans)
    views = [
        ViewBinding(new_view_name(), r.table, r.columns, scan, r.snapshot, r.via_view)
        for r, scan in zip(bound.tables, scans, strict=True)
    ]
    used = used_parameters(bound)
    facts = dataclasses.replace(facts, now_param=len(used) + 1)
    direct = direct_columns(bound, scans)
    tree, outputs, uses_now = duckdb_tree(bound, [v.view for v in views], facts)
    arrays = any(oid in _ARRAY_OIDS for oid in bound.param_oids)
    return CompiledQuery(
        tree.sql(dialect="duckdb"), views, outputs, bound.param_oids, uses_now, direct=direct,
        is_short=is_short(bound, scans, direct), used_params=used, views_read=bound.views_read,
        view_columns=bound.view_columns,
        short_limit=short_limit_parameter(bound, scans, direct),
        duckdb_tree=tree if arrays else None, constant=is_constant(bound) and not uses_now,
        echoed=None if uses_now else echoed_parameters(bound),
    )  # fmt: skip
