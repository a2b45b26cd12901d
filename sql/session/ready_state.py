"""ReadyState: what a ReadyForQuery reports, as the session answers it in one call
(``Session.sync_ready`` and ``ready_for_query``)."""

from __future__ import annotations

from typing import NamedTuple

from sql.execution.notifications import Notification


class ReadyState(NamedTuple):
    """What a ReadyForQuery reports (``Session.ready_for_query``)."""

    status: str
    """The transaction status: I, T or E."""
    parameters: dict[str, str]
    """The reported parameters: the same dict object while none changed."""
    notifications: list[Notification]
    """NOTIFYs to deliver before it (only when no transaction is open)."""
