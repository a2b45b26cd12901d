"""CHECK constraints in CREATE TABLE and ALTER TABLE: read, name as PostgreSQL names them, check.

The expression is kept as PostgreSQL SQL over column names
(``catalog.constraints``); what it may use is checked here as PostgreSQL
checks it (42703 for an unknown column, 0A000 for a subquery, 42803 for an
aggregate).  Enforcement is in sql/dml (``dml.check_constraints``).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from catalog.constraints import CheckConstraint, choose_name
from catalog.temp_tables import user_name
from sql.common.names import identifier_name
from storage.errors import FeatureNotSupported, GroupingError, UndefinedColumn


def _columns_read(expression: exp.Expr, columns: Iterable[str]) -> tuple[str, ...]:
    known = set(columns)
    if expression.find(exp.Subquery, exp.Select):
        raise FeatureNotSupported("cannot use subquery in check constraint")
    if expression.find(exp.AggFunc):
        raise GroupingError("aggregate functions are not allowed in check constraints")
    read: list[str] = []
    for column in expression.find_all(exp.Column):
        name = identifier_name(column.this)
        if name not in known:
            raise UndefinedColumn(f'column "{name}" does not exist')
        if name not in read:
            read.append(name)
    return tuple(read)


def check_constraint(
    node: exp.CheckColumnConstraint,
    name: str | None,
    table: str,
    columns: Iterable[str],
    taken: Iterable[str],
    number: int,
    *,
    column: str | None = None,
    validated: bool = True,
) -> CheckConstraint:
    """A CHECK of the table ``table`` with ``columns``; unnamed, it gets PostgreSQL's name:
    ``<table>_<column>_check`` when it reads one column (or is a column's), else
    ``<table>_check``, numbered past the names ``taken``."""
    expression = node.this
    read = _columns_read(expression, columns)
    if name is None:
        single = column or (read[0] if len(read) == 1 else None)
        name = choose_name(user_name(table), single, "check", taken)
    sql = expression.sql(dialect="postgres")
    return CheckConstraint(name, sql, read, number, validated)


def table_constraint(node: exp.Expr) -> tuple[exp.CheckColumnConstraint, str | None] | None:
    """The CHECK and its name of a table constraint ``[CONSTRAINT name] CHECK (...)``."""
    if isinstance(node, exp.CheckColumnConstraint):
        return node, None
    if (
        isinstance(node, exp.Constraint)
        and len(node.expressions) == 1
        and isinstance(node.expressions[0], exp.CheckColumnConstraint)
    ):
        return node.expressions[0], identifier_name(node.this)
    return None


def violation_probe(table: str, check: CheckConstraint) -> str:
    """A query that returns a row when some row of ``table`` violates ``check``."""
    return f'SELECT 1 FROM "{table}" WHERE NOT ({check.expression}) LIMIT 1'
