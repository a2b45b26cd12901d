"""Transaction modes: BEGIN/SET TRANSACTION modes of a block and SET SESSION CHARACTERISTICS.

The isolation level a client asks for is kept and shown by ``SHOW
transaction_isolation``.  READ COMMITTED (and READ UNCOMMITTED, as in
PostgreSQL) takes a fresh snapshot per statement; REPEATABLE READ one
snapshot, at the transaction's first statement; SERIALIZABLE runs as
REPEATABLE READ, with a NOTICE saying so.  READ ONLY is enforced: the
block's storage transaction refuses writes with 25006.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sql.common.result import Result
from sql.frontend.statements import Utility
from sql.session.settings import SessionSettings
from storage.errors import (
    ActiveSqlTransaction,
    DbError,
    FeatureNotSupported,
    NoActiveSqlTransaction,
)

if TYPE_CHECKING:
    from storage.transaction import Transaction

_LEVEL = "isolation level "
_SNAPSHOT_LEVELS = ("repeatable read", "serializable")


def is_repeatable_read(level: str) -> bool:
    """Whether ``level`` reads one snapshot for the whole transaction."""
    return level in _SNAPSHOT_LEVELS


def serializable_notice(level: str) -> list[DbError]:
    if level != "serializable":
        return []
    return [
        FeatureNotSupported(
            "SERIALIZABLE runs as REPEATABLE READ in nyala",
            detail="Transactions read one snapshot and fail with 40001 on a concurrent update, "
            "but read/write dependencies between transactions are not checked.",
            severity="NOTICE",
        )
    ]


class TransactionModes:
    """One session's transaction modes: the session defaults and the open block's."""

    def __init__(self, settings: SessionSettings) -> None:
        self._settings = settings
        self._block_isolation = settings.get("default_transaction_isolation")

    def default_isolation(self) -> str:
        return self._settings.get("default_transaction_isolation")

    def begin(self, modes: tuple[str, ...], txn: Transaction | None) -> list[DbError]:
        """A block starts with the session defaults, then the modes BEGIN names; returns the
        notices to send."""
        self._block_isolation = self.default_isolation()
        return self.apply(modes, txn, starting=True)

    def apply(
        self, modes: tuple[str, ...], txn: Transaction | None, *, starting: bool = False
    ) -> list[DbError]:
        notices: list[DbError] = []
        for mode in modes:
            if mode.startswith(_LEVEL):
                level = mode.removeprefix(_LEVEL)
                changed = level != self._block_isolation
                if not starting and txn is not None and txn.has_snapshot and changed:
                    raise ActiveSqlTransaction(
                        "SET TRANSACTION ISOLATION LEVEL must be called before any query",
                        severity="ERROR",
                    )
                self._block_isolation = level
                if txn is not None:
                    txn.repeatable_read = is_repeatable_read(level)
                notices = serializable_notice(level)
            elif mode in ("read only", "read write") and txn is not None:
                txn.read_only = mode == "read only"
        return notices

    def set(self, utility: Utility, in_block: bool, txn: Transaction | None) -> Result:
        """``SET SESSION CHARACTERISTICS AS TRANSACTION ...`` or ``SET TRANSACTION ...``."""
        if utility.name == "characteristics":
            notices: list[DbError] = []
            for mode in utility.modes:
                if mode.startswith(_LEVEL):
                    level = mode.removeprefix(_LEVEL)
                    self._settings.set("default_transaction_isolation", level)
                    notices = serializable_notice(level)
                elif mode in ("read only", "read write"):
                    value = "on" if mode == "read only" else "off"
                    self._settings.set("default_transaction_read_only", value)
            return Result(command_tag="SET", notices=notices)
        if not in_block:
            warning = NoActiveSqlTransaction(
                "SET TRANSACTION can only be used in transaction blocks", severity="WARNING"
            )
            return Result(command_tag="SET", notices=[warning])
        return Result(command_tag="SET", notices=self.apply(utility.modes, txn))

    def show(self, name: str, in_block: bool, txn: Transaction | None) -> str:
        """The value SHOW gives: the open block's modes, else the session's settings."""
        lowered = name.lower()
        if lowered == "transaction_isolation":
            if in_block:
                return self._block_isolation
            return self._settings.get("default_transaction_isolation")
        if lowered == "transaction_read_only":
            if in_block and txn is not None:
                return "on" if txn.read_only else "off"
            return self._settings.get("default_transaction_read_only")
        return self._settings.get(name)
