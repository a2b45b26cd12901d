"""SET CONSTRAINTS: defer or un-defer foreign keys for the rest of the transaction.

Outside a transaction block it is PostgreSQL's warning (25P01) and changes
nothing.  A name that is no constraint is 42704, one that is not DEFERRABLE
42809.  Making keys IMMEDIATE runs the checks they owe at once, as
PostgreSQL does.
"""

from __future__ import annotations

from catalog.catalog import Catalog
from sql.common.result import Result
from sql.dml import deferred_constraints
from sql.dml.referential_checks import check_deferred
from sql.frontend.statements import SetConstraints
from storage.errors import (
    DbError,
    NoActiveSqlTransaction,
    UndefinedObject,
    WrongObjectType,
)
from storage.transaction import Transaction

_TAG = "SET CONSTRAINTS"


def _check_name(catalog: Catalog, name: str) -> None:
    for table in catalog.tables():
        for key in table.foreign_keys:
            if key.name == name:
                if not key.deferrable:
                    raise WrongObjectType(f'constraint "{name}" is not deferrable')
                return
        others = [
            table.primary_key_name or f"{table.name}_pkey",
            *(c.name for c in table.checks),
            *(i.name for i in table.indexes if i.constraint),
        ]
        if name in others:
            raise WrongObjectType(f'constraint "{name}" is not deferrable')
    raise UndefinedObject(f'constraint "{name}" does not exist')


def set_constraints(
    statement: SetConstraints, catalog: Catalog, txn: Transaction | None, in_block: bool
) -> Result:
    for name in statement.names:
        _check_name(catalog, name)
    if not in_block or txn is None:
        warning: DbError = NoActiveSqlTransaction(
            "SET CONSTRAINTS can only be used in transaction blocks"
        )
        return Result(command_tag=_TAG, notices=[warning])
    modes = deferred_constraints.modes(txn)
    if statement.names:
        for name in statement.names:
            modes.named[name] = statement.deferred
    else:
        modes.every = statement.deferred
        modes.named.clear()
    if not statement.deferred:
        check_deferred(txn, set(statement.names) if statement.names else None)
    return Result(command_tag=_TAG)
