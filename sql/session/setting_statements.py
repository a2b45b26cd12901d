"""SET, SHOW, RESET, DEALLOCATE and DISCARD: utility statements about settings and prepared
statements, which leave the transaction block as it is."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from sql.common.result import Result, ResultColumn
from sql.frontend.statements import Utility
from sql.session.settings import SessionSettings
from sql.session.transaction_modes import TransactionModes
from storage.errors import (
    ActiveSqlTransaction,
    DbError,
    FeatureNotSupported,
    NoActiveSqlTransaction,
)
from storage.type_oids import TypeOid

if TYPE_CHECKING:
    from storage.transaction import Transaction

READ_TIMESTAMP = "nyala.read_timestamp"
KINDS = ("SET", "DEALLOCATE", "DISCARD", "RESET", "SHOW")


def run(
    utility: Utility,
    settings: SessionSettings,
    modes: TransactionModes,
    in_block: bool,
    txn: Transaction | None,
) -> Result:
    kind = utility.kind
    if kind == "SET":
        if utility.name in ("transaction", "characteristics"):
            return modes.set(utility, in_block, txn)
        if utility.local and not in_block:
            warning = NoActiveSqlTransaction(
                "SET LOCAL can only be used in transaction blocks", severity="WARNING"
            )
            return Result(command_tag="SET", notices=[warning])
        if utility.local:
            settings.remember_local(utility.name)
        if utility.value.lower() == "default" or (
            utility.value.lower() == "local" and settings.canonical_name(utility.name) == "TimeZone"
        ):
            settings.reset(utility.name)
        else:
            settings.set(utility.name, utility.value)
        notices: list[DbError] = []
        if not settings.honoured(utility.name):
            notices.append(
                FeatureNotSupported(
                    f'parameter "{settings.canonical_name(utility.name)}" is accepted, '
                    "but nyala does not act on it",
                    severity="NOTICE",
                )
            )
        if txn is not None and settings.get(READ_TIMESTAMP):
            txn.read_only = True  # reading the past, the transaction cannot write
        return Result(command_tag="SET", notices=notices)
    if kind == "DEALLOCATE":
        tag = "DEALLOCATE" if utility.name else "DEALLOCATE ALL"
        return Result(command_tag=tag, deallocate=utility.name)
    if kind == "DISCARD":
        if utility.name != "ALL":
            return Result(command_tag=f"DISCARD {utility.name}")
        if in_block:
            raise ActiveSqlTransaction("DISCARD ALL cannot run inside a transaction block")
        settings.reset_all()
        return Result(command_tag="DISCARD ALL", deallocate="")
    if kind == "RESET":
        if utility.name.lower() == "all":
            settings.reset_all()
        else:
            settings.reset(utility.name)
        return Result(command_tag="RESET")
    assert kind == "SHOW", f"{kind} is one of KINDS"
    columns = show_columns(utility, settings)
    if utility.name.lower() == "all":
        rows = settings.all()
        batch = pa.RecordBatch.from_arrays(
            [
                pa.array([r[0] for r in rows]),
                pa.array([r[1] for r in rows]),
                pa.array([""] * len(rows)),
            ],
            names=["name", "setting", "description"],
        )
    else:
        value = modes.show(utility.name, in_block, txn)
        batch = pa.RecordBatch.from_arrays([pa.array([value])], names=[columns[0].name])
    return Result(columns=columns, batches=iter([batch]), command_tag="SHOW")


def show_columns(utility: Utility, settings: SessionSettings) -> tuple[ResultColumn, ...]:
    """SHOW's RowDescription: one text column named after the setting (three for SHOW ALL)."""
    if utility.name.lower() == "all":
        return tuple(ResultColumn(n, TypeOid.TEXT) for n in ("name", "setting", "description"))
    settings.get(utility.name)
    return (ResultColumn(settings.canonical_name(utility.name), TypeOid.TEXT),)
