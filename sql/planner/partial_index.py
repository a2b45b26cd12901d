"""Which partial indexes a scan may read through: those whose WHERE the query's WHERE implies.

A partial index holds only the rows its predicate accepts, so a scan may use
it only when every row the query wants from that table satisfies the
predicate.  As PostgreSQL's ``predicate_implied_by`` does for the simple
cases, each conjunct of the index predicate must follow from one conjunct
the query applies to the table reference (its WHERE, and join conditions
pushed into the scan):

- the same conjunct, written the same way (``status <> 'done'``, ``flag``);
- ``col IS NOT NULL`` from any comparison, IN list or LIKE prefix on ``col``
  (NULL satisfies none), also one with a ``$n``;
- an equality, IN list or range on ``col`` from one whose values all lie
  inside it: ``col > 5`` from ``col > 10`` or ``col = 7``, ``col IN (1, 2)``
  from ``col = 2``; a boolean column ``flag`` (``NOT flag``) is ``flag =
  true`` (``false``).

Constants only: a ``$n`` proves nothing but ``IS NOT NULL``, so a prepared
statement plans the same whatever its arguments.  Anything else (ORs,
expressions over several columns) is implied only by the same text.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import sqlglot
from sqlglot import exp

from catalog.indexes import IndexInfo
from sql.planner.binder import BoundQuery, TableRef
from sql.planner.pushdown import PushedPredicate, ScanPlan, conjunct_predicate, conjuncts_of
from storage.data_type import TypeKind
from storage.predicate import ColumnPredicate, PredicateKind


def mark_usable(bound: BoundQuery, scans: Sequence[ScanPlan]) -> None:
    """Set each scan's ``partial_indexes``: the partial indexes of its table it may use."""
    for ref, scan in zip(bound.tables, scans, strict=True):
        partial = [i for i in ref.table.indexes if i.predicate is not None]
        if partial:
            scan.partial_indexes = frozenset(
                i.name for i in partial if _implied(i, ref, scan.predicates, scan.where)
            )


def _implied(
    index: IndexInfo, ref: TableRef, pushed: list[PushedPredicate], where: list[exp.Expr]
) -> bool:
    assert index.predicate is not None
    texts = {_text(c) for c in where}
    for wanted in _index_conjuncts(index.predicate):
        if _text(wanted) in texts:
            continue
        conclusion = _atom(_qualified(wanted, ref.alias), ref)
        if conclusion is None:
            return False
        premises = [*pushed, *(a for c in where if (a := _atom(c, ref)) is not None)]
        if not any(_implies(p, conclusion) for p in premises):
            return False
    return True


@functools.lru_cache(maxsize=256)
def _parsed(predicate: str) -> exp.Expr:
    return sqlglot.parse_one(predicate, read="postgres")


def _index_conjuncts(predicate: str) -> list[exp.Expr]:
    return conjuncts_of(_parsed(predicate).copy())


def _qualified(node: exp.Expr, alias: str) -> exp.Expr:
    for column in node.find_all(exp.Column):
        column.set("table", exp.to_identifier(alias))
    return node


def _text(node: exp.Expr) -> str:
    """A conjunct's SQL with column qualifiers and redundant parentheses dropped."""
    bare = node.copy()
    while isinstance(bare, exp.Paren):
        bare = bare.this
    for column in bare.find_all(exp.Column):
        column.set("table", None)
    return bare.sql(dialect="postgres", normalize=True)


def _atom(node: exp.Expr, ref: TableRef) -> PushedPredicate | None:
    """``node`` as a one-column predicate, a bare boolean column as ``= true``."""
    while isinstance(node, exp.Paren):
        node = node.this
    negated = isinstance(node, exp.Not)
    column = node.this if negated else node
    if isinstance(column, exp.Column) and column.table == ref.alias:
        found = ref.table.schema.find(column.name)
        if found is not None and found.type.kind is TypeKind.BOOL:
            return conjunct_predicate(
                exp.EQ(this=column.copy(), expression=exp.Boolean(this=not negated)), ref
            )
    return conjunct_predicate(node, ref)


def _implies(premise: PushedPredicate, conclusion: PushedPredicate) -> bool:
    """Whether every row ``premise`` accepts ``conclusion`` accepts too."""
    if premise.column.id != conclusion.column.id:
        return False
    if conclusion.op == "notnull":
        return premise.op != "isnull"
    if conclusion.op == "isnull":
        return premise.op == "isnull"
    given, wanted = premise.constant(), conclusion.constant()
    if given is None or wanted is None:
        return False
    try:
        points = _points(given)
        if points is not None:
            return all(_contains(wanted, v) for v in points)
        if given.kind is PredicateKind.RANGE and wanted.kind is PredicateKind.RANGE:
            return _within(given, wanted)
    except TypeError:  # values of kinds that do not compare: nothing is proved
        return False
    return False


def _points(predicate: ColumnPredicate) -> tuple[object, ...] | None:
    if predicate.kind is PredicateKind.EQUALITY:
        return (predicate.value,)
    if predicate.kind is PredicateKind.IN_LIST:
        return predicate.values
    return None


def _contains(predicate: ColumnPredicate, value: object) -> bool:
    kind = predicate.kind
    if kind is PredicateKind.EQUALITY:
        return bool(value == predicate.value)
    if kind is PredicateKind.IN_LIST:
        return value in predicate.values
    if kind is PredicateKind.RANGE:
        low, high = predicate.lower, predicate.upper
        if low is not None and not (value > low or (predicate.lower_inclusive and value == low)):  # type: ignore[operator]
            return False
        return high is None or bool(value < high or (predicate.upper_inclusive and value == high))  # type: ignore[operator]
    return False


def _within(inner: ColumnPredicate, outer: ColumnPredicate) -> bool:
    """Whether range ``inner`` lies inside range ``outer``."""
    if outer.lower is not None:
        if inner.lower is None:
            return False
        if not (
            inner.lower > outer.lower  # type: ignore[operator]
            or (inner.lower == outer.lower and (outer.lower_inclusive or not inner.lower_inclusive))
        ):
            return False
    if outer.upper is not None:
        if inner.upper is None:
            return False
        if not (
            inner.upper < outer.upper  # type: ignore[operator]
            or (inner.upper == outer.upper and (outer.upper_inclusive or not inner.upper_inclusive))
        ):
            return False
    return True
