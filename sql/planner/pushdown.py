"""Predicate, projection and limit pushdown: one ScanPlan per base-table reference of a query.

The planner walks every SELECT scope of the bound query and, for each base
table read there (not on the nullable side of an outer join), turns the
WHERE conjuncts of the form ``column <op> constant`` into ``ColumnPredicate``s:
comparisons, BETWEEN, IN lists, IS [NOT] NULL and ``LIKE 'prefix%'``.  A
constant is a literal or a ``$n`` parameter; parameters are read when the
statement runs, so a prepared point query pushes its key each time.

Pushdown only ever narrows: DuckDB still evaluates the whole WHERE clause
above the scans, and a constant that does not convert exactly to the
column's type is simply not pushed.  A LIMIT is pushed only when the scan
alone decides which rows the query returns: a single table, no ORDER BY,
grouping, aggregate, window, DISTINCT or set-returning function, and every
conjunct of the WHERE clause pushed.
"""

from __future__ import annotations

import datetime as dt
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from catalog.pruner import prune
from catalog.table import TableInfo
from sql.common.uuid_values import canonical_uuid
from sql.planner.binder import BoundQuery, TableRef, parameter_number
from sql.planner.blank_padding import BLANK_PADDED_PARAMETER
from storage.data_type import ColumnId, DataType, TabletId, TypeKind
from storage.errors import InvalidTextRepresentation
from storage.predicate import ColumnPredicate, PredicateKind, ScanSpec
from storage.schema import ColumnSchema

# Kinds whose values compare exactly in Arrow as they do in PostgreSQL (no float rounding,
# no decimal scale questions); predicates on other kinds are left to DuckDB.
_PUSHABLE = {
    TypeKind.INT8,
    TypeKind.INT16,
    TypeKind.INT32,
    TypeKind.INT64,
    TypeKind.STRING,
    TypeKind.VARCHAR,
    TypeKind.BINARY,
    TypeKind.DATE,
    TypeKind.TIMESTAMP,
    TypeKind.BOOL,
}
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?")
_COMPARISONS: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
}
_FLIPPED = {"=": "=", ">": "<", ">=": "<=", "<": ">", "<=": ">="}
_ROW_MULTIPLIERS = (exp.AggFunc, exp.Window, exp.Unnest, exp.Explode, exp.GenerateSeries)


class _Unconvertible(Exception):
    """A constant that has no exact value of the column's type; its predicate is not pushed."""


@dataclass(frozen=True, slots=True)
class Operand:
    """A constant of a pushed predicate: a literal value, or the ``$n`` read at run time."""

    value: object = None
    parameter: int | None = None
    blank_padded: bool = False
    """A bpchar ``$n`` compared with char(n): its trailing blanks do not count."""

    def resolve(self, params: Sequence[object], column_type: DataType) -> object:
        if self.parameter is None:
            return self.value
        if self.parameter > len(params):
            raise _Unconvertible
        value = params[self.parameter - 1]
        if self.blank_padded and isinstance(value, str):
            value = value.rstrip(" ")
        return coerce(value, column_type)

    def sql(self) -> str:
        return f"${self.parameter}" if self.parameter is not None else _literal_sql(self.value)


