"""Every error that ends a statement, each class carrying its PostgreSQL SQLSTATE.

One hierarchy for all layers (psycopg's pattern): a class declares its code in
the class statement, ``__init_subclass__`` registers it, and duplicate codes
are refused.  Intermediate classes mirror PostgreSQL's two-character classes,
so ``except IntegrityConstraintViolation`` catches 23505 and 23502 alike.
``server/`` turns any ``DbError`` into ErrorResponse fields; anything else is
a bug and becomes XX000.
"""

from __future__ import annotations

import errno
from typing import ClassVar, Self

_BY_SQLSTATE: dict[str, type[DbError]] = {}


class DbError(Exception):
    """An error with a SQLSTATE, a PostgreSQL-style message and optional fields.

    ``severity`` may be lowered per instance (NOTICE, WARNING) when the condition is
    reported to the client without ending the statement.  ``context`` is PostgreSQL's
    CONTEXT field (where the error happened, e.g. ``COPY t, line 3``); ``copy_line`` is the
    number, from 1, of the COPY row an error is about, as the decoder that found it counts
    rows, for the COPY reader to turn into a ``context`` naming the line of the input.
    """

    sqlstate: ClassVar[str] = "XX000"
    severity: str = "ERROR"

    def __init_subclass__(cls, sqlstate: str | None = None, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if sqlstate is not None:
            if sqlstate in _BY_SQLSTATE:
                raise TypeError(f"SQLSTATE {sqlstate} already belongs to {_BY_SQLSTATE[sqlstate]}")
            cls.sqlstate = sqlstate
            _BY_SQLSTATE[sqlstate] = cls

    def __init__(
        self,
        message: str,
        *,
        detail: str | None = None,
        hint: str | None = None,
        position: int | None = None,
        severity: str | None = None,
        context: str | None = None,
        copy_line: int | None = None,
    ) -> None:
        super().__init__(message)
        if severity is not None:
            self.severity = severity
        self.message = message
        self.detail = detail
        self.hint = hint
        self.position = position
        self.context = context
        self.copy_line = copy_line

    def add_context(self, context: str) -> Self:
        """Attach where the error happened (the CONTEXT field), replacing any earlier
        context; returns the error, so ``raise error.add_context(...)`` reads in one line."""
        self.context = context
        return self


def error_class(sqlstate: str) -> type[DbError]:
    """Return the class registered for a SQLSTATE (DbError itself if none is)."""
    return _BY_SQLSTATE.get(sqlstate, DbError)


# 00: successful completion
class Notice(DbError, sqlstate="00000"):
    """A plain NOTICE, which PostgreSQL sends with SQLSTATE 00000."""

    severity = "NOTICE"


# 01: warning
class SqlWarning(DbError, sqlstate="01000"):
    severity = "WARNING"


class PrivilegeNotRevoked(SqlWarning, sqlstate="01006"):
    pass


class PrivilegeNotGranted(SqlWarning, sqlstate="01007"):
    pass


# 08: connection exception
class ProtocolViolation(DbError, sqlstate="08P01"):
    pass


# 0A: feature not supported
class FeatureNotSupported(DbError, sqlstate="0A000"):
    pass


# 22: data exception
class DataException(DbError, sqlstate="22000"):
    pass


class CardinalityViolation(DbError, sqlstate="21000"):
    pass


class StringDataRightTruncation(DataException, sqlstate="22001"):
    pass


class NumericValueOutOfRange(DataException, sqlstate="22003"):
    pass


class NullValueNotAllowed(DataException, sqlstate="22004"):
    pass


class InvalidDatetimeFormat(DataException, sqlstate="22007"):
    pass


class DatetimeFieldOverflow(DataException, sqlstate="22008"):
    pass


class DivisionByZero(DataException, sqlstate="22012"):
    pass


class InvalidParameterValue(DataException, sqlstate="22023"):
    pass


class InvalidEscapeSequence(DataException, sqlstate="22025"):
    pass


class CharacterNotInRepertoire(DataException, sqlstate="22021"):
    pass


class InvalidRegularExpression(DataException, sqlstate="2201B"):
    pass


class SequenceGeneratorLimitExceeded(DataException, sqlstate="2200H"):
    pass


class InvalidTablesampleArgument(DataException, sqlstate="2202H"):
    pass


class InvalidTablesampleRepeat(DataException, sqlstate="2202G"):
    pass


class InvalidTextRepresentation(DataException, sqlstate="22P02"):
    pass


class InvalidBinaryRepresentation(DataException, sqlstate="22P03"):
    pass


class UntranslatableCharacter(DataException, sqlstate="22P05"):
    pass


class BadCopyFileFormat(DataException, sqlstate="22P04"):
    pass


# 23: integrity constraint violation
class IntegrityConstraintViolation(DbError, sqlstate="23000"):
    pass


class NotNullViolation(IntegrityConstraintViolation, sqlstate="23502"):
    pass


class UniqueViolation(IntegrityConstraintViolation, sqlstate="23505"):
    index_name: str | None = None
    """The secondary index that found the duplicate (None: the primary key)."""


class CheckViolation(IntegrityConstraintViolation, sqlstate="23514"):
    pass


class ForeignKeyViolation(IntegrityConstraintViolation, sqlstate="23503"):
    pass


# 2B: dependent objects still exist
class DependentPrivilegeDescriptorsStillExist(DbError, sqlstate="2B000"):
    pass


class DependentObjectsStillExist(DependentPrivilegeDescriptorsStillExist, sqlstate="2BP01"):
    """DROP of an object others depend on (a table a view reads, a role that owns one)
    without CASCADE."""


# 25: invalid transaction state
class InvalidTransactionState(DbError, sqlstate="25000"):
    pass


class ActiveSqlTransaction(InvalidTransactionState, sqlstate="25001"):
    severity = "WARNING"


class ReadOnlySqlTransaction(InvalidTransactionState, sqlstate="25006"):
    pass


class NoActiveSqlTransaction(InvalidTransactionState, sqlstate="25P01"):
    severity = "WARNING"


class InFailedSqlTransaction(InvalidTransactionState, sqlstate="25P02"):
    pass


# 26, 34: prepared statements and portals
class InvalidSqlStatementName(DbError, sqlstate="26000"):
    pass


class InvalidCursorName(DbError, sqlstate="34000"):
    pass


# 28: invalid authorization specification
class InvalidAuthorizationSpecification(DbError, sqlstate="28000"):
    severity = "FATAL"


class InvalidPassword(InvalidAuthorizationSpecification, sqlstate="28P01"):
    pass


# 3B: savepoint exception
class SavepointException(DbError, sqlstate="3B000"):
    pass


class InvalidSavepointSpecification(SavepointException, sqlstate="3B001"):
    pass


# 3D: invalid catalog name
class InvalidCatalogName(DbError, sqlstate="3D000"):
    severity = "FATAL"


# 0L: invalid grantor
class InvalidGrantOperation(DbError, sqlstate="0LP01"):
    pass


# 3F: invalid schema name
class InvalidSchemaName(DbError, sqlstate="3F000"):
    pass


# 40: transaction rollback
class TransactionRollback(DbError, sqlstate="40000"):
    pass


class SerializationFailure(TransactionRollback, sqlstate="40001"):
    pass


class DeadlockDetected(TransactionRollback, sqlstate="40P01"):
    pass


# 42: syntax error or access rule violation
class SyntaxErrorOrAccessRuleViolation(DbError, sqlstate="42000"):
    pass


class SqlSyntaxError(SyntaxErrorOrAccessRuleViolation, sqlstate="42601"):
    pass


class InvalidColumnDefinition(SyntaxErrorOrAccessRuleViolation, sqlstate="42611"):
    pass


class GeneratedAlways(SyntaxErrorOrAccessRuleViolation, sqlstate="428C9"):
    pass


class InvalidTableDefinition(SyntaxErrorOrAccessRuleViolation, sqlstate="42P16"):
    pass


class WrongObjectType(SyntaxErrorOrAccessRuleViolation, sqlstate="42809"):
    pass


class InvalidObjectDefinition(SyntaxErrorOrAccessRuleViolation, sqlstate="42P17"):
    pass


class InvalidColumnReference(SyntaxErrorOrAccessRuleViolation, sqlstate="42P10"):
    pass


class InsufficientPrivilege(SyntaxErrorOrAccessRuleViolation, sqlstate="42501"):
    pass


class ReservedName(SyntaxErrorOrAccessRuleViolation, sqlstate="42939"):
    pass


class UndefinedColumn(SyntaxErrorOrAccessRuleViolation, sqlstate="42703"):
    pass


class UndefinedFunction(SyntaxErrorOrAccessRuleViolation, sqlstate="42883"):
    pass


class AmbiguousFunction(SyntaxErrorOrAccessRuleViolation, sqlstate="42725"):
    pass


class NameTooLong(SyntaxErrorOrAccessRuleViolation, sqlstate="42622"):
    pass


class UndefinedTable(SyntaxErrorOrAccessRuleViolation, sqlstate="42P01"):
    pass


class UndefinedObject(SyntaxErrorOrAccessRuleViolation, sqlstate="42704"):
    pass


class DuplicateColumn(SyntaxErrorOrAccessRuleViolation, sqlstate="42701"):
    pass


class DuplicateTable(SyntaxErrorOrAccessRuleViolation, sqlstate="42P07"):
    pass


class DuplicateCursor(SyntaxErrorOrAccessRuleViolation, sqlstate="42P03"):
    pass


class DuplicatePreparedStatement(SyntaxErrorOrAccessRuleViolation, sqlstate="42P05"):
    pass


class AmbiguousColumn(SyntaxErrorOrAccessRuleViolation, sqlstate="42702"):
    pass


class GroupingError(SyntaxErrorOrAccessRuleViolation, sqlstate="42803"):
    pass


class WindowingError(SyntaxErrorOrAccessRuleViolation, sqlstate="42P20"):
    pass


class DatatypeMismatch(SyntaxErrorOrAccessRuleViolation, sqlstate="42804"):
    pass


class InvalidForeignKey(SyntaxErrorOrAccessRuleViolation, sqlstate="42830"):
    pass


class UndefinedParameter(SyntaxErrorOrAccessRuleViolation, sqlstate="42P02"):
    pass


class IndeterminateDatatype(SyntaxErrorOrAccessRuleViolation, sqlstate="42P18"):
    pass


class DuplicateObject(SyntaxErrorOrAccessRuleViolation, sqlstate="42710"):
    pass


# 53, 54: resources and program limits
class OutOfMemory(DbError, sqlstate="53200"):
    pass


class DiskFull(DbError, sqlstate="53100"):
    pass


class TooManyConnections(DbError, sqlstate="53300"):
    severity = "FATAL"


class ProgramLimitExceeded(DbError, sqlstate="54000"):
    pass


# 55: object not in prerequisite state
class ObjectNotInPrerequisiteState(DbError, sqlstate="55000"):
    pass


class ObjectInUse(ObjectNotInPrerequisiteState, sqlstate="55006"):
    pass


class CantChangeRuntimeParam(ObjectNotInPrerequisiteState, sqlstate="55P02"):
    pass


class LockNotAvailable(ObjectNotInPrerequisiteState, sqlstate="55P03"):
    pass


# 57: operator intervention
class QueryCanceled(DbError, sqlstate="57014"):
    pass


class AdminShutdown(DbError, sqlstate="57P01"):
    severity = "FATAL"


# 72: snapshot failure
class SnapshotTooOld(DbError, sqlstate="72000"):
    pass


# 58: system error
class IoError(DbError, sqlstate="58030"):
    pass


# XX: internal error
class InternalError(DbError, sqlstate="XX000"):
    pass


class DataCorrupted(DbError, sqlstate="XX001"):
    pass


class IdleInTransactionSessionTimeout(InvalidTransactionState, sqlstate="25P03"):
    severity = "FATAL"


def io_error(action: str, exc: OSError) -> DbError:
    """The error for a failed write: 53100 when the disk is full, else 58030."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFull(f"{action}: No space left on device")
    return IoError(f"{action}: {exc}")
