"""TransactionBlock: a session's transaction, and whether it is inside BEGIN ... COMMIT.

Transaction blocks follow PostgreSQL.  Outside a block every statement runs
in its own transaction (autocommit); the statements of one multi-statement
Query run in one implicit transaction.  Inside BEGIN ... COMMIT each
statement takes a fresh snapshot (READ COMMITTED) and sees the block's own
writes.  After an error inside a block the session is *failed*: everything
but ROLLBACK (or COMMIT, which then rolls back) is refused with 25P02 and
ReadyForQuery reports ``E``, unless ROLLBACK TO SAVEPOINT rescues the block.

DDL runs in the transaction's own view of the catalog (``Catalog.begin``),
created by the first DDL statement and committed, rolled back or rolled back
to a savepoint with the storage transaction (see catalog/'s docstring).  Roles
and privileges likewise: the first change forks the transaction's own copies
of both stores (``catalog.access_changes``), published at COMMIT.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlglot import exp

from catalog.access_changes import AccessChanges
from catalog.access_journal import JOURNAL
from catalog.catalog import Catalog
from catalog.ddl_locks import LockWait
from sql.common.result import Result
from sql.dml.referential_checks import check_deferred
from sql.frontend.statements import RoleStatement
from sql.session.cursors import Cursors
from sql.session.lock_wait_log import LockWaitLog
from sql.session.settings import SessionSettings, duration_ms
from sql.session.statement_settings import StatementSettings
from sql.session.transaction_modes import TransactionModes
from storage.errors import (
    ActiveSqlTransaction,
    DbError,
    DuplicateObject,
    FeatureNotSupported,
    InFailedSqlTransaction,
    InvalidSavepointSpecification,
    NoActiveSqlTransaction,
    SerializationFailure,
    UniqueViolation,
)

if TYPE_CHECKING:
    from catalog.privileges import PrivilegeStore
    from catalog.roles import RoleStore
    from storage.commit_record import WriteOp
    from storage.engine import StorageEngine
    from storage.transaction import Transaction

log = logging.getLogger(__name__)

_ABORTED = "current transaction is aborted, commands ignored until end of transaction block"


def refusal_in_block(ast: exp.Expr) -> str | None:
    """What PostgreSQL refuses inside a transaction block (25001) among these statements:
    ``CREATE/DROP DATABASE``, ``CREATE/DROP INDEX CONCURRENTLY``; None for the rest."""
    if not isinstance(ast, (exp.Create, exp.Drop)):
        return None
    verb = "CREATE" if isinstance(ast, exp.Create) else "DROP"
    kind = str(ast.args.get("kind") or "").upper()
    if kind == "DATABASE":
        return f"{verb} DATABASE"
    if kind == "INDEX" and ast.args.get("concurrently"):
        return f"{verb} INDEX CONCURRENTLY"
    return None


class TransactionBlock:
    """The session's storage transaction (``txn``, None between transactions), when it
    started (``now()``), and the block state the protocol reports."""

    def __init__(
        self,
        engine: StorageEngine,
        catalog: Catalog,
        settings: SessionSettings,
        modes: TransactionModes,
        cursors: Cursors,
        check_cancel: Callable[[], None],
        on_end: Callable[[bool], None] = lambda committed: None,
        roles: RoleStore | None = None,
        privileges: PrivilegeStore | None = None,
        values: StatementSettings | None = None,
    ) -> None:
        self._engine = engine
        self._values = values if values is not None else StatementSettings(settings)
        self._shared_catalog = catalog
        self._txn_catalog: Catalog | None = None
        self._shared_roles = roles
        self._shared_privileges = privileges
        self._access: AccessChanges | None = None
        self.on_catalog: Callable[[Catalog, bool], None] = lambda catalog, ended: None
        """Called with the catalog statements now see, when a transaction's own view of it
        begins (False) or ends (True: plans made before are stale)."""
        self.lock_wait_log: LockWaitLog | None = None
        self.on_writes: Callable[[Transaction, bool], None] = lambda txn, committed: None
        """Called with each transaction as it ends, before its commit or rollback (its write
        log is still there to count)."""
        # What else a transaction's end settles (advisory xact locks, NOTIFY, LISTEN).
        self._on_end = on_end
        self._check_cancel = check_cancel
        self._settings = settings
        self._modes = modes
        self._cursors = cursors
        self.txn: Transaction | None = None
        self.started: dt.datetime | None = None
        self.in_block = False
        self.failed = False
        self._spare: Transaction | None = None
        """A transaction only direct reads used, kept to begin the next autocommit one with:
        it has nothing to commit, and making and committing a storage transaction costs as
        much as a point read's own work."""
        self._reads_only = False
        """Whether the open autocommit transaction has run nothing but direct reads
        (``current(direct_read=True)``): it wrote, locked and changed nothing."""
        self._holds_role_names = False
        """Whether the open transaction took role names (``lock_role_names``) to release."""
        self._armed: Transaction | None = None
        """The transaction whose lock waits ``_arm`` last set up."""
        self.on_reads_ended: Callable[[], None] = lambda: None
        """Called, instead of ``on_writes``, as an autocommit transaction that ran only
        direct reads ends (it wrote nothing: a commit to count, nothing else)."""

    @property
    def catalog(self) -> Catalog:
        """The catalog as this session's statements see it: its transaction's DDL included."""
        return self._txn_catalog if self._txn_catalog is not None else self._shared_catalog

    @property
    def roles(self) -> RoleStore | None:
        """The roles as this session's statements see them: its transaction's changes included."""
        return self._access.roles if self._access is not None else self._shared_roles

    def stores(self) -> tuple[RoleStore | None, PrivilegeStore]:
        """``roles`` and ``privileges`` in one call (an access check's state, per statement)."""
        access = self._access
        if access is not None:
            return access.roles, access.privileges
        assert self._shared_privileges is not None
        return self._shared_roles, self._shared_privileges

    @property
    def privileges(self) -> PrivilegeStore:
        """The owners and ACLs as this session's statements see them."""
        if self._access is not None:
            return self._access.privileges
        assert self._shared_privileges is not None
        return self._shared_privileges

    def lock_role_names(self, statement: RoleStatement) -> None:
        """Take the names a role statement changes, waiting for transactions (open or
        prepared) that hold them (``catalog.ddl_locks``); then a name created by the
        transaction waited for is 23505 (as PostgreSQL's unique index has it), one another
        transaction created since this one forked the roles 42710, and a role it changed
        40001, here rather than at COMMIT."""
        store = self._shared_roles
        if store is None:
            return
        txn = self.txn if self.txn is not None else self.start()
        self._holds_role_names = True
        waited: set[str] = set()
        store.name_locks.acquire(txn, statement.names, self.lock_wait, waited=waited)
        access = self._access
        for name in statement.names:
            if access is not None and access.changed_role(name):
                continue
            if statement.action == "CREATE" and name in waited and store.get(name) is not None:
                # PostgreSQL's unique index on pg_authid.rolname, once the holder committed.
                raise UniqueViolation(
                    'duplicate key value violates unique constraint "pg_authid_rolname_index"',
                    detail=f"Key (rolname)=({name}) already exists.",
                )
            if access is None or access.roles is None:
                continue  # the roles fork after the wait, so they see what committed meanwhile
            if access.roles.get(name) == store.get(name):
                continue
            if statement.action == "CREATE":
                raise DuplicateObject(f'role "{name}" already exists')
            raise SerializationFailure(
                f'could not serialize access: role "{name}" was changed by a concurrent transaction'
            )

    def release_role_names(self, txn: Transaction) -> None:
        if self._shared_roles is not None and self._holds_role_names:
            self._holds_role_names = False
            self._shared_roles.name_locks.release(txn)

    def access_changes(self) -> AccessChanges:
        """The transaction's own role and privilege stores for a statement that changes them,
        forked on first use (starting the transaction if none is open)."""
        txn = self.txn if self.txn is not None else self.start()
        if self._access is None:
            assert self._shared_privileges is not None
            self._access = AccessChanges(
                self._shared_roles, self._shared_privileges, txn.savepoint_names()
            )
        return self._access

    @property
    def lock_wait(self) -> LockWait:
        return LockWait(self._check_cancel, lambda: duration_ms(self._settings.get("lock_timeout")))

    def ddl_catalog(self) -> Catalog:
        """The transaction's view of the catalog for a DDL statement, begun on first use."""
        txn = self.txn if self.txn is not None else self.start()
        if self._txn_catalog is None:
            self._txn_catalog = self._shared_catalog.begin(txn, self.lock_wait)
            for name in txn.savepoint_names():
                self._txn_catalog.savepoint(name)
            self.on_catalog(self._txn_catalog, False)
        return self._txn_catalog

    def _commit(self, txn: Transaction) -> None:
        """Commit the storage transaction and, with it, the transaction's DDL and its role
        and privilege changes (checked for conflicts before anything is published)."""
        catalog, self._txn_catalog = self._txn_catalog, None
        access, self._access = self._access, None
        if catalog is None and access is None:
            try:
                txn.commit()
            finally:
                self.release_role_names(txn)
            return
        published = False

        def publish(
            markers: tuple[WriteOp, ...] = (), on_durable: Callable[[], None] | None = None
        ) -> None:
            nonlocal published
            published = True
            if catalog is None:
                txn.commit(markers=markers, on_durable=on_durable)
            else:
                catalog.commit(txn, markers, on_durable)

        try:
            if access is None:
                publish()
            else:
                access.commit(publish)
        except BaseException:
            if catalog is not None:
                txn.rollback()
                catalog.rollback()
            elif not published:
                txn.rollback()
            raise
        finally:
            self.release_role_names(txn)
            if catalog is not None:
                self.on_catalog(self._shared_catalog, True)

    def _rollback(self, txn: Transaction | None) -> None:
        catalog, self._txn_catalog = self._txn_catalog, None
        self._access = None
        try:
            if txn is not None:
                self.release_role_names(txn)
                txn.rollback()
        finally:
            if catalog is not None:
                catalog.rollback()
                self.on_catalog(self._shared_catalog, True)

    @property
    def status(self) -> str:
        """ReadyForQuery's transaction status: idle, in a block, or in a failed block."""
        if self.failed:
            return "E"
        return "T" if self.in_block else "I"

    @property
    def read_only(self) -> bool:
        return self.txn is not None and self.txn.read_only

    @property
    def has_writes_to_commit(self) -> bool:
        """Whether ending the implicit transaction has a commit to make durable."""
        return (
            not self.in_block
            and self.txn is not None
            and (self.txn.has_writes or self._txn_catalog is not None or self._access is not None)
        )

    def check_allowed(self, ast: exp.Expr) -> None:
        """25001 for a statement PostgreSQL runs only outside a transaction block."""
        what = refusal_in_block(ast)
        if what is not None and self.in_block:
            raise ActiveSqlTransaction(
                f"{what} cannot run inside a transaction block", severity="ERROR"
            )

    def check_not_failed(self) -> None:
        if self.failed:
            raise InFailedSqlTransaction(_ABORTED)

    def start(self, values: StatementSettings | None = None) -> Transaction:
        """A new transaction, with the defaults of ``values`` (the settings' current ones)."""
        if values is None:
            values = self._values.current()
        read_only = values.read_only
        # A block never takes the spare: its REPEATABLE READ snapshot is its first
        # statement's, not the one taken here.
        spare = None if self.in_block else self._spare
        self._reads_only = False
        if spare is not None:
            self._spare = None
            spare.read_only = read_only  # its snapshot is taken now, as a new transaction's
            spare.refresh_snapshot()
            txn = self.txn = spare
        else:
            txn = self.txn = self._engine.begin(read_only=read_only)
        txn.repeatable_read = values.repeatable_read
        self.started = dt.datetime.now(dt.UTC)
        self._settings.begin_transaction()
        return txn

    def touch(self) -> None:
        """A statement other than a direct read runs in the open transaction (it may change
        what the transaction holds): end it with a commit."""
        self._reads_only = False

    def current(self, direct_read: bool = False) -> Transaction:
        """The transaction the next statement runs in, starting one if there is none;
        ``direct_read``: a read the scan alone answers (``runs_direct``), which leaves an
        autocommit transaction with nothing to commit."""
        txn = self.txn
        values = self._values
        if values.version != values.session_settings.version:
            values.current()
        if txn is not None:
            self._reads_only = self._reads_only and direct_read
            txn.begin_statement()
        else:
            txn = self.start(values)
            self._reads_only = direct_read and not self.in_block
            # start() took the snapshot just now, for this statement: one is enough.
            txn.begin_statement(snapshot_is_new=True)
        txn.lock_timeout_ms = values.lock_timeout_ms
        if self._armed is not txn:
            self._arm(txn)
        return txn

    def _arm(self, txn: Transaction) -> None:
        """A cancel or statement_timeout ends ``txn``'s lock waits; log_lock_waits reports a
        long one.  Once per transaction object (a spare keeps its own across statements)."""
        self._armed = txn
        log = self.lock_wait_log
        if log is None:
            txn.cancel_check = self._check_cancel
            return
        check_cancel = self._check_cancel

        def check() -> None:
            check_cancel()
            log.waiting(txn.state)

        txn.cancel_check = check
        txn.on_wait_end = log.ended

    def finish_autocommit(self) -> None:
        """Commit the statement's own transaction, when it is not inside a block (its deferred
        foreign-key checks first: a failure is the statement's, which then rolls back)."""
        txn = self.txn
        if txn is None:
            return
        if self.in_block:
            txn.end_statement()  # leave any row's line of waiters it still stands in
            return
        if (
            self._reads_only
            and self._txn_catalog is None
            and self._access is None
            and not self._holds_role_names
            and not txn.has_writes
            and not txn.has_savepoints
        ):
            # Nothing to commit or release (only direct reads ran): it begins the next
            # autocommit transaction.  Direct reads take no advisory lock and stage no LISTEN
            # or NOTIFY: ``on_reads_ended`` stands for ``_on_end``.
            self.txn = None
            self._settings.end_transaction(True)
            self.on_reads_ended()
            self._spare = txn
            return
        check_deferred(txn)
        self.txn = None
        self._ended(committed=True, txn=txn)
        self._commit(txn)

    def _ended(self, committed: bool, txn: Transaction | None) -> None:
        self._armed = None
        self._settings.end_transaction(committed)
        self._on_end(committed)
        if txn is not None:
            self.on_writes(txn, committed)

    def on_error(self) -> None:
        """A statement failed: roll back, or fail the block until ROLLBACK."""
        if self.txn is not None:
            self.txn.end_statement()
        if self.in_block and self.txn is not None and self.txn.has_savepoints:
            # ROLLBACK TO SAVEPOINT may still rescue the block: keep its writes until then.
            self.failed = True
            return
        if self.txn is not None:
            txn, self.txn = self.txn, None
            self._ended(committed=False, txn=txn)
            try:
                self._rollback(txn)
            except Exception:  # the statement's own error is the one to report
                log.exception("rollback after a failed statement also failed")
        if self.in_block:
            self.failed = True
        else:
            self._cursors.end_transaction(committed=False)

    def close(self) -> None:
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.rollback()
        txn, self.txn = self.txn, None
        self._access = None
        if txn is not None or self._txn_catalog is not None:
            self._rollback(txn)

    def begin(self, modes: tuple[str, ...]) -> Result:
        notices: list[DbError] = []
        if self.in_block:
            # As PostgreSQL: a warning, then the modes apply to the open block (a level only
            # while no query has run), so a driver's own BEGIN does not swallow the user's.
            notices.append(ActiveSqlTransaction("there is already a transaction in progress"))
            try:
                notices.extend(self._modes.apply(modes, self.txn))
            except DbError:
                self.on_error()  # the error fails the block, as any statement's does
                raise
        elif self.failed:
            raise InFailedSqlTransaction(_ABORTED)
        else:
            self.in_block = True
            txn = self.txn if self.txn is not None else self.start()
            notices.extend(self._modes.begin(modes, txn))
        return Result(command_tag="BEGIN", notices=notices)

    def end(self, kind: str) -> Result:
        """COMMIT or ROLLBACK; a COMMIT of a failed block rolls back and says so."""
        notices: list[DbError] = []
        if not self.in_block and not self.failed:
            notices.append(NoActiveSqlTransaction("there is no transaction in progress"))
        tag = "ROLLBACK" if self.failed else kind
        txn, self.txn = self.txn, None
        failure: DbError | None = None
        if tag == "COMMIT" and txn is not None:
            try:
                check_deferred(txn)  # as PostgreSQL: a failed deferred check rolls back
            except DbError as exc:
                failure, tag = exc, "ROLLBACK"
        self.in_block = False
        self.failed = False
        self._cursors.end_transaction(committed=tag == "COMMIT")
        self._ended(committed=tag == "COMMIT", txn=txn)
        if tag == "COMMIT" and txn is not None:
            self._commit(txn)
        else:
            self._rollback(txn)
        if failure is not None:
            raise failure
        return Result(command_tag=tag, notices=notices)

    def prepare(self, keep: Callable[[Transaction, dict[str, bytes]], None]) -> Result:
        """PREPARE TRANSACTION: hand the block's transaction and its role and privilege
        journal to ``keep`` (which makes both durable and holds them for COMMIT PREPARED)
        and leave the block.  Outside a block, or in a failed one, it rolls back, as
        PostgreSQL does."""
        notices: list[DbError] = []
        if not self.in_block and not self.failed:
            notices.append(NoActiveSqlTransaction("there is no transaction in progress"))
        rolls_back = self.failed or not self.in_block
        if not rolls_back and self._txn_catalog is not None and self._txn_catalog.changed:
            raise FeatureNotSupported("PREPARE TRANSACTION of a transaction that ran DDL")
        journal = self._access.journal() if self._access is not None else None
        documents = {JOURNAL: journal.to_bytes()} if journal else {}
        txn, self.txn = self.txn, None
        failure: DbError | None = None
        if not rolls_back and txn is not None:
            try:
                check_deferred(txn)  # as PostgreSQL: deferred checks run at PREPARE
            except DbError as exc:
                failure, rolls_back = exc, True
        self.in_block = False
        self.failed = False
        self._cursors.end_transaction(committed=False)
        self._ended(committed=not rolls_back, txn=txn)
        if rolls_back:
            self._rollback(txn)
            if failure is not None:
                raise failure
            return Result(command_tag="ROLLBACK", notices=notices)
        self._rollback(None)  # a catalog view without changes (its DDL failed) only ends
        keep(txn if txn is not None else self.start_detached(), documents)
        return Result(command_tag="PREPARE TRANSACTION", notices=notices)

    def start_detached(self) -> Transaction:
        """A transaction of this session's modes that the block does not hold."""
        txn = self.start()
        self.txn = None
        return txn

    def savepoint(self, kind: str, name: str) -> Result:
        """SAVEPOINT or RELEASE [SAVEPOINT]."""
        if not self.in_block:
            what = "SAVEPOINT" if kind == "SAVEPOINT" else "RELEASE SAVEPOINT"
            raise NoActiveSqlTransaction(
                f"{what} can only be used in transaction blocks", severity="ERROR"
            )
        txn = self.txn if self.txn is not None else self.start()
        if kind == "SAVEPOINT":
            txn.savepoint(name)
            self._settings.savepoint(name)
            if self._txn_catalog is not None:
                self._txn_catalog.savepoint(name)
            if self._access is not None:
                self._access.savepoint(name)
        else:
            txn.release(name)
            self._settings.release(name)
            if self._txn_catalog is not None:
                self._txn_catalog.release(name)
            if self._access is not None:
                self._access.release(name)
        return Result(command_tag=kind)

    def rollback_to(self, name: str) -> Result:
        """ROLLBACK TO SAVEPOINT: undo the block's writes since the savepoint and, if the
        block had failed, make it usable again."""
        if not self.in_block and not self.failed:
            raise NoActiveSqlTransaction(
                "ROLLBACK TO SAVEPOINT can only be used in transaction blocks", severity="ERROR"
            )
        if self.txn is None or not self.txn.has_savepoints:
            raise InvalidSavepointSpecification(f'savepoint "{name}" does not exist')
        self.txn.rollback_to(name)
        self._settings.rollback_to(name)
        if self._access is not None:
            self._access.rollback_to(name)
        if self._txn_catalog is not None:
            self._txn_catalog.rollback_to(name)
            self.on_catalog(self._txn_catalog, True)
        self.failed = False
        return Result(command_tag="ROLLBACK")
