"""Transaction modes: BEGIN/SET TRANSACTION modes of a block and SET SESSION CHARACTERISTICS.

The isolation level a client asks for is kept and shown by ``SHOW
transaction_isolation``; nyala runs every transaction as it always does (a
fresh snapshot per statement, as READ COMMITTED).  READ ONLY is enforced:
the block's storage transaction refuses writes with 25006.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sql.result import Result
from sql.settings import SessionSettings
from sql.utility import Utility
from storage.errors import NoActiveSqlTransaction

if TYPE_CHECKING:
    from storage.transaction import Transaction

_LEVEL = "isolation level "


class TransactionModes:
    """One session's transaction modes: the session defaults and the open block's."""

    def __init__(self, settings: SessionSettings) -> None:
        self._settings = settings
        self._block_isolation = settings.get("default_transaction_isolation")

    def begin(self, modes: tuple[str, ...], txn: Transaction | None) -> None:
        """A block starts with the session defaults, then the modes BEGIN names."""
        self._block_isolation = self._settings.get("default_transaction_isolation")
        self.apply(modes, txn)

    def apply(self, modes: tuple[str, ...], txn: Transaction | None) -> None:
        for mode in modes:
            if mode.startswith(_LEVEL):
                self._block_isolation = mode.removeprefix(_LEVEL)
            elif mode in ("read only", "read write") and txn is not None:
                txn.read_only = mode == "read only"

    def set(self, utility: Utility, in_block: bool, txn: Transaction | None) -> Result:
        """``SET SESSION CHARACTERISTICS AS TRANSACTION ...`` or ``SET TRANSACTION ...``."""
        if utility.name == "characteristics":
            for mode in utility.modes:
                if mode.startswith(_LEVEL):
                    self._settings.set("default_transaction_isolation", mode.removeprefix(_LEVEL))
                elif mode in ("read only", "read write"):
                    value = "on" if mode == "read only" else "off"
                    self._settings.set("default_transaction_read_only", value)
            return Result(command_tag="SET")
        if not in_block:
            warning = NoActiveSqlTransaction(
                "SET TRANSACTION can only be used in transaction blocks", severity="WARNING"
            )
            return Result(command_tag="SET", notices=[warning])
        self.apply(utility.modes, txn)
        return Result(command_tag="SET")

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
