"""COPY FROM's INSERT plans, made once and shared by every session while the catalog stands.

Planning the ``INSERT INTO t (cols) SELECT ...`` a COPY writes through (bind,
transpile, CHECK and foreign-key plans) costs milliseconds of sqlglot work, as
much as a small COPY's rows; a Spark write sends each task's rows as its own
COPY from a new session, so each paid it again.  A plan depends on the table
(its TableInfo: DDL makes a new one), the rest of the catalog (foreign keys'
parents: ``Catalog.ddl_sequence`` moves with every DDL committed), the COPY's
columns, the session facts folded into it (users, database, version) and the
styles date and interval constants are read in; the rows and the transaction
come with each run, so one plan serves any number of sessions, as a prepared
statement's serves its executions.  Two things keep a plan to its session: a
transaction's own uncommitted DDL (never shared), and a sequence call
(``nextval`` of a serial default), which names the session whose ``currval``
it sets: such a plan is kept for that session alone.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from catalog.table import TableInfo
from sql.dml.write_plan import WritePlan
from sql.execution.runner import QueryRunner
from sql.planner.sequence_calls import FUNCTIONS as SEQUENCE_FUNCTIONS
from sql.planner.transpile import SessionFacts

ENTRIES = 256


@dataclass(frozen=True, slots=True)
class _Key:
    table_oid: int
    table_name: str
    columns: tuple[str, ...]
    user: str
    session_user: str
    database: str
    version: str
    date_order: str
    interval_style: str
    session_id: int
    """0 for a plan any session may run; else the one session whose sequences it calls."""


@dataclass(frozen=True, slots=True)
class _Entry:
    table: TableInfo
    ddl_sequence: int
    plan: WritePlan


class InsertPlans:
    """An LRU of COPY FROM's INSERT plans (see the module)."""

    def __init__(self, entries: int = ENTRIES) -> None:
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()
        self._capacity = entries
        self._lock = threading.Lock()
        self.made = 0
        """Plans made rather than found (for tests)."""

    def plan(
        self,
        table: TableInfo,
        columns: tuple[str, ...],
        runner: QueryRunner,
        facts: SessionFacts,
        make: Callable[[], WritePlan],
    ) -> WritePlan:
        """The plan ``make`` makes for COPY into ``table`` (``columns``), made once."""
        catalog = runner.catalog
        if catalog.changed:
            self.made += 1
            return make()  # this transaction's DDL: what other sessions cannot see yet
        sequence = catalog.ddl_sequence
        shared = _key(table, columns, runner, facts, 0)
        own = _key(table, columns, runner, facts, facts.session_id)
        with self._lock:
            for key in (shared, own):
                entry = self._entries.get(key)
                if entry is None:
                    continue
                if entry.table is table and entry.ddl_sequence == sequence:
                    self._entries.move_to_end(key)
                    return entry.plan
                del self._entries[key]
        plan = make()
        self.made += 1
        if plan.table is not table or catalog.ddl_sequence != sequence:
            return plan  # DDL committed meanwhile: correct for this COPY, not to keep
        key = own if _names_session(plan) else shared
        with self._lock:
            self._entries[key] = _Entry(table, sequence, plan)
            self._entries.move_to_end(key)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)
        return plan


def _key(
    table: TableInfo,
    columns: tuple[str, ...],
    runner: QueryRunner,
    facts: SessionFacts,
    session_id: int,
) -> _Key:
    return _Key(
        table.oid, table.name, columns, facts.user, facts.session_user, facts.database,
        facts.version, runner.date_order, runner.interval_style, session_id,
    )  # fmt: skip


def _names_session(plan: WritePlan) -> bool:
    """Whether the plan calls a sequence function, which carries the session's id."""
    queries = [plan.source, *([plan.checks] if plan.checks is not None else [])]
    texts = [query.sql.lower() for query in queries]  # DuckDB SQL spells them NYF_NEXTVAL
    return any(function in text for text in texts for function in SEQUENCE_FUNCTIONS.values())


INSERT_PLANS = InsertPlans()
"""The server's one cache: sessions share it (each Spark task is a new session)."""
