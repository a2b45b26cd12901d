"""Plans: a statement as the session prepared it, one class per kind, each with what it runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeGuard

from sqlglot import exp

from sql.common.result import ResultColumn
from sql.dml.column_use import ColumnUse
from sql.dml.write_plan import WritePlan
from sql.frontend.statements import (
    CopyStatement,
    CursorStatement,
    DefaultPrivilegesStatement,
    ExecuteStatement,
    ExtensionStatement,
    GrantStatement,
    MaintenanceStatement,
    MembershipStatement,
    OwnedStatement,
    OwnerStatement,
    ParsedStatement,
    PrepareStatement,
    RoleStatement,
    SetConstraints,
    Utility,
)
from sql.pg_catalog import system_query
from sql.planner.compiled_query import CompiledQuery


@dataclass(slots=True)
class QueryPlan:
    """A SELECT or VALUES, compiled for DuckDB over tablet scans."""

    query: CompiledQuery
    catalog_version: int
    lock: WritePlan | None = None
    """SELECT ... FOR UPDATE/SHARE: the plan that locks its rows first (dml/locking_reads.py)."""
    lock_nowait: bool = False
    locked: tuple[str, ...] = ()
    """The tables a FOR UPDATE/SHARE clause names, which need UPDATE (``access``)."""


@dataclass(slots=True)
class DmlPlan:
    """An INSERT, UPDATE, DELETE or UPSERT, planned as a query over its target table."""

    write: WritePlan
    catalog_version: int
    reads_target: bool = True
    """Whether it reads the target's columns, so needs SELECT on it (``access``)."""
    ast: exp.Expr | None = None
    """The statement, whose columns ``access`` checks when a role lacks a table privilege."""
    column_use: ColumnUse | None = None
    """What ``ast`` does to each column of the target (``dml.column_use``), once needed."""
    refold: Callable[[], DmlPlan] | None = None
    """For a write calling catalog functions (``pg_catalog.dml_calls``): plans it again with
    their values of this execution; this plan holds only their types."""


@dataclass(slots=True)
class SystemPlan:
    """A query over the emulated catalogs (pg_catalog, information_schema)."""

    system: system_query.SystemQuery
    catalog_version: int


@dataclass(slots=True)
class ExplainPlan:
    """EXPLAIN [ANALYZE] of a query or write, as text or (``json``) one JSON document."""

    analyze: bool
    inner: QueryPlan | DmlPlan
    json: bool = False

    @property
    def catalog_version(self) -> int:
        return self.inner.catalog_version


@dataclass(slots=True)
class UtilityPlan:
    """Transaction control, SET, SHOW, RESET, ...: run by the session itself."""

    utility: Utility


@dataclass(slots=True)
class ConstraintModesPlan:
    """SET CONSTRAINTS, run against the session's transaction."""

    statement: SetConstraints


@dataclass(slots=True)
class MaintenancePlan:
    """VACUUM or ANALYZE of tables already checked to exist."""

    statement: MaintenanceStatement


@dataclass(slots=True)
class DdlPlan:
    """CREATE, ALTER, DROP or COMMENT ON, applied to the catalog."""

    ast: exp.Expr


@dataclass(slots=True)
class TruncatePlan:
    """TRUNCATE of tables already checked to exist."""

    ast: exp.TruncateTable


@dataclass(slots=True)
class GrantPlan:
    """GRANT or REVOKE of privileges or of role membership, ALTER TABLE ... OWNER TO,
    ALTER DEFAULT PRIVILEGES, REASSIGN OWNED or DROP OWNED."""

    grant: (
        GrantStatement
        | OwnerStatement
        | MembershipStatement
        | OwnedStatement
        | DefaultPrivilegesStatement
    )


@dataclass(slots=True)
class RolePlan:
    """CREATE, ALTER or DROP ROLE."""

    role: RoleStatement


@dataclass(slots=True)
class CopyPlan:
    """COPY FROM STDIN or TO STDOUT."""

    copy: CopyStatement


@dataclass(slots=True)
class CursorPlan:
    """FETCH, MOVE or CLOSE of a cursor."""

    cursor: CursorStatement


@dataclass(slots=True)
class ExtensionPlan:
    """CREATE or DROP EXTENSION."""

    extension: ExtensionStatement


@dataclass(slots=True)
class DeclarePlan:
    """DECLARE ... CURSOR FOR a query, planned with the cursor."""

    cursor: CursorStatement
    inner: QueryPlan | SystemPlan


@dataclass(slots=True)
class PreparePlan:
    """SQL-level PREPARE name [(types)] AS statement; ``source``, the query string it came in."""

    statement: PrepareStatement
    source: str = ""


@dataclass(slots=True)
class ExecutePlan:
    """SQL-level EXECUTE name [(arguments)]."""

    statement: ExecuteStatement


Plan = (
    QueryPlan | DmlPlan | SystemPlan | ExplainPlan | UtilityPlan | DdlPlan | TruncatePlan
    | RolePlan | GrantPlan | CopyPlan | CursorPlan | DeclarePlan | MaintenancePlan
    | ExtensionPlan
    | ConstraintModesPlan
    | PreparePlan | ExecutePlan
)  # fmt: skip


def row_types(columns: Sequence[ResultColumn] | None) -> list[tuple[int, int]] | None:
    return None if columns is None else [(c.type_oid, c.typmod) for c in columns]


def reusable(plan: Plan) -> TypeGuard[QueryPlan | DmlPlan | SystemPlan]:
    """Queries, writes and catalog queries (not EXPLAIN)."""
    return isinstance(plan, (QueryPlan, DmlPlan, SystemPlan))


def statement_name(statement: ParsedStatement) -> str:
    """The statement's leading keywords, as PostgreSQL names commands (``ALTER TABLE``)."""
    words = statement.text.upper().split()[:2]
    if words and words[0] in ("CREATE", "DROP", "ALTER"):
        return " ".join(words)
    return words[0] if words else ""
