"""Session: one client's statements, settings, cursors and prepared plans.

Its transaction and the block state around it are a TransactionBlock
(transaction_block.py).  DDL takes effect at once, also inside a block (it is
not transactional yet).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NoReturn, TypeVar

import pyarrow as pa
from sqlglot import exp

from catalog.access_journal import JOURNAL, AccessJournal
from catalog.access_journal import publish as publish_access
from catalog.catalog import Catalog
from catalog.ddl_locks import RelationLock
from catalog.privileges import is_superuser
from catalog.roles import prepared_owner
from catalog.sequences import sequence_oid
from catalog.table import TableInfo
from catalog.temp_tables import OnCommit, TempNamespace
from sql.common import date_styles
from sql.common.names import table_name
from sql.common.result import MustWait, PreparedStatement, ReadPause, Result, ResultColumn
from sql.common.time_zones import session_zone
from sql.copy import copy_statement
from sql.copy.copy_from import CopyIn
from sql.ddl import (
    alter_table,
    comments,
    concurrent_index,
    create_table_as,
    extensions,
    indexes,
    memberships,
    owned,
    partitions,
    pg_partitions,
    privileges,
    roles,
    security_labels,
    tables,
    views,
)
from sql.ddl.sequences import add_identity, execute_sequence
from sql.dml import key_writes, locking_reads, values_rows, writes
from sql.dml.write_plan import WritePlan
from sql.execution import catalog_calls
from sql.execution.advisory_locks import SessionAdvisoryLocks
from sql.execution.backends import Backend, ClientLink, CopyProgress
from sql.execution.context import DatabaseContext
from sql.execution.notifications import Listener, Notification
from sql.execution.runner import QueryRunner, runs_direct
from sql.execution.sequences import SessionSequences
from sql.execution.table_activity import SessionActivity
from sql.frontend import parser
from sql.frontend.dialect import (
    AlterRangePartitions,
    AttachIndexPartition,
    AttachPartition,
    DetachPartition,
)
from sql.frontend.fingerprint import Fingerprint
from sql.frontend.parser import ParsedStatement
from sql.frontend.statements import (
    CopyStatement,
    CursorStatement,
    DefaultPrivilegesStatement,
    ExecuteStatement,
    ExplainStatement,
    ExtensionStatement,
    GrantStatement,
    IdentityStatement,
    LockStatement,
    MaintenanceStatement,
    MembershipStatement,
    OwnedStatement,
    OwnerStatement,
    PrepareStatement,
    RoleStatement,
    SecurityLabelStatement,
    SequenceStatement,
    SetConstraints,
    Utility,
)
from sql.pg_catalog import dml_calls, sequence_relations, system_query
from sql.pg_catalog.activity import Activity
from sql.pg_catalog.catalog_rows import DATABASE_OID
from sql.pg_catalog.statement_statistics import StatementStatistics
from sql.pg_catalog.table_statistics import TableStatistics
from sql.planner import system_views, time_travel
from sql.planner.compiled_query import CompiledQuery, compile_query
from sql.planner.sequence_calls import fold_serial_sequences
from sql.planner.transpile import SessionFacts
from sql.session import (
    access,
    constraint_modes,
    cursors,
    explain,
    notify_statements,
    prepared_plan,
    relation_names,
    role_switch,
    setting_statements,
    sql_prepared,
    statement_log,
    statement_tracking,
    temp_tables,
)
from sql.session import plan as plan_mod
from sql.session.constant_checks import ConstantChecks
from sql.session.lock_wait_log import LockWaitLog
from sql.session.plan import (
    ConstraintModesPlan,
    CopyPlan,
    CursorPlan,
    DdlPlan,
    DeclarePlan,
    DmlPlan,
    ExecutePlan,
    ExplainPlan,
    ExtensionPlan,
    GrantPlan,
    MaintenancePlan,
    Plan,
    PreparePlan,
    QueryPlan,
    RolePlan,
    SystemPlan,
    TruncatePlan,
    UtilityPlan,
)
from sql.session.plan_cache import PlanCache
from sql.session.query_statements import split_query
from sql.session.ready_state import ReadyState
from sql.session.settings import SessionSettings, duration_ms
from sql.session.statement_settings import StatementSettings
from sql.session.transaction_block import TransactionBlock
from sql.session.transaction_modes import TransactionModes
from storage.errors import (
    ActiveSqlTransaction,
    DbError,
    FeatureNotSupported,
    NoActiveSqlTransaction,
    QueryCanceled,
    SqlSyntaxError,
    UndefinedParameter,
    UndefinedTable,
)
from storage.prepared import Commit as PreparedCommit
from storage.transaction import Transaction
from storage.type_oids import TypeOid

_T = TypeVar("_T")
_TRANSACTION_CONTROL = ("BEGIN", "COMMIT", "ROLLBACK")
_BATCH_SAVEPOINT = "nyala batch"
"""Marks where a pipelined batch began, so a failed one leaves nothing behind."""


class Session:
    """A client's session: plans and runs statements in its TransactionBlock."""

    def __init__(
        self,
        db: DatabaseContext,
        user: str,
        startup: dict[str, str],
        client: ClientLink | None = None,
    ) -> None:
        self._db = db
        self.user = user
        self.settings = SessionSettings(user, startup, db.server_parameters)
        role = db.roles.get(user) if db.roles is not None else None
        if role is not None and not role.superuser:
            self.settings.set_fact("is_superuser", "off")
        self._duck = db.duckdb.cursor()
        self._constants = ConstantChecks(self._duck)
        self._cancel = threading.Event()
        self._snapshot: int | None = None
        self._snapshot_version = -1
        """The settings version ``_snapshot`` (``_read_snapshot``'s answer) was made at."""
        self._runner = QueryRunner(self._duck, db.catalog, self._check_cancel, self._read_snapshot)
        self._runner.buffered_rows_limit = db.buffered_rows_limit
        self._cursors = cursors.Cursors()
        self.prepared_statements: dict[str, PreparedStatement] = {}
        """Named statements of SQL PREPARE and of protocol Parse: one namespace, as in
        PostgreSQL (the server keeps its Parse statements here)."""
        self._runner.zone = session_zone(self.settings.get("TimeZone"))
        self._runner.date_order = date_styles.parse(self.settings.get("DateStyle")).order
        self._runner.interval_style = self.settings.get("IntervalStyle")
        self._modes = TransactionModes(self.settings)
        self._values = StatementSettings(self.settings)
        self.process_id = 0
        """The backend process ID the server gave the connection (NotificationResponse)."""
        self._listener = Listener(db.notifications, lambda: self.process_id)
        self._advisory = SessionAdvisoryLocks(
            db.advisory_locks,
            self._cancel.is_set,
            lambda: duration_ms(self.settings.get("lock_timeout")),
        )
        self._block = TransactionBlock(
            db.engine,
            db.catalog,
            self.settings,
            self._modes,
            self._cursors,
            self._check_cancel,
            self._end_transaction,
            db.roles,
            db.privileges,
            self._values,
        )
        self._block.on_catalog = self._use_catalog
        self.sequences = SessionSequences(db.catalog, lambda: self._block.read_only)
        self._temp = TempNamespace(db.catalog, self.sequences.session_id)
        self._temp_txn_ended = False
        self._role_version = -1
        """The settings' version ``_follow_role`` last looked at."""
        self._facts = SessionFacts(
            db.version_string,
            db.name,
            user,
            session_id=self.sequences.session_id,
            session_user=user,
        )
        self.backend = Backend(
            client.process_id if client is not None else db.backends.embedded_pid(),
            user,
            db.name,
            self._block,
            client.cancel if client is not None else self.cancel,
            client.terminate if client is not None else self.cancel,
            application_name=self.settings.get("application_name"),
            client_addr=client.client_addr if client is not None else None,
            client_port=client.client_port if client is not None else None,
        )
        backends = Activity(db.backends, db.engine.waits_for, db.roles, self.backend, DATABASE_OID)
        backends.current_user = lambda: self.current_user
        backends.lock_waited = self._lock_waited
        self._system = system_query.SystemCatalog(
            self._cancel.is_set,
            self._set_config,
            self._advisory,
            self._listener,
            backends,
            StatementStatistics(db.statements, backends, DATABASE_OID),
            TableStatistics(
                db,
                lambda: self._block.catalog,
                DATABASE_OID,
                lambda: is_superuser(self._block.roles, self.current_user),
            ),
        )
        self._system.use_temp_schema(self._temp.schema)
        self._catalog_call_token = catalog_calls.register_session(self._catalog_call_values)
        self._activity = SessionActivity(db.table_activity)
        self._tracking = statement_tracking.StatementTracking(
            db.statements, self._activity, self._values
        )
        self._runner.activity = db.table_activity
        self._runner.direct_activity = self._activity
        self._block.on_writes = lambda txn, committed: self._activity.transaction_ended(
            txn.attempted_ops(), committed
        )
        self._block.on_reads_ended = self._reads_ended
        db.table_activity.session_started()
        self._block.lock_wait_log = LockWaitLog(
            self.settings, db.backends, db.engine.waits_for, lambda: self.backend.pid
        )
        self._plan_cache: PlanCache[Plan] = PlanCache()
        self._access = access.AccessControl(db, self._values, self._block)
        self._checked = prepared_plan.CheckedPlans()
        self.sequences.check = self._access.sequence
        self._log = statement_log.StatementLog(self.settings, user, db.name)
        db.backends.add(self.backend)

    # -- state -----------------------------------------------------------------------------

    @property
    def current_user(self) -> str:
        """The role privileges are checked as (SET ROLE changes it)."""
        return role_switch.current_user(self.settings)

    def _follow_role(self) -> None:
        """After SET ROLE or SESSION AUTHORIZATION (or a ROLLBACK undoing one), plan with the
        new users: ``current_user`` is folded into plans, so plans made before are re-made.
        Only a change of the settings (their ``version``) can change either user."""
        version = self.settings.version
        if version == self._role_version:
            return
        self._role_version = version
        current, session = self.current_user, role_switch.session_user(self.settings)
        if (current, session) != (self._facts.user, self._facts.session_user):
            self._facts = dataclasses.replace(self._facts, user=current, session_user=session)
            self._plan_cache = PlanCache()
            self._db.bump_catalog_version()

    @property
    def transaction_status(self) -> str:
        return self._block.status

    def reported_parameters(self) -> dict[str, str]:
        return self.settings.reported()

    def cancel(self) -> None:
        """Make the running statement fail with 57014 (safe from any thread)."""
        self._cancel.set()
        self._runner.interrupt()

    def fail_statement(self) -> None:
        """An error reported for the current statement (the server's own, such as a Bind's bad
        parameter, included) fails it as PostgreSQL does: the implicit transaction rolls back,
        a transaction block fails.  Repeating it for an error the session raised changes
        nothing."""
        self._block.on_error()

    def _read_snapshot(self) -> int | None:
        """The snapshot ``nyala.read_timestamp`` pins reads to, or None to read the present."""
        settings = self.settings
        if settings.version != self._snapshot_version:
            self._snapshot = _snapshot_at(settings)
            self._snapshot_version = settings.version
        return self._snapshot

    def _check_cancel(self) -> None:
        if self._cancel.is_set():
            self._cancel.clear()
            raise QueryCanceled("canceling statement due to user request")

    def report_idle(self) -> None:
        """The server says ReadyForQuery: pg_stat_activity shows the session idle."""
        self.backend.application_name = self._values.current().application_name
        self.backend.go_idle(self._block.status)
        self._activity.hand_over()

    def close(self) -> None:
        try:
            self._drop_temp_tables()
            self._log.close()
            self._block.close()
            self._advisory.close()
            self._listener.close()
            self._cursors.close_all()
            self._system.close()
            self._duck.close()
        finally:
            catalog_calls.unregister(self._catalog_call_token)
            self._db.backends.remove(self.backend)
            self._activity.hand_over()
            lived = dt.datetime.now(dt.UTC) - self.backend.backend_start
            self._db.table_activity.session_ended(
                lived.total_seconds() * 1000, self.backend.terminated
            )

    # -- transactions ----------------------------------------------------------------------

    def sync(self) -> None:
        """End the implicit transaction of the extended-protocol messages before this Sync.

        As in PostgreSQL, every Execute between two Syncs outside a transaction
        block runs in one implicit transaction, committed here (rolled back
        already if one of them failed).
        """
        self._block.finish_autocommit()

    @property
    def sync_writes(self) -> bool:
        """Whether ``sync`` has a commit to make durable (else it is instant and never blocks)."""
        return self._block.has_writes_to_commit

    def sync_ready(self) -> ReadyState | None:
        """Sync when it has nothing to make durable: ``sync`` and then ``ready_for_query`` in
        one call, on the event loop.  None, having done nothing, when it has a commit to make
        durable: then ``sync`` runs on the session's thread and ``ready_for_query`` after."""
        block = self._block
        if block.has_writes_to_commit:
            return None
        block.finish_autocommit()
        return self.ready_for_query()

    def ready_for_query(self) -> ReadyState:
        """What ReadyForQuery reports, the session gone idle (``report_idle``): one call for
        ``transaction_status``, ``reported_parameters`` and, when no transaction is open,
        ``take_notifications``."""
        status = self._block.status
        values = self._values
        if values.version != values.session_settings.version:
            values.current()
        backend = self.backend
        backend.application_name = values.application_name
        backend.go_idle(status)
        activity = self._activity
        if activity.pending:
            activity.hand_over()
        return ReadyState(
            status,
            self.settings.reported(),
            self._listener.take() if status == "I" else [],
        )

    # -- simple query ----------------------------------------------------------------------

    def execute(self, sql: str) -> Iterator[Result]:
        """Run every statement of a simple Query, yielding one Result each."""
        self._cancel.clear()
        self.backend.begin_statement(sql)
        try:
            statements = self._plan_cache.split(sql, lambda: split_query(sql))
        except DbError:
            self._block.on_error()
            raise
        if not statements:
            yield Result(is_empty_query=True)
            return
        implicit = (
            len(statements) > 1
            and not self._block.in_block
            and not any(
                s.utility is not None and s.utility.ast.kind in _TRANSACTION_CONTROL
                for s in statements
            )
        )
        if implicit:
            self._block.in_block = True
        try:
            for chunk, utility, truncated in statements:
                started = time.monotonic()
                try:
                    plan = self._plan_reusing(sql, chunk, utility, ())
                    if self._fence_write(plan):
                        plan = self._plan(sql, chunk, utility, ())
                except BaseException:
                    self._block.on_error()
                    raise
                text = sql[chunk[0].start : chunk[-1].end + 1]
                self._log.statement(plan, text)
                print_ = self._fingerprint(plan, sql, chunk)
                run_started = time.monotonic()
                result = self._log.timed(self._run(plan, []), text, started)
                result = self._tracking.track(result, self.current_user, print_, run_started)
                result.notices = self.settings.visible([*truncated, *result.notices])
                self._output_styles(result)
                if implicit:
                    # Rows are read here, so an error in them ends the implicit transaction here.
                    result.batches = iter(list(result.batches))
                yield result
        except BaseException:
            if implicit:
                self._block.in_block = False
                self._block.failed = False
            raise
        if implicit:
            self._block.in_block = False
            self._block.finish_autocommit()
        self._activity.hand_over()

    # -- extended protocol -----------------------------------------------------------------

    def prepare(self, sql: str, param_oids: Sequence[int]) -> PreparedStatement:
        chunks = parser.split(sql)
        if not chunks:
            return PreparedStatement(sql, tuple(param_oids), None, None, is_empty_query=True)
        if len(chunks) > 1:
            raise SqlSyntaxError("cannot insert multiple commands into a prepared statement")
        utility = parser.parse_utility(sql, chunks[0])
        if utility is None or utility.ast.kind not in (
            "COMMIT",
            "ROLLBACK",
            "ROLLBACK TO",
            "PREPARE TRANSACTION",
        ):
            self._block.check_not_failed()
        try:
            plan = self._plan_reusing(sql, chunks[0], utility, tuple(param_oids))
            oids = self._param_oids(plan, param_oids)
            prepared = PreparedStatement(
                sql, tuple(oids), self._describe(plan), plan,
                prepare_time=dt.datetime.now(dt.UTC),
            )  # fmt: skip
            prepared.fingerprint = self._fingerprint(plan, sql, chunks[0])
            return prepared
        except BaseException:
            self._block.on_error()
            raise

    def execute_prepared(
        self, stmt: PreparedStatement, params: Sequence[Any], inline: bool = False
    ) -> Result:
        """Run a prepared statement; ``inline``: on the connection's event loop, because
        ``runs_inline`` said so (a write that finds it must wait raises MustWait, undone)."""
        started = time.monotonic()
        if self._cancel.is_set():  # a plain read; clear() takes the event's lock
            self._cancel.clear()
        self.backend.begin_statement(stmt.sql)
        if stmt.is_empty_query:
            return Result(is_empty_query=True)
        plan = stmt.plan
        assert isinstance(plan, Plan), "prepared statements carry a Plan"
        if self.settings.version != self._role_version:
            self._follow_role()
        stale = False
        kind = type(plan)
        if kind is DmlPlan:
            if inline and self._db.catalog.has_ddl_locks:
                raise MustWait  # DDL locked a table since runs_inline: wait for it on the thread
            try:
                stale = self._fence_write(plan)
            except BaseException:
                self._block.on_error()
                raise
        if stale or (
            kind in _VERSIONED_PLANS and plan.catalog_version != self._db.catalog_version  # type: ignore[union-attr]
        ):
            chunk = parser.split(stmt.sql)[0]
            plan = self._plan(stmt.sql, chunk, None, stmt.param_oids)
            if plan_mod.row_types(self._describe(plan)) != plan_mod.row_types(stmt.columns):
                # The client holds the old RowDescription, as PostgreSQL's plan cache says.
                raise FeatureNotSupported("cached plan must not change result type")
            stmt.plan = plan
        values = self._values
        if values.version != values.session_settings.version:
            values.current()
        if values.log_level:
            self._log.statement(plan, stmt.sql)
        run_started = time.monotonic()
        result = self._run(plan, list(params), deferred=True, pause=ReadPause(), inline=inline)
        if values.version != values.session_settings.version:  # the statement was a SET
            values.current()
        if values.log_threshold_ms is not None:
            result = self._log.timed(result, stmt.sql, started)
        if isinstance(stmt.fingerprint, Fingerprint):
            result = self._tracking.track(result, values.user, stmt.fingerprint, run_started)
        if result.notices:
            result.notices = self.settings.visible(result.notices)
        (
            result.extra_float_digits,
            result.date_style,
            result.interval_style,
            result.bytea_output,
        ) = values.output_styles
        return result

    def _follow_settings(self) -> None:
        """Give the runner the TimeZone, DateStyle and IntervalStyle a SET may have changed;
        plans read date and interval constants in the styles, so a new style plans again."""
        settings = self.settings
        self._runner.zone, order, interval_style = settings.cached(
            Session._follow_settings,
            lambda: (
                session_zone(settings.get("TimeZone")),
                date_styles.parse(settings.get("DateStyle")).order,
                settings.get("IntervalStyle"),
            ),
        )
        if (order, interval_style) != (self._runner.date_order, self._runner.interval_style):
            self._runner.date_order, self._runner.interval_style = order, interval_style
            self._plan_cache = PlanCache()

    def _output_styles(self, result: Result) -> None:
        """The settings the server encodes the result's text values with."""
        (
            result.extra_float_digits,
            result.date_style,
            result.interval_style,
            result.bytea_output,
        ) = self._values.current().output_styles

    def batchable(self, stmt: PreparedStatement) -> bool:
        """Whether a run of Executes of ``stmt`` may be applied as one write
        (``execute_batch``): an INSERT, or an UPDATE or DELETE by key, that the key-write
        path takes, on a current plan."""
        plan = stmt.plan
        if not isinstance(plan, DmlPlan) or plan.catalog_version != self._db.catalog_version:
            return False
        if plan.refold is not None:
            return False  # its catalog calls are computed at each execution
        write = plan.write
        key_write = write.key_write
        return key_write is not None and write.returning is None and write.conflict is None

    def execute_batch(
        self, stmt: PreparedStatement, param_rows: list[list[Any]]
    ) -> list[str] | None:
        """Apply ``stmt`` once per parameter row as one write, in the transaction the next
        Sync ends; the command tag of each row.  None when nothing was written and the rows
        must run one by one instead: the batch could not be judged, or a row failed (that
        row's own Execute then reports the error, after the rows before it, as PostgreSQL
        would)."""
        self._cancel.clear()
        started = time.monotonic()
        if self._block.failed or not self.batchable(stmt):
            return None
        plan = stmt.plan
        assert isinstance(plan, DmlPlan) and plan.write.key_write is not None, "batchable"
        try:
            if self._fence_write(plan):
                return None
        except DbError:
            return None  # the first row's own Execute waits, or reports it
        write = plan.write.key_write
        try:
            self._access.check(plan)
        except DbError:
            return None  # the first row's own Execute reports it
        txn = self._block.current()
        txn.savepoint(_BATCH_SAVEPOINT)
        counts: list[int] | None
        try:
            if write.kind == "INSERT":
                done = key_writes.insert_many(
                    write, txn, param_rows, self.sequences, self._block.started
                )
                counts = [len(write.rows)] * len(param_rows) if done else None
            else:
                counts = key_writes.write_many(
                    write, txn, param_rows, self.sequences, self._block.started
                )
        except QueryCanceled:
            txn.rollback_to(_BATCH_SAVEPOINT)
            txn.release(_BATCH_SAVEPOINT)
            raise  # a cancel or statement_timeout is the run's answer, not one row's
        except DbError:
            counts = None
        if counts is None:
            txn.rollback_to(_BATCH_SAVEPOINT)
        txn.release(_BATCH_SAVEPOINT)
        if counts is None:
            return None
        if isinstance(stmt.fingerprint, Fingerprint):
            self._tracking.track_batch(self.current_user, stmt.fingerprint, started, counts)
        if write.kind == "INSERT":
            return [f"INSERT 0 {count}" for count in counts]
        return [f"{write.kind} {count}" for count in counts]

    def runs_inline(self, stmt: PreparedStatement, params: Sequence[Any] = ()) -> bool:
        """Whether executing ``stmt`` with ``params`` starts short and never waits, so it
        needs no thread of its own: a read of a few rows by key or under a small LIMIT
        (``CompiledQuery.is_short_with``) or one the scan answers alone (``runs_direct``: an
        index lookup, which says in its Result's ``pause`` where its rows stop being short),
        on a current plan; or BEGIN (it takes a snapshot, never a lock)."""
        plan = stmt.plan
        if isinstance(plan, UtilityPlan):
            return plan.utility.kind == "BEGIN"
        if isinstance(plan, DmlPlan):
            return self._writes_inline(plan)
        if (
            not isinstance(plan, QueryPlan)
            or plan.lock is not None
            or plan.catalog_version != self._db.catalog_version
        ):
            return False
        query = plan.query
        return query.is_short_with(params) or (
            query.direct is not None and runs_direct(query, params, self._runner.read_snapshot())
        )

    def _fingerprint(self, plan: Plan, sql: str, tokens: list[Any]) -> Fingerprint:
        """The statement's pg_stat_statements identity, kept in the plan cache by its text."""
        text = sql[tokens[0].start : tokens[-1].end + 1]
        return self._plan_cache.fingerprint(
            text, lambda: statement_tracking.fingerprint_of(plan, sql, tokens)
        )

    def _param_oids(self, plan: Plan, declared: Sequence[int]) -> list[int]:
        match plan:
            case QueryPlan(query=query):
                return query.param_oids
            case SystemPlan(system=system):
                return system.param_oids
            case ExplainPlan(inner=inner) | DeclarePlan(inner=inner):
                return self._param_oids(inner, declared)
            case DmlPlan(write=write):
                return write.param_oids
        return [oid or TypeOid.TEXT for oid in declared]

    def _describe(self, plan: Plan) -> tuple[ResultColumn, ...] | None:
        match plan:
            case ExplainPlan(json=as_json):
                return explain.JSON_COLUMNS if as_json else explain.COLUMNS
            case QueryPlan(query=query):
                return self._runner.describe(query)
            case SystemPlan(system=system):
                self._refresh_system()
                return self._system.describe(system, self._block.catalog)
            case CursorPlan(cursor=cursor) if cursor.kind == "FETCH":
                with contextlib.suppress(DbError):
                    return self._cursors.columns(cursor.name)
            case ExecutePlan(statement=statement):
                named = self.prepared_statements.get(statement.name)
                return named.columns if named is not None else None
            case DmlPlan(write=write) if write.returning is not None:
                return self._runner.describe(write.returning)
            case UtilityPlan(utility=utility) if utility.kind == "SHOW":
                return setting_statements.show_columns(utility, self.settings)
        return None

    # -- planning --------------------------------------------------------------------------

    def _lockable_column(self, ast: exp.Expr) -> str | None:
        """A non-key column of the table a one-table SELECT reads (what FOR UPDATE sets to
        itself to lock a row), or None."""
        source = ast.args.get("from_") if isinstance(ast, exp.Select) else None
        node = source.this if source is not None else None
        table = (
            self._block.catalog.find_table(table_name(node))
            if isinstance(node, exp.Table)
            else None
        )
        if table is None:
            return None
        keys = set(table.schema.key_column_ids)
        settable = [
            c
            for c in table.schema.columns
            if c.id not in keys
            and not ((info := table.sequence_of(c.id)) is not None and info.identity == "a")
        ]
        return settable[0].name if settable else None

    def _plan_reusing(
        self,
        sql: str,
        tokens: list[Any],
        utility: ParsedStatement | None,
        declared: Sequence[int],
    ) -> Plan:
        """``_plan``, or the plan this session made for the same text (plan_cache.py)."""
        self._follow_role()
        self._temp_on_commit()
        if utility is not None or self._block.failed:
            return self._plan(sql, tokens, utility, declared)
        if (rows := values_rows.one_row_form(sql, tokens, declared)) is not None:
            one = self._plan_reusing(rows.sql, parser.split(rows.sql)[0], None, rows.declared)
            if isinstance(one, DmlPlan) and one.refold is None and (w := rows.derive(one.write)):
                return dataclasses.replace(one, write=w)
        text = sql[tokens[0].start : tokens[-1].end + 1]
        version = self._db.catalog_version
        plan = self._plan_cache.get(text, declared, version)
        if plan is not None and self._db.catalog.has_ddl_locks:
            written = [plan.write.table.name] if isinstance(plan, DmlPlan) else []
            self._wait_for_ddl(relation_names.plan_tables(plan), written)
            if self._db.catalog_version != version:
                plan = None  # the DDL it waited for committed: plan again
        if plan is not None:
            return plan
        plan = self._plan(sql, tokens, utility, declared)
        if plan_mod.reusable(plan) and plan.catalog_version == version:
            self._plan_cache.put(text, declared, version, plan)
        return plan

    def _plan(
        self,
        sql: str,
        tokens: list[Any],
        statement: ParsedStatement | None,
        declared: Sequence[int],
    ) -> Plan:
        """Plan the statement ``tokens`` spell (``statement``, when already parsed).

        A failed transaction block refuses every statement but utility, cursor and
        COMMENT ones before their syntax is checked (``admit``).
        """
        if statement is None:
            statement = parser.parse_tokens(sql, tokens, admit=self._block.check_not_failed)
        plan = self._plan_statement(statement, declared)
        if isinstance(plan, PreparePlan):
            plan.source = sql  # PostgreSQL's pg_prepared_statements shows the whole string
        return plan

    def _plan_statement(self, statement: ParsedStatement, declared: Sequence[int]) -> Plan:
        ast = statement.ast
        self._temp_on_commit()
        temp_tables.resolve_names(ast, self._temp)
        if (select_into := create_table_as.select_into(ast)) is not None:
            ast = select_into
        match ast:
            case Utility():
                return UtilityPlan(ast)
            case exp.Comment():
                return DdlPlan(ast)
            case CursorStatement():
                return self._plan_cursor(ast, declared)
            case PrepareStatement():
                return PreparePlan(ast)
            case ExecuteStatement():
                return ExecutePlan(ast)
            case CopyStatement():
                return CopyPlan(ast)
            case ExplainStatement():
                inner = self._plan_statement(ast.statement, declared)
                if isinstance(inner, ExplainPlan):
                    inner = inner.inner
                if not isinstance(inner, (QueryPlan, DmlPlan)):
                    raise FeatureNotSupported("EXPLAIN is supported for queries and writes")
                if ast.analyze and ast.json:
                    raise FeatureNotSupported("EXPLAIN (ANALYZE, FORMAT JSON) is not supported")
                return ExplainPlan(ast.analyze, inner, ast.json)
            case RoleStatement():
                return RolePlan(ast)
            case ExtensionStatement():
                return ExtensionPlan(ast)
            case SetConstraints():
                return ConstraintModesPlan(ast)
            case (
                SequenceStatement()
                | IdentityStatement()
                | LockStatement()
                | SecurityLabelStatement()
            ):
                return DdlPlan(ast)
            case MaintenanceStatement():
                for name in ast.tables:
                    self._block.catalog.get_table(name)
                return MaintenancePlan(ast)
            case (
                GrantStatement()
                | OwnerStatement()
                | MembershipStatement()
                | OwnedStatement()
                | DefaultPrivilegesStatement()
            ):
                return GrantPlan(ast)
        if self._db.catalog.has_ddl_locks:
            self._wait_for_ddl(relation_names.user_relations(ast), relation_names.written(ast))
        version = self._db.catalog_version
        declared_list = list(declared)
        fold_serial_sequences(ast, self._block.catalog)
        if isinstance(ast, (exp.Select, exp.SetOperation)):
            sequence_relations.replace_sequences(ast, self._is_sequence)
        if isinstance(ast, (exp.Select, exp.SetOperation)) and system_query.is_system_query(
            ast, self._has_user_table
        ):
            system = system_query.compile_system_query(
                ast, self._facts, self._has_user_table, self._find_table, declared_list
            )
            return SystemPlan(system, version)
        folded = dml_calls.fold(ast, self._catalog_types, None, self._catalog_call_token)
        if folded is not None:
            template = self._plan_write(folded, declared_list, version)
            template.refold = lambda: self._refold(statement, declared_list, version)
            return template
        match ast:
            case exp.Select() | exp.SetOperation() | exp.Values():
                locking = locking_reads.locking_update(ast, self._lockable_column(ast))
                bound = self._runner.bind(ast, declared_list)
                plan = QueryPlan(
                    compile_query(bound, self._facts), version,
                    locked=locking_reads.locked_tables(ast),
                )  # fmt: skip
                if locking is not None:
                    plan.lock = writes.plan_row_lock(
                        locking.update, locking.mode, self._runner, self._facts, declared_list
                    )
                    plan.lock_nowait = locking.nowait
                return plan
            case exp.Insert() | exp.Update() | exp.Delete():
                return self._plan_write(ast, declared_list, version)
            case (
                exp.Create()
                | exp.Drop()
                | exp.Alter()
                | AlterRangePartitions()
                | DetachPartition()
                | AttachPartition()
                | AttachIndexPartition()
            ):
                if isinstance(ast, exp.Alter):
                    ast.meta["statement_text"] = statement.text
                return DdlPlan(ast)
            case exp.TruncateTable():
                for node in ast.expressions:
                    self._block.catalog.table_or_partition(table_name(node))
                return TruncatePlan(ast)
            case _:
                raise FeatureNotSupported(
                    f"statement is not supported: {plan_mod.statement_name(statement)}"
                )

    def _plan_write(self, ast: exp.Expr, declared: list[int], version: int) -> DmlPlan:
        match ast:
            case exp.Insert():
                write = writes.plan_insert(ast, self._runner, self._facts, declared)
            case exp.Update():
                write = writes.plan_update(ast, self._runner, self._facts, declared)
            case exp.Delete():
                write = writes.plan_delete(ast, self._runner, self._facts, declared)
            case _:
                raise AssertionError(f"no write plan for {type(ast).__name__}")
        return DmlPlan(write, version, reads_target=access.reads_target(ast), ast=ast)

    def _refold(self, statement: ParsedStatement, declared: list[int], version: int) -> DmlPlan:
        """A write's plan with the values its catalog calls have now (``dml_calls``)."""
        folded = dml_calls.fold(
            statement.ast, self._catalog_types, self._catalog_values, self._catalog_call_token
        )
        assert folded is not None, "only a write calling catalog functions is folded again"
        return self._plan_write(folded, declared, version)

    def _catalog_types(self, sql: str) -> tuple[list[Any], list[int]]:
        """The result types of a one-row catalog query, without running it."""
        plan = self._plan(sql, parser.split(sql)[0], None, ())
        columns = self._describe(plan) or ()
        return [None] * len(columns), [c.type_oid for c in columns]

    def _catalog_values(self, sql: str) -> tuple[list[Any], list[int]]:
        """The one row of a catalog query, and its types, in the statement's transaction."""
        plan = self._plan(sql, parser.split(sql)[0], None, ())
        assert isinstance(plan, SystemPlan), "catalog calls make a catalog query"
        columns, batches = self._run_system(plan.system, [])
        return list(sql_prepared.single_row(batches)), [c.type_oid for c in columns]

    def _catalog_call_values(
        self, template: str, tuples: Sequence[tuple[str | None, ...]]
    ) -> list[str | None]:
        """A catalog call over a write's columns (``dml_calls``), for each distinct tuple of
        their values: one catalog query while the write runs, in its transaction."""
        sql = dml_calls.values_query(template, tuples)
        plan = self._plan(sql, parser.split(sql)[0], None, ())
        assert isinstance(plan, SystemPlan), "a catalog call makes a catalog query"
        self._refresh_system()
        _, batches = self._system.run(plan.system, [], None)
        return dml_calls.values_text(batches, len(tuples))

    def _plan_cursor(self, statement: CursorStatement, declared: Sequence[int]) -> Plan:
        if statement.kind != "DECLARE":
            return CursorPlan(statement)
        chunks = parser.split(statement.query)
        if len(chunks) != 1:
            raise SqlSyntaxError("DECLARE CURSOR needs exactly one query")
        inner = self._plan(statement.query, chunks[0], None, declared)
        if isinstance(inner, ExplainPlan) and isinstance(inner.inner, QueryPlan):
            inner = inner.inner  # the cursor reads the query's rows, as it always has
        if not isinstance(inner, (QueryPlan, SystemPlan)):
            raise SqlSyntaxError("DECLARE CURSOR can only declare a cursor for a query")
        return DeclarePlan(statement, inner)

    def _run_sql_prepared(self, statement: ExecuteStatement, deferred: bool) -> Result:
        """EXECUTE: the named statement with its arguments, planned again if the catalog
        changed since (0A000 if that changes its result type, as in PostgreSQL)."""
        prepared, params = sql_prepared.arguments(
            statement, self.prepared_statements, self._constant_row, self._expression_type
        )
        plan = prepared.plan
        assert isinstance(plan, Plan), "a named statement carries its plan"
        stale = self._fence_write(plan)
        version = self._db.catalog_version
        if stale or (isinstance(plan, QueryPlan | DmlPlan) and plan.catalog_version != version):
            chunk = parser.split(prepared.sql)[0]
            plan = self._plan(prepared.sql, chunk, None, prepared.param_oids)
            if plan_mod.row_types(self._describe(plan)) != plan_mod.row_types(prepared.columns):
                raise FeatureNotSupported("cached plan must not change result type")
            prepared.plan = plan
        self._access.check(plan)
        return self._run_checked(plan, params, deferred, direct=_reads_directly(plan))

    def _expression_type(self, text: str) -> int:
        """The type OID of an expression's text, as the planner types it."""
        sql = f"SELECT {text}"
        columns = self._describe(self._plan(sql, parser.split(sql)[0], None, ()))
        return columns[0].type_oid if columns else 0

    def _constant_row(self, sql: str) -> tuple[Any, ...]:
        """The one row of a SELECT of EXECUTE's arguments, in the statement's transaction."""
        plan = self._plan(sql, parser.split(sql)[0], None, ())
        if isinstance(plan, SystemPlan):
            return sql_prepared.single_row(self._run_system(plan.system, [])[1])
        assert isinstance(plan, QueryPlan), "EXECUTE's arguments are a SELECT"
        columns, batches = self._runner.run(
            plan.query, self._block.current(), [], self._block.started
        )
        return sql_prepared.single_row(batches)

    def _run_declare(self, plan: DeclarePlan, params: list[Any], deferred: bool) -> Result:
        txn = self._block.current()
        match plan.inner:
            case SystemPlan(system=system):
                columns, batches = self._run_system(system, params)
            case QueryPlan(query=query):
                columns, batches = self._runner.run(query, txn, params, self._block.started)
        result = self._cursors.declare(plan.cursor, columns, batches, self._block.in_block)
        if not deferred:
            self._block.finish_autocommit()
        return result

    def has_cursor(self, name: str) -> bool:
        """Whether a SQL cursor (DECLARE) of this name is open: it is also a protocol portal."""
        return self._cursors.has(name)

    def cursor_columns(self, name: str) -> tuple[ResultColumn, ...]:
        return self._cursors.columns(name)

    def _run_system(
        self, system: system_query.SystemQuery, params: list[Any]
    ) -> tuple[tuple[ResultColumn, ...], Iterator[pa.RecordBatch]]:
        """A catalog query; one that also reads user tables reads them in the transaction."""
        self._refresh_system()
        scan = None
        if system.user_tables:
            scan = system_query.ScanContext(
                self._block.current(),
                self._block.catalog,
                self._check_cancel,
                self._read_snapshot(),
            )
        try:
            result = self._system.run(system, params, scan)
        except BaseException:
            if self._block.txn is None:
                self._end_transaction(committed=False)
            raise
        if self._block.txn is None:
            self._end_transaction(committed=True)  # the statement was its own transaction
        return result

    def _activity_notices(self) -> list[Any]:
        """Warnings pg_cancel_backend and pg_terminate_backend raised while the query ran."""
        return self._system.activity.take_notices() if self._system.activity else []

    def _set_config(self, name: str, value: str, is_local: bool) -> str:
        """set_config(): SET (or SET LOCAL) from a query; the value as SHOW gives it."""
        if is_local:
            if self._block.txn is not None:
                self.settings.set_local(name, value)
        else:
            self.settings.set(name, value)
        self._follow_settings()
        return self.settings.get(name)

    def _find_table(self, name: str) -> TableInfo:
        """A table a catalog query reads beside the catalogs: nyala's system views too."""
        view = system_views.find(name)
        return view if view is not None else self._block.catalog.table_or_partition(name)

    def _is_sequence(self, name: str) -> bool:
        """Whether ``name`` in FROM is a sequence (read as its one-row relation)."""
        if self._has_user_table(name):
            return False
        found = self._block.catalog.find_sequence(name)
        return found is not None and not found.info.hidden

    def _has_user_table(self, name: str) -> bool:
        catalog = self._block.catalog
        return (
            catalog.find_table(name) is not None
            or catalog.find_view(name) is not None
            or catalog.partition_owner(name) is not None
        )

    def _keep_prepared(self, keep: Callable[[], None], txn: Transaction, gid: str) -> None:
        """PREPARE TRANSACTION: the prepared transaction keeps the role names it holds."""
        try:
            keep()
        except BaseException:
            self._block.release_role_names(txn)
            raise
        if self._db.roles is not None:
            self._db.roles.name_locks.transfer(txn, prepared_owner(gid))

    def _finish_prepared(self, kind: str, gid: str) -> Result:
        """COMMIT PREPARED or ROLLBACK PREPARED: end a transaction some session prepared."""
        if self._block.in_block:
            self._block.on_error()  # as PostgreSQL, the error fails the block
            raise ActiveSqlTransaction(f"{kind} cannot run inside a transaction block")
        if kind == "COMMIT PREPARED":
            self._db.engine.prepared.commit(gid, self._publish_prepared)
        else:
            self._db.engine.prepared.rollback(gid)
        if self._db.roles is not None:
            self._db.roles.name_locks.release(prepared_owner(gid))
        return Result(command_tag=kind)

    def _publish_prepared(self, documents: dict[str, bytes], commit: PreparedCommit) -> None:
        """COMMIT PREPARED of a transaction that changed roles or privileges: replay its
        journal onto the shared stores and commit with their documents in the record."""
        journal = AccessJournal.from_bytes(documents[JOURNAL])
        publish_access(self._db.roles, self._db.privileges, journal, commit)

    def _refresh_system(self) -> None:
        self._system.zone = self._runner.zone
        prepared = tuple(
            (p.txn.txn_id, p.gid, p.prepared_at, p.owner, p.database)
            for p in self._db.engine.prepared.listing()
        )
        self._system.refresh_for(
            self._db,
            self.current_user,
            self.settings.describe(),
            self._cursors.listing(),
            prepared,
            self._block.catalog,
            sql_prepared.listing(self.prepared_statements),
            (self._block.roles, self._block.privileges),
            self.settings.custom,
        )

    # -- execution -------------------------------------------------------------------------

    def _run(
        self,
        plan: Plan,
        params: list[Any],
        deferred: bool = False,
        pause: ReadPause | None = None,
        inline: bool = False,
    ) -> Result:
        """Execute a plan; ``deferred`` leaves an autocommit transaction for ``sync`` to end;
        a read marks in ``pause`` where its rows stop being short."""
        if self._temp_txn_ended:
            self._temp_on_commit()
        direct = isinstance(plan, QueryPlan) and plan.lock is None and plan.query.direct is not None
        if not direct:  # ``_reads_directly``, without its call
            self._block.touch()
        if isinstance(plan, UtilityPlan):
            result = self._run_utility(plan.utility)
            self._follow_settings()
            return result
        if self._block.failed:
            self._block.check_not_failed()
        try:
            return self._run_checked(plan, params, deferred, pause, inline, direct)
        except MustWait:
            raise  # nothing was done: the statement runs again on the session's thread
        except BaseException:
            self._block.on_error()
            raise

    def _run_checked(
        self,
        plan: Plan,
        params: list[Any],
        deferred: bool,
        pause: ReadPause | None = None,
        inline: bool = False,
        direct: bool = False,
    ) -> Result:
        """``direct``: ``plan`` is a read the scan alone answers (``_reads_directly``)."""
        if isinstance(plan, (QueryPlan, DmlPlan)):
            self._checked.check(plan, self._access.state(), lambda: self._access.check(plan))
        else:
            self._access.check(plan)
            done = self._run_outside_storage(plan, params, deferred)
            if done is not None:
                return done
        txn = self._block.current(direct_read=direct)
        now = self._block.started
        if direct:
            assert isinstance(plan, QueryPlan), "only queries read directly"
            return self._read_directly(plan.query, txn, params, now, deferred, pause)
        match plan:
            case QueryPlan(query=query, lock=lock):
                if lock is not None:
                    self._lock_rows(plan, txn, params, now)
                elif query.direct is not None:
                    return self._read_directly(query, txn, params, now, deferred, pause)
                columns, batches = self._runner.run(query, txn, params, now, pause=pause)
                return Result(columns=columns, batches=self._guard(batches, deferred), pause=pause)
            case DmlPlan(write=write) if inline:
                return self._run_key_write_inline(write, txn, params, now)
            case DmlPlan(write=write, refold=refold):
                if refold is not None:
                    write = refold().write
                return self._run_write(write, txn, params, now, deferred)
            case ExplainPlan(analyze=analyze, inner=inner, json=as_json):
                explained = inner.query if isinstance(inner, QueryPlan) else None
                written = None
                if isinstance(inner, DmlPlan):  # with its catalog calls' values, if any
                    written = inner.refold().write if inner.refold is not None else inner.write
                if as_json:
                    result = explain.json_explain(explained, written, params)
                else:
                    result = explain.run_explain(
                        analyze, explained, written, self._runner, txn, params, now
                    )
                if not deferred:
                    self._block.finish_autocommit()
                return result
            case TruncatePlan(ast=ast):
                # ACCESS EXCLUSIVE first, as PostgreSQL: waits for the tables' other users.
                names = [table_name(t) for t in ast.expressions]
                self._block.ddl_catalog().lock_relations(names)
                writes.truncate(ast, self._block.catalog, txn)
                if not deferred:
                    self._block.finish_autocommit()
                return Result(command_tag="TRUNCATE TABLE")
        raise AssertionError(f"no run for {type(plan).__name__}")

    def _run_outside_storage(self, plan: Plan, params: list[Any], deferred: bool) -> Result | None:
        """Run a plan that needs no storage transaction of the statement's own; None for
        one that does (EXPLAIN, TRUNCATE)."""
        match plan:
            case DdlPlan(ast=ast):
                self._block.check_allowed(ast)
                if not deferred and ast is not None and concurrent_index.is_concurrent(ast):
                    return self._create_index_concurrently(ast)
                result = self._run_ddl(ast)
                if not deferred:
                    self._block.finish_autocommit()
                return result
            case ConstraintModesPlan(statement=statement):
                return constraint_modes.set_constraints(
                    statement, self._block.catalog, self._block.txn, self._block.in_block
                )
            case RolePlan(role=role):
                self._block.lock_role_names(role)
                mine = self._block.access_changes()
                result = roles.execute_role_statement(
                    role, mine.roles, self.current_user, mine.privileges
                )
                if not deferred:
                    self._block.finish_autocommit()
                return result
            case GrantPlan():
                result = self._run_grant(plan)
                if not deferred:
                    self._block.finish_autocommit()
                return result
            case CopyPlan(copy=copy):
                return self._run_copy(copy, deferred)
            case ExtensionPlan(extension=extension):
                return extensions.execute_extension(
                    extension, is_superuser(self._block.roles, self.current_user)
                )
            case MaintenancePlan(statement=statement):
                # Flushes, compactions and history GC do a tablet's VACUUM in the background,
                # and DuckDB plans without ANALYZE's statistics: nothing is left to do here.
                if statement.kind == "VACUUM" and self._block.in_block:
                    raise ActiveSqlTransaction("VACUUM cannot run inside a transaction block")
                catalog = self._block.catalog
                named = [catalog.get_table(name) for name in statement.tables]
                for table in named or catalog.tables():
                    self._db.table_activity.maintained(table.tablet_ids[:1], statement.kind)
                return Result(command_tag=statement.kind)
            case CursorPlan(cursor=cursor) if cursor.kind == "CLOSE":
                return self._cursors.close(cursor)
            case CursorPlan(cursor=cursor):
                return self._cursors.fetch(cursor)
            case DeclarePlan():
                return self._run_declare(plan, params, deferred)
            case PreparePlan(statement=statement, source=source):
                sql_prepared.prepare(
                    statement, self.prepared_statements, self.prepare,
                    lambda p: isinstance(p.plan, QueryPlan | DmlPlan | SystemPlan), source,
                )  # fmt: skip
                return Result(command_tag="PREPARE")
            case ExecutePlan(statement=statement):
                return self._run_sql_prepared(statement, deferred)
            case SystemPlan(system=system) if not system.user_tables:
                columns, batches = self._run_system(system, params)
                return Result(columns=columns, batches=batches, notices=self._activity_notices())
            case SystemPlan(system=system):
                columns, batches = self._run_system(system, params)
                return Result(
                    columns=columns,
                    batches=self._guard(batches, deferred),
                    notices=self._activity_notices(),
                )
        return None

    def _read_directly(
        self,
        query: CompiledQuery,
        txn: Transaction,
        params: list[Any],
        now: Any,
        deferred: bool,
        pause: ReadPause | None,
    ) -> Result:
        """A query the scan alone may answer: by key when it does (an Execute's, whose
        ``pause`` is set, as ``ShortRows``), else through the runner."""
        short = pause is not None
        read = self._runner.read_by_key(query, txn, params, now, short)
        if read is not None:
            if not deferred:
                self._block.finish_autocommit()
            return Result(columns=read[0], batches=iter(read[1]), pause=pause)
        columns, batches = self._runner.run(query, txn, params, now, pause=pause)
        return Result(columns=columns, batches=self._guard(batches, deferred), pause=pause)

    def _guard(self, batches: Iterator[pa.RecordBatch], deferred: bool) -> Iterator[pa.RecordBatch]:
        """Stream batches; end the autocommit transaction when done, fail the session on error."""
        try:
            yield from batches
        except BaseException:
            self._block.on_error()
            raise
        if not deferred:
            self._block.finish_autocommit()

    def _lock_rows(self, plan: QueryPlan, txn: Transaction, params: list[Any], now: Any) -> None:
        """Take a FOR UPDATE query's row locks (NOWAIT: fail at once, 55P03, if one is held)."""
        assert plan.lock is not None
        waits = txn.lock_timeout_ms
        if plan.lock_nowait:
            txn.lock_timeout_ms = 1
        try:
            writes.execute_write(
                plan.lock, self._runner, txn, params, now, sequences=self.sequences
            )
        finally:
            txn.lock_timeout_ms = waits

    def _run_key_write_inline(
        self, plan: WritePlan, txn: Transaction, params: list[Any], now: Any
    ) -> Result:
        """A key write on the event loop (``runs_inline``): MustWait, with nothing written,
        when a row it writes is locked by another transaction (the tablet asks to wait before
        it changes anything: it refuses to wait, so the event loop never blocks) or when it
        needs the general path."""
        assert plan.key_write is not None, "only key writes run inline"
        # MustWait is not an error of the transaction's (which would roll it back): the
        # statement runs again on the thread, which waits in the row's line.
        txn.refuse_wait = _must_wait
        try:
            count = key_writes.execute(plan.key_write, txn, params, self.sequences, now)
        finally:
            txn.refuse_wait = None
        if count is None:
            raise MustWait
        tag = f"INSERT 0 {count}" if plan.kind == "INSERT" else f"{plan.kind} {count}"
        return Result(command_tag=tag)

    def _writes_inline(self, plan: DmlPlan) -> bool:
        """Whether ``plan`` may start on the event loop: a key write (one row by key, no
        index, foreign key or CHECK to keep) on a current plan, with nothing to wait for
        before it (DDL) and nothing done twice if it must wait after all (no statement log,
        no sequence value a user sees), under no lock_timeout of the session's own."""
        write = plan.write
        key_write = write.key_write
        return (
            key_write is not None
            and write.returning is None
            and write.conflict is None
            and plan.catalog_version == self._db.catalog_version
            and plan.refold is None
            and not self._db.catalog.has_ddl_locks
            and self._inline_settings()
            and key_writes.runs_short(key_write)
        )

    def _inline_settings(self) -> bool:
        """No statement log and no lock_timeout of the session's own (``_writes_inline``)."""
        return self._values.current().inline_writes

    def _run_write(
        self, plan: WritePlan, txn: Transaction, params: list[Any], now: Any, deferred: bool
    ) -> Result:
        if len(params) < len(plan.param_oids):  # e.g. a simple Query naming $1
            raise UndefinedParameter(f"there is no parameter ${len(params) + 1}")
        count, rows = writes.execute_write(
            plan, self._runner, txn, params, now, sequences=self.sequences
        )
        tag = f"INSERT 0 {count}" if plan.kind == "INSERT" else f"{plan.kind} {count}"
        columns = None
        batches: list[pa.RecordBatch] = []
        if plan.returning is not None:
            columns = self._runner.describe(plan.returning)
            if rows is not None:
                out, stream = self._runner.run(
                    plan.returning, txn, params, now, overrides={plan.table.name: rows}
                )
                columns = out
                batches = list(stream)
        if not deferred:
            self._block.finish_autocommit()
        return Result(columns=columns, batches=iter(batches), command_tag=tag)

    def _run_copy(self, statement: CopyStatement, deferred: bool) -> Result:
        """COPY TO runs its query; COPY FROM returns the sink the server feeds (``CopyIn``)."""
        if not statement.is_from:
            query_sql = copy_statement.source_query(statement)
            tokens = parser.split(query_sql)
            plan = self._plan(query_sql, tokens[0], None, ()) if len(tokens) == 1 else None
            if not isinstance(plan, QueryPlan) and not (
                isinstance(plan, ExplainPlan) and isinstance(plan.inner, QueryPlan)
            ):
                raise FeatureNotSupported("COPY (query) TO supports only a SELECT or VALUES")
            copy_statement.check_force_quote(
                statement.options, [c.name for c in self._describe(plan) or ()]
            )
            result = self._run(plan, [], deferred)
            result.copy_out = statement.options
            relid = 0
            if statement.table is not None:
                reference = copy_statement.table_reference(statement)
                relid = self._block.catalog.table_or_partition(table_name(reference)).oid
            progress = self.backend.copy = CopyProgress(relid, "COPY TO", "PIPE")
            result.batches = _copied(result.batches, progress)
            return result
        target = table_name(copy_statement.table_reference(statement))
        table = self._block.catalog.table_or_partition(target)
        self._block.current().enlist(table.tablet_ids)  # as a write statement (_fence_write)
        if self._db.catalog.has_ddl_locks:
            self._wait_for_ddl([table.name], [table.name])
            table = self._block.catalog.table_or_partition(target)
        progress = CopyProgress(table.oid, "COPY FROM", "PIPE")
        sink = CopyIn(statement, table, self._runner, self._facts, self._block.current(),
                      self._block.started, self._check_cancel,
                      on_done=None if deferred else self._block.finish_autocommit,
                      on_error=self._block.on_error, progress=progress)  # fmt: skip
        self.backend.copy = progress
        return Result(copy_in=sink)

    def _run_ddl(self, ast: exp.Expr | None) -> Result:
        catalog = self._block.ddl_catalog()
        if isinstance(ast, exp.Comment):
            comments.comment_on(ast, self._db.comments, catalog)
            if self._block.in_block:
                self._db.bump_catalog_version()
            return Result(command_tag="COMMENT")
        assert ast is not None, "DDL plans carry their statement"
        catalog.lock_relations(relation_names.ddl_targets(ast), relation_names.ddl_lock_mode(ast))
        try:
            return self._run_catalog_ddl(ast, catalog)
        finally:
            if self._block.in_block:  # this session's plans; the end of the transaction bumps too
                self._db.bump_catalog_version()

    def _create_index_concurrently(self, ast: exp.Expr) -> Result:
        """CREATE INDEX CONCURRENTLY in its two transactions (``ddl.concurrent_index``),
        holding the table in SHARE UPDATE EXCLUSIVE mode, which no reader or writer waits
        for; an error in the second leaves the index invalid."""
        assert isinstance(ast, exp.Create), "only CREATE INDEX comes here"
        mode = RelationLock.SHARE_UPDATE_EXCLUSIVE
        catalog = self._block.ddl_catalog()
        catalog.lock_relations(relation_names.ddl_targets(ast), mode)
        txn = self._block.txn
        assert txn is not None, "a DDL catalog begins the transaction"
        result, name = concurrent_index.declare(ast, catalog, txn)
        self._block.finish_autocommit()
        self._db.bump_catalog_version()
        if name is None:
            return result
        txn = self._block.current()
        catalog = self._block.ddl_catalog()
        catalog.lock_relations(relation_names.ddl_targets(ast), mode)
        try:
            concurrent_index.build(catalog, concurrent_index.target(ast), name, txn)
        finally:
            self._db.bump_catalog_version()
        self._block.finish_autocommit()
        return result

    def _run_catalog_ddl(self, ast: exp.Expr, catalog: Catalog) -> Result:
        if isinstance(ast, SequenceStatement):
            result, created = execute_sequence(ast, catalog)
            if created is not None:
                self._access.created_sequence(created)
            return result
        if isinstance(ast, IdentityStatement):
            return add_identity(ast, catalog)
        if isinstance(ast, LockStatement):
            return self._lock_tables(ast, catalog)
        if isinstance(ast, SecurityLabelStatement):
            return security_labels.security_label(ast, catalog)
        if isinstance(ast, exp.Create) and (ast.args.get("kind") or "").upper() == "VIEW":
            existed = {v.view_id for v in catalog.views()}
            result = views.create_view(ast, catalog, self._describe_view_query)
            for view in catalog.views():
                if view.view_id not in existed:
                    self._access.created(view)
        elif isinstance(ast, exp.Drop) and (ast.args.get("kind") or "").upper() == "VIEW":
            result = views.drop_view(ast, catalog)
        elif isinstance(ast, exp.Create) and isinstance(ast.this, exp.Index):
            result = self._in_transaction(lambda txn: indexes.create_index(ast, catalog, txn))
        elif isinstance(ast, exp.Drop) and (ast.args.get("kind") or "").upper() == "INDEX":
            result = indexes.drop_index(ast, catalog)
        elif isinstance(ast, exp.Alter) and (ast.args.get("kind") or "").upper() == "INDEX":
            result = indexes.rename_index(ast, catalog)
        elif isinstance(ast, exp.Create):
            if (ast.args.get("kind") or "").upper() != "TABLE":
                raise FeatureNotSupported(f"CREATE {ast.args.get('kind')} is not supported")
            existed = {t.table_id for t in catalog.tables()}

            def create(node: exp.Create) -> Result:
                return tables.create_table(
                    node, catalog, self._constants.check_default, self._constants.evaluate_constant,
                    self._block.current(), create_table_as.QuerySource(
                        self._describe_view_query, self._fill_created
                    ),
                )  # fmt: skip

            temp_tables.check_on_commit(ast)
            if temp_tables.is_temporary_create(ast):
                result = temp_tables.create_temp_table(ast, self._temp, create)
                self._temp_txn_ended = not self._block.in_block  # its own transaction
            else:
                result = create(ast)
            for table in catalog.tables():
                if table.table_id not in existed:
                    self._access.created(table)
        elif isinstance(ast, AlterRangePartitions):
            result = partitions.alter_ranges(ast, catalog, self._constants.evaluate_constant)
        elif isinstance(ast, DetachPartition):
            result = partitions.detach_partition(ast, catalog)
        elif isinstance(ast, AttachPartition):
            result = pg_partitions.attach_partition(
                ast, catalog, self._constants.evaluate_constant, self._block.current()
            )
        elif isinstance(ast, AttachIndexPartition):
            result = pg_partitions.attach_index_partition(ast, catalog)
        elif isinstance(ast, exp.Alter):
            result = alter_table.alter_table(
                ast, ast.meta.get("statement_text", ""), catalog, self._constants.check_default,
                self._constants.evaluate_constant, self._row_exists, in_block=self._block.in_block,
                in_transaction=self._in_transaction,
            )  # fmt: skip
        else:
            assert isinstance(ast, exp.Drop), "DDL plans are CREATE or DROP"
            result = tables.drop_table(ast, catalog)
        return result

    def _lock_tables(self, statement: LockStatement, catalog: Catalog) -> Result:
        """LOCK TABLE: a mode that conflicts with reads (EXCLUSIVE, ACCESS EXCLUSIVE) is
        held as DDL's lock is, to the end of the transaction; a weaker one (pg_dump's
        ACCESS SHARE) waits for uncommitted DDL on the tables, as PostgreSQL's would."""
        if not self._block.in_block:
            raise NoActiveSqlTransaction("LOCK TABLE can only be used in transaction blocks")
        names = []
        for name in statement.tables:
            owner = catalog.partition_owner(name)  # a partition is locked as its root table
            if owner is not None:
                name = owner.name
            elif catalog.find_table(name) is None and catalog.find_view(name) is None:
                raise UndefinedTable(f'relation "{name}" does not exist')
            names.append(name)
        if statement.mode in ("EXCLUSIVE", "ACCESS EXCLUSIVE"):
            catalog.lock_relations(names)
        else:
            # The modes that conflict with CREATE INDEX's SHARE lock wait for it as writers do.
            writes = statement.mode in (
                "ROW EXCLUSIVE",
                "SHARE UPDATE EXCLUSIVE",
                "SHARE ROW EXCLUSIVE",
            )
            self._wait_for_ddl(names, names if writes else [])
        return Result(command_tag="LOCK TABLE")

    def _relation_oids(self, catalog: Catalog | None = None) -> set[int]:
        """The OIDs of the tables, views and sequences there are (committed, or as
        ``catalog`` sees them), whose ACLs are kept."""
        catalog = catalog if catalog is not None else self._db.catalog
        tables = catalog.tables()
        sequences = {sequence_oid(t.table_id, s.column_id) for t in tables for s in t.sequences}
        sequences.update(q.oid for q, _ in catalog.standalone_sequences())
        return {t.oid for t in tables} | {v.oid for v in catalog.views()} | sequences

    def _in_transaction(self, run: Callable[[Transaction], _T]) -> _T:
        """Run DDL that writes rows (an index's entries) in this session's transaction, whose
        end commits or rolls them back with the DDL."""
        return run(self._block.current())

    def _fence_write(self, plan: Plan) -> bool:
        """Before a write runs: count its transaction as a writer of the target's tablets,
        then wait for another transaction's uncommitted DDL on the target; whether the plan
        is stale now (DDL, an index say, committed since it was made: plan again).  Counted
        first, the writer is seen by an index build that locks the table later, which then
        waits for it (``Catalog.wait_for_writers``); one that locked it earlier is waited for
        here, so no write runs by a catalog that lacks an index being filled."""
        if not isinstance(plan, DmlPlan) or self._block.failed:
            return False
        table = plan.write.table
        # The statement's snapshot is taken when it runs (_run_checked), after this fence.
        txn = self._block.txn if self._block.txn is not None else self._block.start()
        txn.enlist(table.tablet_ids)
        if self._db.catalog.has_ddl_locks:
            self._wait_for_ddl([table.name], [table.name])
        self._block.catalog.catch_up_indexes(txn)
        found = self._block.catalog.find_table(table.name)
        return found is not None and found is not table and found != table

    def _run_grant(self, plan: GrantPlan) -> Result:
        """GRANT, REVOKE, ALTER DEFAULT PRIVILEGES, REASSIGN/DROP OWNED, ALTER ... OWNER TO,
        in the transaction's own role and privilege stores."""
        grant, mine = plan.grant, self._block.access_changes()
        store, role_store, user = mine.privileges, mine.roles, self.current_user
        if isinstance(grant, MembershipStatement):
            result = memberships.execute_membership(grant, role_store, user)
        elif isinstance(grant, DefaultPrivilegesStatement):
            result = privileges.alter_default(grant, store, role_store, user)
        elif isinstance(grant, OwnedStatement):
            result = owned.execute_owned(grant, self._block.catalog, store, role_store, user)
            store.keep_tables(self._relation_oids(self._block.catalog))
        elif isinstance(grant, GrantStatement):
            result = privileges.execute_grant(
                grant, self._block.catalog, store, role_store, user, self._db.name
            )
        else:
            result = privileges.alter_owner(grant, self._block.catalog, store, role_store, user)
        self._db.bump_catalog_version()
        return result

    def _lock_waited(self, owner: object) -> str | None:
        """pg_stat_activity's wait_event for a relation or role name lock ``owner`` (a
        transaction, or a transaction block between transactions) waits for."""
        if self._db.catalog.ddl_lock_waited(owner) is not None:
            return "relation"
        roles = self._db.roles
        return (
            "object"
            if roles is not None and roles.name_locks.waiting_for(owner) is not None
            else None
        )

    def _wait_for_ddl(self, names: Iterable[str], written: Iterable[str] = ()) -> None:
        """Wait while another transaction's uncommitted DDL holds a relation the statement
        names, as PostgreSQL's ACCESS EXCLUSIVE lock makes a reader or writer wait, or one
        it writes (``written``), as CREATE INDEX's SHARE lock makes a writer wait."""
        owner = self._block.txn if self._block.txn is not None else self._block
        self._db.catalog.wait_for_relations(
            owner, list(names), self._block.lock_wait, list(written)
        )

    def _use_catalog(self, catalog: Catalog, ended: bool) -> None:
        """The transaction began or ended its own view of the catalog: read through it."""
        self._runner.catalog = catalog
        self.sequences.catalog = catalog
        self._access.catalog = catalog
        self._temp.seen = catalog
        if ended:
            self._temp.forget_missing()
            if self._block.txn is None:  # ROLLBACK TO restores the transaction's own ACLs
                self._db.privileges.keep_tables(self._relation_oids())
            self._db.bump_catalog_version()

    def _describe_view_query(self, query: exp.Expr) -> list[tuple[str, int, int]]:
        """A view's output columns as its query binds now: (name, type OID, typmod)."""
        if system_query.is_system_query(query, self._has_user_table):
            raise FeatureNotSupported("views over the system catalogs are not supported")
        compiled = compile_query(self._runner.bind(query, []), self._facts)
        return [(c.name, c.type_oid, c.typmod) for c in self._runner.describe(compiled)]

    def _fill_created(self, name: str, query: exp.Expr) -> int:
        """CREATE TABLE AS's rows, by INSERT ... SELECT's plan and bulk path; reads checked."""
        target = exp.Table(this=exp.to_identifier(name, quoted=True))
        plan = self._plan_write(exp.Insert(this=target, expression=query), [], 0)
        self._access.check(QueryPlan(plan.write.source, plan.catalog_version))
        txn, now = self._block.current(), self._block.started
        return writes.execute_write(
            plan.write, self._runner, txn, [], now, sequences=self.sequences
        )[0]

    def _row_exists(self, sql: str) -> bool:
        """Whether a SELECT returns a row, read in this session's transaction (ALTER checks)."""
        tokens = parser.split(sql)[0]
        plan = self._plan(sql, tokens, None, ())
        assert isinstance(plan, QueryPlan), "row checks are queries"
        # It runs inside the ALTER's own transaction, which ends with the ALTER.
        table = self._runner.run_to_table(
            plan.query, self._block.current(), [], self._block.started
        )
        return table is not None and table.num_rows > 0

    # -- utility statements ----------------------------------------------------------------

    def _end_transaction(self, committed: bool) -> None:
        self._temp_txn_ended = bool(self._temp)
        self._advisory.end_transaction()
        self._listener.end_transaction(committed)

    def _reads_ended(self) -> None:
        """An autocommit transaction of direct reads alone committed: it took no advisory
        lock and staged no LISTEN or NOTIFY (``_end_transaction``'s), and wrote nothing."""
        self._temp_txn_ended = bool(self._temp)
        self._activity.reads_ended()

    def _temp_on_commit(self) -> None:
        """The ON COMMIT actions of the transactions ended since the last statement."""
        if not self._temp_txn_ended or self._block.in_block or self._block.txn is not None:
            return
        self._temp_txn_ended = False
        dropped = self._temp.with_action(OnCommit.DROP)
        for table in dropped:
            self._temp.drop(table)
        emptied = self._temp.with_action(OnCommit.DELETE_ROWS)
        if emptied:
            txn = self._block.start_detached()
            refs = [exp.Table(this=exp.to_identifier(t.internal, quoted=True)) for t in emptied]
            writes.truncate(exp.TruncateTable(expressions=refs), self._db.catalog, txn)
            txn.commit()
        if dropped:
            self._db.bump_catalog_version()

    def _drop_temp_tables(self) -> None:
        if self._temp:
            self._temp.drop_all()
            self._db.bump_catalog_version()

    def take_notifications(self) -> list[Notification]:
        """Notifications from committed NOTIFYs on channels this session listens on."""
        return self._listener.take()

    def on_notification(self, wake: Callable[[], None]) -> None:
        """Have ``wake`` called (from any thread) when a notification arrives."""
        self._listener.wake = wake

    def _discard(self, what: str) -> None:
        """DISCARD's session state beyond settings (which setting_statements resets)."""
        if what in ("ALL", "TEMP"):
            self._drop_temp_tables()
        if what in ("ALL", "PLANS"):
            self._plan_cache = PlanCache()
        if what in ("ALL", "SEQUENCES"):
            self.sequences.discard()
        if what == "ALL":
            reset = Utility(kind="RESET", name=role_switch.SESSION_AUTHORIZATION)
            role_switch.run(reset, self.settings, self._block.roles, self.user, in_block=False)
            self._cursors.close_all()
            self._advisory.unlock_all()
            self._listener.unlisten(None)
            if self._block.txn is None:
                self._listener.end_transaction(committed=True)

    def _run_utility(self, utility: Utility) -> Result:
        kind = utility.kind
        if kind == "BEGIN":
            return self._block.begin(utility.modes)
        if kind in ("COMMIT", "ROLLBACK"):
            return self._block.end(kind)
        if kind == "PREPARE TRANSACTION":
            prepared, database = self._db.engine.prepared, self._db.name
            return self._block.prepare(
                lambda txn, documents: self._keep_prepared(
                    lambda: prepared.prepare(
                        txn, utility.name, self.current_user, database, documents
                    ),
                    txn,
                    utility.name,
                )
            )
        if kind == "ROLLBACK TO":
            return self._block.rollback_to(utility.name)
        self._block.check_not_failed()
        if kind in ("SAVEPOINT", "RELEASE"):
            return self._block.savepoint(kind, utility.name)
        if kind in ("COMMIT PREPARED", "ROLLBACK PREPARED"):
            return self._finish_prepared(kind, utility.name)
        if kind in notify_statements.KINDS:
            return notify_statements.run(utility, self._listener, self._block.txn is not None)
        if kind == "CHECKPOINT":
            self._db.engine.checkpoint()
            return Result(command_tag="CHECKPOINT")
        if kind in ("SET", "RESET") and utility.name.lower() in role_switch.NAMES:
            return role_switch.run(
                utility, self.settings, self._block.roles, self.user, self._block.in_block
            )
        if kind in setting_statements.KINDS:
            result = setting_statements.run(
                utility, self.settings, self._modes, self._block.in_block, self._block.txn
            )
            if kind == "DISCARD":
                self._discard(utility.name)
            return result
        raise FeatureNotSupported(f"{kind} is not supported")


def _copied(batches: Iterator[pa.RecordBatch], progress: CopyProgress) -> Iterator[pa.RecordBatch]:
    """A COPY TO's rows, counted for pg_stat_progress_copy as they go."""
    try:
        for batch in batches:
            progress.tuples_processed += batch.num_rows
            yield batch
    finally:
        progress.running = False


_VERSIONED_PLANS = (QueryPlan, DmlPlan, ExplainPlan)
"""The plans made for one catalog version, planned again when it moved."""


def _reads_directly(plan: Plan) -> bool:
    """Whether ``plan`` is a read the scan alone answers (``CompiledQuery.direct``): it
    only reads its one table, so the transaction it runs in has nothing to commit."""
    return isinstance(plan, QueryPlan) and plan.lock is None and plan.query.direct is not None


def _snapshot_at(settings: SessionSettings) -> int | None:
    instant = settings.get("nyala.read_timestamp")
    return time_travel.snapshot_at(instant) if instant else None


def _must_wait() -> NoReturn:
    """A key write on the event loop found a row lock held: it goes to the thread to wait."""
    raise MustWait
