"""Plan: a statement as the session prepared it, and what a plan's kind and shape say."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sql.common.result import ResultColumn
from sql.copy import copy_statement
from sql.ddl import roles
from sql.dml import writes
from sql.frontend.parser import ParsedStatement
from sql.frontend.utility import Utility
from sql.pg_catalog import system_query
from sql.planner.compiled_query import CompiledQuery
from sql.session import cursors, explain


@dataclass(slots=True)
class Plan:
    """A statement ready to execute: what kind it is and what was compiled for it."""

    kind: str
    ast: exp.Expression | None = None
    utility: Utility | None = None
    query: CompiledQuery | None = None
    write: writes.WritePlan | None = None
    copy: copy_statement.CopyStatement | None = None
    role: roles.RoleStatement | None = None
    catalog_version: int = 0
    explain: explain.ExplainOptions | None = None
    system: system_query.SystemQuery | None = None
    cursor: cursors.CursorStatement | None = None
    inner: Plan | None = None


def row_types(columns: Sequence[ResultColumn] | None) -> list[tuple[int, int]] | None:
    return None if columns is None else [(c.type_oid, c.typmod) for c in columns]


def reusable(plan: Plan) -> bool:
    """Queries and writes (not EXPLAIN, whose options are set on the plan)."""
    return plan.explain is None and plan.kind in ("QUERY", "WRITE")


def values_query(values: exp.Values) -> exp.Select:
    """``VALUES ...`` as a query, its columns named column1, column2, ... as PostgreSQL names them."""
    width = len(values.expressions[0].expressions) if values.expressions else 0
    values.set(
        "alias",
        exp.TableAlias(
            this=exp.to_identifier("*VALUES*", quoted=True),
            columns=[exp.to_identifier(f"column{i + 1}") for i in range(width)],
        ),
    )
    return exp.select("*").from_(values)


def statement_name(statement: ParsedStatement) -> str:
    """The statement's leading keywords, as PostgreSQL names commands (``ALTER TABLE``)."""
    words = statement.text.upper().split()[:2]
    if words and words[0] in ("CREATE", "DROP", "ALTER"):
        return " ".join(words)
    return words[0] if words else ""
