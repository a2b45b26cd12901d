"""Turn exceptions into ErrorResponse and NoticeResponse messages.

This is one of the two translation points of the error design (the other is
the SQL parser): a ``DbError`` carries its SQLSTATE, severity and optional
detail, hint and position, which map one to one onto the S, V, C, M, D, H and
P fields.  Any other exception is a bug: it becomes XX000 with its message,
is logged with its traceback, and the connection carries on.
"""

from __future__ import annotations

import logging

from server.messages import ErrorResponse, NoticeResponse
from storage.errors import DbError, InternalError

log = logging.getLogger(__name__)

_NOTICE_SEVERITIES = ("WARNING", "NOTICE", "INFO", "LOG", "DEBUG")


def as_db_error(exc: BaseException) -> DbError:
    """Return ``exc`` if it is a DbError, else an InternalError for it (logged: it is a bug)."""
    if isinstance(exc, DbError):
        return exc
    log.error("internal error: %s", exc, exc_info=exc)
    return InternalError(str(exc) or type(exc).__name__)


def _fields(error: DbError, severity: str) -> tuple[tuple[str, str], ...]:
    fields = [("S", severity), ("V", severity), ("C", error.sqlstate), ("M", error.message)]
    if error.detail:
        fields.append(("D", error.detail))
    if error.hint:
        fields.append(("H", error.hint))
    if error.position is not None:
        fields.append(("P", str(error.position)))
    context = error.context
    if context:
        fields.append(("W", context))
    return tuple(fields)


def error_response(exc: BaseException, severity: str | None = None) -> ErrorResponse:
    """The ErrorResponse for any exception that ended a statement (or, FATAL, a connection)."""
    error = as_db_error(exc)
    if severity is None:
        severity = error.severity if error.severity in ("ERROR", "FATAL", "PANIC") else "ERROR"
    return ErrorResponse(_fields(error, severity))


def notice_response(error: DbError) -> NoticeResponse:
    """The NoticeResponse for a condition reported without ending the statement."""
    severity = error.severity if error.severity in _NOTICE_SEVERITIES else "NOTICE"
    return NoticeResponse(_fields(error, severity))


def is_fatal(exc: BaseException) -> bool:
    """Whether the connection must close after reporting ``exc``."""
    return isinstance(exc, DbError) and exc.severity in ("FATAL", "PANIC")
