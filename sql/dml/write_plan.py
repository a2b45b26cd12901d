"""WritePlan: a planned INSERT, UPDATE or DELETE, as the write path and its re-check read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

from catalog.table import TableInfo
from sql.common.result import ResultColumn
from sql.dml import conflict, key_writes
from sql.dml.referential_checks import References
from sql.execution.executor import ScanStats
from sql.planner.compiled_query import CompiledQuery
from storage.row_lock_mode import RowLockMode
from storage.schema import ColumnSchema
from storage.transaction import Transaction


@dataclass(slots=True)
class WritePlan:
    """A planned INSERT, UPDATE or DELETE."""

    kind: str
    table: TableInfo
    source: CompiledQuery
    written: list[ColumnSchema]
    returning: CompiledQuery | None
    param_oids: list[int]
    conflict: conflict.ConflictAction | None = None
    changes_key: bool = False
    key_write: key_writes.KeyWrite | None = None
    """The same statement for the DuckDB-free path, when it qualifies (key_writes.py)."""
    constants: key_writes.KeyWrite | None = None
    """An INSERT ... VALUES of parameters and literals that the general path runs: its
    values, checked before DuckDB draws any SERIAL value (``key_writes.check_constants``)."""
    checks: CompiledQuery | None = None
    """The table's CHECK constraints over the new row images (``dml.checks``)."""
    references: References | None = None
    """The foreign keys the write must keep (``dml.referential_checks``)."""
    key_update: bool = False
    """An UPDATE that sets a column of a unique index: it locks its rows FOR UPDATE, not
    FOR NO KEY UPDATE (a key of the primary key moves the row, a delete, which does too)."""
    repeats: int = 1
    """How many rows ``source``'s one row stands for, each with the next parameters (a
    multi-row VALUES planned from its first row: ``dml.values_rows``)."""
    lock_mode: RowLockMode | None = None
    """Not a write but a ``SELECT ... FOR <mode>``'s row locks (``dml.locking_reads``): the
    UPDATE's rows are locked in this mode, nothing is written."""

    @property
    def columns(self) -> tuple[ResultColumn, ...] | None:
        return None if self.returning is None else self.returning.columns


class SourceRows(Protocol):
    """Where a write reads its rows: the session's QueryRunner, or COPY's batch standing in."""

    def run_to_table(
        self,
        compiled: CompiledQuery,
        txn: Transaction,
        params: list[Any] | None = None,
        now: Any = None,
        overrides: dict[str, pa.Table] | None = None,
        stats: ScanStats | None = None,
    ) -> pa.Table | None: ...
