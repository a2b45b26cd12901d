"""Session timeouts on the event loop: statement_timeout and idle_in_transaction_session_timeout.

Both are session settings in milliseconds (0 turns them off), read when a
statement starts or when the connection goes idle, as PostgreSQL reads them.
A statement timeout cancels the running statement the way a CancelRequest
does, through ``Session.cancel``; the 57014 that comes back is reworded as
PostgreSQL words it.  An idle-in-transaction timeout ends the connection with
FATAL 25P03.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from sql.session.settings import duration_ms
from storage.errors import DbError, IdleInTransactionSessionTimeout, QueryCanceled

STATEMENT_TIMEOUT_MESSAGE = "canceling statement due to statement timeout"
IDLE_IN_TRANSACTION_MESSAGE = "terminating connection due to idle-in-transaction timeout"


def milliseconds(value: str) -> int:
    """A timeout setting's value in milliseconds (0 when off or unreadable)."""
    try:
        return duration_ms(value)
    except DbError:
        return 0


class StatementTimer:
    """Arms statement_timeout for one statement and calls ``cancel`` when it runs out."""

    def __init__(self, cancel: Callable[[], None]) -> None:
        self._cancel = cancel
        self.handle: asyncio.TimerHandle | None = None
        """Set while armed."""
        self.has_fired = False

    def start(self, timeout_ms: int) -> None:
        """Arm the timer (a caller with statement_timeout off and the timer not armed may
        leave both ``start`` and ``stop`` out: ``has_fired`` is then reset by hand)."""
        self.stop()
        self.has_fired = False
        if timeout_ms > 0:
            loop = asyncio.get_running_loop()
            self.handle = loop.call_later(timeout_ms / 1000, self._fire)

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None

    def _fire(self) -> None:
        self.handle = None
        self.has_fired = True
        self._cancel()

    def reword(self, exc: BaseException) -> BaseException:
        """The error to report: a cancel caused by this timer names the statement timeout."""
        if self.has_fired and isinstance(exc, QueryCanceled):
            return QueryCanceled(STATEMENT_TIMEOUT_MESSAGE)
        return exc


def idle_in_transaction_error() -> DbError:
    return IdleInTransactionSessionTimeout(IDLE_IN_TRANSACTION_MESSAGE)