@dataclass(frozen=True, slots=True)
class PushedPredicate:
    """One conjunct pushed to a scan: ``column <op> operands`` (op: = < <= > >= between in
    prefix isnull notnull)."""

    column: ColumnSchema
    op: str
    operands: tuple[Operand, ...] = ()

    def build(self, params: Sequence[object]) -> ColumnPredicate:
        column_id, ctype = self.column.id, self.column.type
        op = self.op
        if op == "=":  # a prepared point select's: one operand, no list made
            value = self.operands[0].resolve(params, ctype)
            if value is None:
                raise _Unconvertible
            return ColumnPredicate(column_id, PredicateKind.EQUALITY, value)
        values = [o.resolve(params, ctype) for o in self.operands]
        if any(v is None for v in values) and op != "in":
            raise _Unconvertible
        if op in (">", ">="):
            return ColumnPredicate.range(column_id, values[0], lower_inclusive=op == ">=")
        if op in ("<", "<="):
            return ColumnPredicate.range(column_id, upper=values[0], upper_inclusive=op == "<=")
        if op == "between":
            return ColumnPredicate.range(column_id, values[0], values[1], upper_inclusive=True)
        if op == "in":
            return ColumnPredicate.in_list(column_id, [v for v in values if v is not None])
        if op == "prefix":
            return ColumnPredicate.prefix(column_id, values[0])  # type: ignore[arg-type]  # LIKE 'abc%' gives a str
        if op == "isnull":
            return ColumnPredicate.is_null(column_id)
        return ColumnPredicate.is_not_null(column_id)

    def equal_value(self, params: Sequence[object]) -> object | None:
        """An ``=`` predicate's value with ``params`` (``build``'s ``ColumnPredicate.value``),
        or None when it is not pushed this time (NULL, or a value not of the column's type)."""
        try:
            return self.operands[0].resolve(params, self.column.type)
        except _Unconvertible:
            return None

    def constant(self) -> ColumnPredicate | None:
        """The predicate when its operands are constants, else None (a ``$n``)."""
        try:
            return self.build(())
        except _Unconvertible:
            return None

    def sql(self) -> str:
        name = self.column.name
        if self.op == "between":
            return f"{name} BETWEEN {self.operands[0].sql()} AND {self.operands[1].sql()}"
        if self.op == "in":
            return f"{name} IN ({', '.join(o.sql() for o in self.operands)})"
        if self.op == "prefix":
            return f"{name} LIKE {_literal_sql(str(self.operands[0].value) + '%')}"
        if self.op == "isnull":
            return f"{name} IS NULL"
        if self.op == "notnull":
            return f"{name} IS NOT NULL"
        return f"{name} {self.op} {self.operands[0].sql()}"


def same_objects(previous: Sequence[object], params: Sequence[object]) -> bool:
    """Whether ``params`` are the very objects of ``previous``: an execution asked twice with
    them (``runs_direct``, then the read) gets the answer it was given the first time."""
    return len(previous) == len(params) and all(map(operator.is_, previous, params))


@dataclass(slots=True)
class ScanPlan:
    """What the planner tells one table reference's scans: columns, predicates and a limit."""

    table: TableInfo
    columns: list[ColumnSchema]
    predicates: list[PushedPredicate] = field(default_factory=list)
    limit: Operand | None = None
    offset: Operand | None = None
    complete: bool = False
    tablets: tuple[TabletId, ...] | None = None
    """``FROM t PARTITION (...)``: the only tablets this reference may read."""
    where: list[exp.Expr] = field(default_factory=list)
    """The WHERE conjuncts that read only this reference (pushed or not), for
    ``partial_index``."""
    partial_indexes: frozenset[str] = frozenset()
    """The partial indexes the query's WHERE implies, which its scans may read through."""
    _fixed: (
        tuple[int, tuple[ColumnId, ...], tuple[ColumnPredicate | PushedPredicate, ...]] | None
    ) = field(default=None, init=False, repr=False, compare=False)
    """``spec``'s parts that no parameter changes: the projection, and each predicate built
    already when its operands are constants (made at the first execution, once planning
    has added every predicate; keyed by their count)."""
    index_plans: dict[tuple[frozenset[str], tuple[ColumnId, ...]], object] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """The index ``index_scan.choose`` plans per shape of this scan's all-equality specs
    (``index_scan.IndexPlans``): kept with the plan, whose table DDL replaces."""
    _last: tuple[tuple[object, ...], ScanSpec] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    """The last execution's parameters and spec: asked again with the very same parameter
    objects (``runs_direct``, then ``read_by_key``), the spec is the same."""

    def spec(self, params: Sequence[object] = ()) -> ScanSpec:
        """The ScanSpec for one execution; a parameter that does not convert is left to DuckDB."""
        last = self._last
        if last is not None and same_objects(last[0], params):
            return last[1]
        spec = self._spec(params)
        self._last = (tuple(params), spec)
        return spec

    def _spec(self, params: Sequence[object]) -> ScanSpec:
        fixed = self._fixed
        if fixed is None or fixed[0] != len(self.predicates):
            fixed = self._fixed = (
                len(self.predicates),
                tuple(c.id for c in self.columns),
                tuple(p.constant() or p for p in self.predicates),
            )
        predicates = []
        exact = True
        for pushed in fixed[2]:
            if isinstance(pushed, ColumnPredicate):
                predicates.append(pushed)
                continue
            try:
                predicates.append(pushed.build(params))
            except _Unconvertible:
                exact = False
        return ScanSpec(
            fixed[1],
            tuple(predicates),
            self._limit(params) if exact and self.limit is not None else None,
        )

    def tablet_ids(self, spec: ScanSpec) -> tuple[TabletId, ...]:
        """The tablets that may hold rows matching ``spec`` (partition pruning), within any
        tablets the reference selected."""
        pruned = prune(self.table, spec)
        if self.tablets is None:
            return pruned
        return tuple(tablet for tablet in pruned if tablet in self.tablets)

    def _limit(self, params: Sequence[object]) -> int | None:
        if self.limit is None:
            return None
        try:
            limit = self.limit.resolve(params, _BIGINT)
            offset = self.offset.resolve(params, _BIGINT) if self.offset is not None else 0
        except _Unconvertible:
            return None
        if not isinstance(limit, int) or not isinstance(offset, int) or limit < 0 or offset < 0:
            return None
        return limit + offset

    def describe(self) -> list[str]:
        """EXPLAIN lines for what is pushed into the scans."""
        lines = []
        if self.predicates:
            lines.append("Pushed predicates: " + " AND ".join(p.sql() for p in self.predicates))
        lines.append("Columns: " + (", ".join(c.name for c in self.columns) or "(none)"))
        if self.limit is not None:
            text = self.limit.sql()
            if self.offset is not None:
                text += f" + offset {self.offset.sql()}"
            lines.append(f"Limit: {text}")
        return lines


