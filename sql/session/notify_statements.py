"""LISTEN, UNLISTEN and NOTIFY: staged on the session's Listener (sql/execution/notifications.py)
and settled when the transaction ends, or at once when the statement is its own transaction."""

from __future__ import annotations

from sql.common.result import Result
from sql.execution.notifications import PAYLOAD_LIMIT, Listener
from sql.frontend.statements import Utility
from storage.errors import InvalidParameterValue

KINDS = ("LISTEN", "UNLISTEN", "NOTIFY")


def run(utility: Utility, listener: Listener, in_transaction: bool) -> Result:
    kind = utility.kind
    if kind == "LISTEN":
        listener.listen(utility.name)
    elif kind == "UNLISTEN":
        listener.unlisten(None if utility.name == "*" else utility.name)
    else:
        if len(utility.value.encode()) >= PAYLOAD_LIMIT:
            raise InvalidParameterValue("payload string too long")
        listener.notify(utility.name, utility.value)
    if not in_transaction:
        listener.end_transaction(committed=True)
    return Result(command_tag=kind)
