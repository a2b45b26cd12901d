"""CHECK constraints on written rows: one query per statement over the rows about to be written.

PostgreSQL's rule is that a row passes when the expression is true or NULL.
The plan compiles ``SELECT bool_and((expr) IS NOT FALSE), ...`` over the
target table once (``plan_checks``); each batch of new row images is then
read by it in place of the table (the runner's overrides), so the check runs
vectorised in DuckDB with PostgreSQL's expression semantics (the planner's
transpiling), and the first constraint that fails is 23514.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from sqlglot import exp

from catalog.table import TableInfo
from sql.dml.write_plan import SourceRows
from sql.execution.runner import QueryRunner
from sql.frontend.parser import DIALECT
from sql.planner.compiled_query import CompiledQuery, compile_query
from sql.planner.transpile import SessionFacts
from storage.errors import CheckViolation
from storage.transaction import Transaction


def plan_checks(
    table: TableInfo, alias: str, runner: QueryRunner, facts: SessionFacts
) -> CompiledQuery | None:
    """The query that says, per CHECK constraint of ``table``, whether every row passes."""
    if not table.checks:
        return None
    tests = [
        exp.alias_(
            exp.func(
                "bool_and",
                exp.Not(
                    this=exp.Is(
                        this=exp.Paren(this=exp.maybe_parse(c.expression, dialect=DIALECT)),
                        expression=exp.false(),
                    )
                ),
            ),
            f"check_{i}",
            quoted=True,
        )
        for i, c in enumerate(table.checks)
    ]
    select = exp.select(*tests).from_(
        exp.Table(
            this=exp.to_identifier(table.name, quoted=True),
            alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True)),
        )
    )
    return compile_query(runner.bind(select, []), facts)


def enforce(
    table: TableInfo,
    checks: CompiledQuery | None,
    runner: SourceRows,
    txn: Transaction,
    rows: pa.Table,
    now: Any = None,
) -> None:
    """Raise 23514 naming the first CHECK constraint some row of ``rows`` violates."""
    if checks is None or rows.num_rows == 0:
        return
    result = runner.run_to_table(checks, txn, [], now, overrides={table.name: rows})
    if result is None:
        return
    for check, passed in zip(table.checks, result.to_pylist()[0].values(), strict=True):
        if passed is False:
            raise CheckViolation(
                f'new row for relation "{table.name}" violates check constraint "{check.name}"'
            )