_BIGINT = DataType(TypeKind.INT64)

# Set by INSERT ... ON CONFLICT on its target's table node: the first key column's VALUES,
# which are the only keys whose existing rows the statement can collide with.
KEY_IN_META = "nyala_key_in"


def plan_scans(bound: BoundQuery) -> list[ScanPlan]:
    """One ScanPlan per ``bound.tables`` entry, in the same order."""
    plans = [ScanPlan(ref.table, _projection(ref), tablets=ref.tablets) for ref in bound.tables]
    for ref, plan in zip(bound.tables, plans, strict=True):
        keys = ref.node.meta.get(KEY_IN_META)
        if keys:
            plan.predicates.extend(_key_in(ref, keys))
    by_node = {id(ref.node): (ref, plan) for ref, plan in zip(bound.tables, plans, strict=True)}
    for scope in traverse_scope(bound.ast):
        select = scope.expression
        if not isinstance(select, exp.Select):
            continue
        nullable = _nullable_aliases(select)
        where = select.args.get("where")
        conjuncts = _conjuncts(where.this) if where is not None else []
        table_sources = {
            alias: by_node[id(node)]
            for alias, (node, source) in scope.selected_sources.items()
            if isinstance(source, exp.Table) and id(source) in by_node
        }
        all_pushed = True
        for conjunct in conjuncts:
            pushed = None
            _note_own_conjunct(conjunct, table_sources, nullable)
            for alias, (ref, plan) in table_sources.items():
                if alias in nullable:
                    continue
                pushed = _pushable(conjunct, ref)
                if pushed is not None:
                    plan.predicates.append(pushed)
                    break
            all_pushed = all_pushed and pushed is not None
        _push_join_conditions(select, table_sources, nullable)
        if scope.is_root and all_pushed and len(table_sources) == 1:
            ((_, plan),) = table_sources.values()
            plan.complete = True
        if scope.is_root and all_pushed and len(table_sources) == 1 and _limit_applies(select):
            ((_, plan),) = table_sources.values()
            plan.limit = _operand(select.args["limit"].expression, _BIGINT)
            offset = select.args.get("offset")
            plan.offset = _operand(offset.expression, _BIGINT) if offset is not None else None
            if plan.limit is None or (offset is not None and plan.offset is None):
                plan.limit = plan.offset = None
    return plans


SHORT_LIMIT_ROWS = 1000
"""A direct query with a LIMIT up to this many rows counts as short (``is_short``)."""


def is_short(bound: BoundQuery, plans: list[ScanPlan], direct: list[ColumnSchema] | None) -> bool:
    """Whether a direct query reads a handful of rows by key: an equality on every key column
    (of the primary key or of a unique index), or a literal LIMIT of at most ``SHORT_LIMIT_ROWS``.  Such a read never waits on a lock, so
    the server runs it where it stands instead of handing it to a thread."""
    if direct is None or bound.tables[0].snapshot is not None:
        return False
    plan = plans[0]
    equal = {p.column.id for p in plan.predicates if p.op == "="}
    if set(plan.table.schema.key_column_ids) <= equal:
        return True
    if any(
        index.unique and index.valid and index.predicate is None and set(index.columns) <= equal
        for index in plan.table.indexes
    ):
        return True  # a unique index's whole key: one row at most (NULL equals nothing)
    limit = plan.limit
    return (
        limit is not None
        and limit.parameter is None
        and isinstance(limit.value, int)
        and limit.value <= SHORT_LIMIT_ROWS
    )


