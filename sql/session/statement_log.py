"""log_statement, log_min_duration_statement, log_connections and log_disconnections.

Written through ``logging`` (logger ``nyala.statements``) in PostgreSQL's
wording, so the lines read as a PostgreSQL log does: ``statement: ...`` when
a statement of the kind ``log_statement`` names starts (``ddl``: DDL, roles
and privileges; ``mod``: those plus writes, TRUNCATE and COPY FROM; ``all``),
``duration: 12.345 ms  statement: ...`` when one that took at least
``log_min_duration_statement`` finishes (its rows sent, for a query), and
``connection authorized`` / ``disconnection`` lines.  Superusers set them
(42501 for others, as in PostgreSQL); the server's own ``--log-level`` must
let INFO through.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pyarrow as pa

from sql.common.result import Result
from sql.session.plan import (
    CopyPlan,
    DdlPlan,
    DmlPlan,
    ExplainPlan,
    GrantPlan,
    Plan,
    RolePlan,
    TruncatePlan,
)
from sql.session.settings import SessionSettings, duration_ms

log = logging.getLogger("nyala.statements")


def _threshold_ms(value: str) -> int | None:
    """log_min_duration_statement in milliseconds; None when off (-1)."""
    return None if value.strip() == "-1" else duration_ms(value)


def _kind(plan: Plan) -> str:
    """The log_statement class of a plan: ddl, mod or all."""
    match plan:
        case DdlPlan() | RolePlan() | GrantPlan():
            return "ddl"
        case DmlPlan() | TruncatePlan():
            return "mod"
        case CopyPlan(copy=copy) if copy.is_from:
            return "mod"
        case ExplainPlan(analyze=True, inner=DmlPlan()):
            return "mod"
    return "all"


_LEVELS = {"none": 0, "ddl": 1, "mod": 2, "all": 3}


def level_and_threshold(settings: SessionSettings) -> tuple[int, int | None]:
    """log_statement's level (0: none) and log_min_duration_statement's threshold (None:
    off): with 0 and None a statement logs nothing."""
    return (
        _LEVELS.get(settings.get("log_statement"), 0),
        _threshold_ms(settings.get("log_min_duration_statement")),
    )


def _log_duration(text: str, started: float, threshold: float) -> None:
    elapsed_ms = (time.monotonic() - started) * 1000
    if elapsed_ms >= threshold:
        log.info("duration: %.3f ms  statement: %s", elapsed_ms, text)


class StatementLog:
    """One session's statement logging, read from its settings at each statement."""

    def __init__(self, settings: SessionSettings, user: str, database: str) -> None:
        self._settings = settings
        self._user = user
        self._database = database
        self._started = time.monotonic()
        if settings.get("log_connections") == "on":
            log.info("connection authorized: user=%s database=%s", user, database)

    def _wanted(self) -> tuple[int, int | None]:
        """log_statement's level and log_min_duration_statement's threshold, read once per
        change of the settings (with both off, a statement costs two look-ups here)."""
        settings = self._settings
        return settings.cached(StatementLog._wanted, lambda: level_and_threshold(settings))

    def statement(self, plan: Plan, text: str) -> None:
        wanted = self._wanted()[0]
        if wanted and _LEVELS[_kind(plan)] <= wanted:
            log.info("statement: %s", text)

    def timed(self, result: Result, text: str, started: float) -> Result:
        """``result`` with its rows timed: the duration is logged once they are all read."""
        threshold = self._wanted()[1]
        if threshold is None:
            return result
        if result.columns is None and result.copy_out is None:
            _log_duration(text, started, threshold)
        else:
            result.batches = self._timing(result.batches, text, started, threshold)
        return result

    def _timing(
        self, batches: Iterator[pa.RecordBatch], text: str, started: float, threshold: float
    ) -> Iterator[pa.RecordBatch]:
        yield from batches
        _log_duration(text, started, threshold)

    def close(self) -> None:
        if self._settings.get("log_disconnections") == "on":
            elapsed = time.monotonic() - self._started
            hours, rest = divmod(elapsed, 3600)
            minutes, seconds = divmod(rest, 60)
            log.info(
                "disconnection: session time: %d:%02d:%06.3f user=%s database=%s",
                hours, minutes, seconds, self._user, self._database,
            )  # fmt: skip
