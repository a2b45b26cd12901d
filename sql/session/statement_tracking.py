"""StatementTracking: a session's finished statements recorded for pg_stat_statements.

A query or write is recorded under its normalised ``Fingerprint`` and any other
statement verbatim, as PostgreSQL 15 does; the fingerprint of a text is worked
out once and kept beside its plan in the session's plan cache.  The time runs
from the end of planning until the last row is sent (PostgreSQL's executor
time includes sending the rows too); ``rows`` is what the command tag counts
for a write, COPY, FETCH or CREATE TABLE AS, else the rows a query sent, and
0 for other utility statements; a COPY FROM STDIN is recorded when its data
has all arrived and been written.  One clock read, a count per batch and a
dict update under a short lock: nothing per row.  Every statement's time also
goes to pg_stat_database's ``active_time``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pyarrow as pa
from sqlglot.tokens import Token

from sql.common.result import Result
from sql.execution.statement_stats import StatementStats
from sql.execution.table_activity import SessionActivity
from sql.frontend import fingerprint
from sql.frontend.fingerprint import Fingerprint
from sql.session.plan import DmlPlan, Plan, QueryPlan, SystemPlan
from sql.session.statement_settings import StatementSettings

_COUNTED_TAGS = frozenset({"INSERT", "UPDATE", "DELETE", "COPY", "FETCH", "SELECT", "MOVE"})


def fingerprint_of(plan: Plan, sql: str, tokens: list[Token]) -> Fingerprint:
    """How pg_stat_statements names the statement ``tokens`` spell, planned as ``plan``."""
    if isinstance(plan, (QueryPlan, DmlPlan, SystemPlan)):
        return fingerprint.normalised(sql, tokens)
    return fingerprint.verbatim(sql[tokens[0].start : tokens[-1].end + 1])


def _tag_rows(tag: str | None) -> int | None:
    if not tag:
        return None
    words = tag.split()
    if words[0] in _COUNTED_TAGS and words[-1].isdigit():
        return int(words[-1])
    return 0


class StatementTracking:
    """Records one session's statements in the database's ``StatementStats``, as its
    ``pg_stat_statements.track`` and ``track_utility`` settings say."""

    def __init__(
        self, stats: StatementStats, activity: SessionActivity, settings: StatementSettings
    ) -> None:
        self._stats = stats
        self._activity = activity
        self._settings = settings

    def _wanted(self, print_: Fingerprint) -> bool:
        """Whether pg_stat_statements.track and track_utility record the statement."""
        values = self._settings.current()
        return values.track and (values.track_utility or not print_.utility)

    def track(self, result: Result, user: str, print_: Fingerprint, started: float) -> Result:
        """``result`` with its statement recorded once its rows are all read."""
        if result.is_empty_query:
            return result
        if result.copy_in is not None:
            result.copy_in.on_finished = lambda rows: self._record(user, print_, started, rows)
            return result
        tag = result.command_tag
        rows = _tag_rows(tag) if tag else None
        if result.columns is None and result.copy_out is None:
            self._record(user, print_, started, rows or 0)
        else:
            result.batches = self._counting(result.batches, user, print_, started, rows)
        return result

    def track_batch(
        self, user: str, print_: Fingerprint, started: float, counts: list[int]
    ) -> None:
        """A pipelined run of one write's Executes: each a call, sharing the time."""
        elapsed_ms = (time.monotonic() - started) * 1000
        self._activity.statement_ran(elapsed_ms)
        if not self._wanted(print_):
            return
        share_ms = elapsed_ms / max(len(counts), 1)
        self._stats.record_many(user, print_.queryid, print_.text, share_ms, counts)

    def _counting(
        self,
        batches: Iterator[pa.RecordBatch],
        user: str,
        print_: Fingerprint,
        started: float,
        tag_rows: int | None,
    ) -> Iterator[pa.RecordBatch]:
        sent = 0
        for batch in batches:
            sent += batch.num_rows
            yield batch
        self._record(user, print_, started, tag_rows if tag_rows is not None else sent)

    def _record(self, user: str, print_: Fingerprint, started: float, rows: int) -> None:
        elapsed_ms = (time.monotonic() - started) * 1000
        self._activity.statement_ran(elapsed_ms)
        values = self._settings
        if values.version != values.session_settings.version:
            values.current()
        if values.track and (values.track_utility or not print_.utility):
            self._stats.record(user, print_.queryid, print_.text, elapsed_ms, rows, True)