def short_limit_parameter(
    bound: BoundQuery, plans: list[ScanPlan], direct: list[ColumnSchema] | None
) -> int | None:
    """The ``$n`` of a direct query's pushed ``LIMIT $n``: with a value of at most
    ``SHORT_LIMIT_ROWS`` the read is short (``is_short``) for that execution."""
    if direct is None or bound.tables[0].snapshot is not None:
        return None
    limit = plans[0].limit
    return limit.parameter if limit is not None else None


def direct_columns(bound: BoundQuery, plans: list[ScanPlan]) -> list[ColumnSchema] | None:
    """The table columns a query outputs when the scan alone answers it, else None.

    That is a single-table SELECT of plain columns whose whole WHERE clause is
    pushed, with nothing else above the scan but a pushed LIMIT.  Such a query
    (a point lookup by key, typically) is answered from the scan's batches
    without DuckDB.
    """
    select = bound.ast
    if len(plans) != 1 or not plans[0].complete or not isinstance(select, exp.Select):
        return None
    plan, ref = plans[0], bound.tables[0]
    if plan.table.table_id < 0 or select.args.get("offset") or select.args.get("locks"):
        return None
    if select.args.get("limit") is not None and plan.limit is None:
        return None
    for clause in ("joins", "laterals", "order", "group", "having", "distinct", "qualify", "with_"):
        if select.args.get(clause):
            return None
    if ref.node.args.get("sample"):
        return None
    columns = []
    for projection in select.expressions:
        node = projection.this if isinstance(projection, exp.Alias) else projection
        if not isinstance(node, exp.Column) or node.table != ref.alias:
            return None
        column = ref.table.schema.find(node.name)
        if column is None:
            return None
        columns.append(column)
    return columns


def _key_in(ref: TableRef, values: list[exp.Expr]) -> list[PushedPredicate]:
    """``first key IN (values)`` when every value is a constant of the key's type."""
    column = ref.table.schema.key_columns[0]
    if column.type.kind not in _PUSHABLE:
        return []
    operands = [_operand(v, column.type) for v in values]
    if any(o is None for o in operands):
        return []
    return [PushedPredicate(column, "in", tuple(o for o in operands if o is not None))]


def _conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    while isinstance(condition, exp.Paren):
        condition = condition.this
    return list(condition.flatten()) if isinstance(condition, exp.And) else [condition]


conjuncts_of = _conjuncts


def conjunct_predicate(conjunct: exp.Expr, ref: TableRef) -> PushedPredicate | None:
    """``conjunct`` as a predicate on one column of ``ref``, or None when it is not one."""
    return _pushable(conjunct, ref)


def _note_own_conjunct(
    conjunct: exp.Expr, table_sources: dict[str, tuple[TableRef, ScanPlan]], nullable: set[str]
) -> None:
    """Keep ``conjunct`` in ``ScanPlan.where`` of the one reference all its columns name."""
    if conjunct.find(exp.Select, exp.Subquery):
        return
    aliases = {c.table for c in conjunct.find_all(exp.Column)}
    if len(aliases) != 1:
        return
    (alias,) = aliases
    if alias in table_sources and alias not in nullable:
        table_sources[alias][1].where.append(conjunct)


def _projection(ref: TableRef) -> list[ColumnSchema]:
    return ref.columns or [ref.table.schema.key_columns[0]]


def _push_join_conditions(
    select: exp.Select,
    table_sources: dict[str, tuple[TableRef, ScanPlan]],
    nullable: set[str],
) -> None:
    """Push JOIN ... ON conjuncts that name one table: for an inner join, into a table no
    outer join null-extends; for a LEFT JOIN, into the joined table itself (its rows that
    fail the condition would not match anyway)."""
    for join in select.args.get("joins") or []:
        on = join.args.get("on")
        if on is None:
            continue
        side = (join.side or "").upper()
        if side == "LEFT":
            allowed = {join.this.alias_or_name}
        elif not side and (join.kind or "").upper() in ("", "INNER"):
            allowed = set(table_sources) - nullable
        else:
            continue
        for conjunct in _conjuncts(on):
            for alias in allowed:
                if alias not in table_sources:
                    continue
                ref, plan = table_sources[alias]
                pushed = _pushable(conjunct, ref)
                if pushed is not None:
                    plan.predicates.append(pushed)
                    break


def _nullable_aliases(select: exp.Select) -> set[str]:
    """Table aliases on the nullable side of an outer join: their rows are not WHERE-filtered
    before the join."""
    seen: list[str] = []
    from_ = select.args.get("from_")
    if from_ is not None:
        seen.append(from_.this.alias_or_name)
    nullable: set[str] = set()
    for table in select.find_all(exp.Table):
        # Joins nested under a table (``a LEFT JOIN b JOIN c ON .. ON ..``): their tables
        # get no WHERE conjuncts, whatever the nesting's join types.
        if table.args.get("joins") and table.find_ancestor(exp.Select) is select:
            nullable.add(table.alias_or_name)
            nullable.update(j.this.alias_or_name for j in table.args["joins"])
    for join in select.args.get("joins") or []:
        alias = join.this.alias_or_name
        side = (join.side or "").upper()
        if side in ("LEFT", "FULL"):
            nullable.add(alias)
        if side in ("RIGHT", "FULL"):
            nullable.update(seen)
        seen.append(alias)
    return nullable


def _limit_applies(select: exp.Select) -> bool:
    limit = select.args.get("limit")
    if not isinstance(limit, exp.Limit) or limit.expression is None:
        return False
    if any(t.args.get("sample") for t in select.find_all(exp.Table)):
        return False  # the LIMIT counts sampled rows
    if select.args.get("joins") or select.args.get("laterals"):
        return False
    for clause in ("order", "group", "having", "distinct", "qualify", "windows"):
        if select.args.get(clause):
            return False
    return not any(e.find(*_ROW_MULTIPLIERS) for e in select.expressions)


def _column_of(node: exp.Expr, ref: TableRef) -> ColumnSchema | None:
    if not isinstance(node, exp.Column) or node.table != ref.alias:
        return None
    column = ref.table.schema.find(node.name)
    if column is None or column.type.kind not in _PUSHABLE:
        return None
    return column


def _pushable(conjunct: exp.Expr, ref: TableRef) -> PushedPredicate | None:
    try:
        return _to_predicate(conjunct, ref)
    except _Unconvertible:
        return None


def _to_predicate(node: exp.Expr, ref: TableRef) -> PushedPredicate | None:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Or):
        return _or_as_in(node, ref)
    op = _COMPARISONS.get(type(node))
    if op is not None:
        left, right = cast(exp.Binary, node).left, cast(exp.Binary, node).right
        column = _column_of(left, ref)
        if column is None:
            column, right, op = _column_of(right, ref), left, _FLIPPED[op]
        if column is None:
            return None
        operand = _operand(right, column.type)
        return None if operand is None else PushedPredicate(column, op, (operand,))
    if isinstance(node, exp.Between) and not node.args.get("symmetric"):
        column = _column_of(node.this, ref)
        if column is None:
            return None
        low, high = (
            _operand(node.args["low"], column.type),
            _operand(node.args["high"], column.type),
        )
        if low is None or high is None:
            return None
        return PushedPredicate(column, "between", (low, high))
    if isinstance(node, exp.In) and not node.args.get("query") and not node.args.get("unnest"):
        column = _column_of(node.this, ref)
        if column is None or not node.expressions:
            return None
        operands = [_operand(e, column.type, allow_null=True) for e in node.expressions]
        if any(o is None for o in operands):
            return None
        return PushedPredicate(column, "in", tuple(o for o in operands if o is not None))
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        column = _column_of(node.this, ref)
        if column is None:
            return None
        return PushedPredicate(column, "notnull" if node.args.get("negate") else "isnull")
    if isinstance(node, exp.Not) and isinstance(node.this, exp.Is):
        inner = node.this
        column = _column_of(inner.this, ref)
        if column is None or not isinstance(inner.expression, exp.Null) or inner.args.get("negate"):
            return None
        return PushedPredicate(column, "notnull")
    if isinstance(node, exp.Like) and not node.args.get("escape"):
        column = _column_of(node.this, ref)
        pattern = node.expression
        if column is None or not column.type.is_string or not _is_string_literal(pattern):
            return None
        text = pattern.this
        prefix = text[:-1]
        if not text.endswith("%") or not prefix or any(c in prefix for c in "%_\\"):
            return None
        return PushedPredicate(column, "prefix", (Operand(prefix),))
    return None


def _or_as_in(node: exp.Or, ref: TableRef) -> PushedPredicate | None:
    """``c = 1 OR c = 2 OR c IN (3, 4)`` as ``c IN (1, 2, 3, 4)``; any other OR stays above."""
    column = None
    operands: list[Operand] = []
    for disjunct in node.flatten():
        pushed = _to_predicate(disjunct, ref)
        if pushed is None or pushed.op not in ("=", "in"):
            return None
        if column is not None and pushed.column.id != column.id:
            return None
        column = pushed.column
        operands.extend(pushed.operands)
    return None if column is None else PushedPredicate(column, "in", tuple(operands))


def _is_string_literal(node: exp.Expr) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


def _operand(node: exp.Expr, column_type: DataType, *, allow_null: bool = False) -> Operand | None:
    if isinstance(node, exp.Parameter) and isinstance(node.this, exp.Literal):
        return Operand(
            parameter=parameter_number(node),
            blank_padded=bool(node.meta.get(BLANK_PADDED_PARAMETER)),
        )
    if isinstance(node, exp.Null):
        return Operand(None) if allow_null else None
    value = _literal_value(node)
    if value is _NOT_CONSTANT:
        return None
    try:
        return Operand(coerce_literal(value, column_type))
    except _Unconvertible:
        return None


_NOT_CONSTANT = object()


def _literal_value(node: exp.Expr) -> object:
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        value = _literal_value(node.this)
        return -value if isinstance(value, int) else _NOT_CONSTANT
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if not isinstance(node, exp.Literal):
        return _NOT_CONSTANT
    if node.is_string:
        return str(node.this)
    text = str(node.this)
    return int(text) if text.isdigit() else _NOT_CONSTANT


def coerce_literal(value: object, column_type: DataType) -> object:
    """A SQL literal as a value of ``column_type``, where PostgreSQL would read it the same way."""
    kind = column_type.kind
    if isinstance(value, str):
        if kind is TypeKind.DATE and _ISO_DATE.fullmatch(value):
            return _or_unconvertible(dt.date.fromisoformat, value)
        if (
            kind is TypeKind.TIMESTAMP
            and not column_type.with_time_zone
            and (_ISO_DATE.fullmatch(value) or _ISO_TIMESTAMP.fullmatch(value))
        ):
            return _or_unconvertible(dt.datetime.fromisoformat, value)
    return coerce(value, column_type)


def _or_unconvertible(parse: Callable[[str], object], value: str) -> object:
    try:
        return parse(value)
    except ValueError:
        raise _Unconvertible from None


def coerce(value: object, column_type: DataType) -> object:
    """``value`` unchanged if it is exactly a value of ``column_type``; else _Unconvertible."""
    kind = column_type.kind
    if value is None:
        return None
    if column_type.is_integer:
        if isinstance(value, int) and not isinstance(value, bool):
            low, high = column_type.integer_range
            if low <= value <= high:
                return value
        raise _Unconvertible
    if kind is TypeKind.BOOL and isinstance(value, bool):
        return value
    if column_type.text_type == "uuid" and isinstance(value, str):
        try:
            return canonical_uuid(value)
        except InvalidTextRepresentation:
            raise _Unconvertible from None
    if column_type.text_type:
        raise _Unconvertible  # a document compares by its normalised text, not as given
    if column_type.is_string and isinstance(value, str):
        return value
    if kind is TypeKind.BINARY and isinstance(value, bytes):
        return value
    if kind is TypeKind.DATE and isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if (
        kind is TypeKind.TIMESTAMP
        and isinstance(value, dt.datetime)
        and (value.tzinfo is not None) == column_type.with_time_zone
    ):
        return value
    raise _Unconvertible


def _literal_sql(value: object) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dt.date, dt.datetime)):
        return f"'{value.isoformat(sep=' ') if isinstance(value, dt.datetime) else value}'"
    if isinstance(value, bytes):
        return "'\\x" + value.hex() + "'"
    return "NULL" if value is None else str(value)
