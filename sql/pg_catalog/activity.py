"""What sessions do and how to stop them: pg_stat_activity, pg_locks, pg_stat_progress_copy,
pg_blocking_pids, pg_cancel_backend and pg_terminate_backend.

``Activity`` is one session's view of the database's ``BackendRegistry``:
the live rows of the activity relations (built at each query that reads
them, never cached) and the control functions, with PostgreSQL 15's
permission rules.  Row locks appear as PostgreSQL shows them: every
transaction that has written holds an ExclusiveLock on its own
``transactionid``, and a writer waiting for another's row asks for a
ShareLock on the holder's ``transactionid``, not granted, so the usual
"who blocks whom" queries joining pg_locks to itself work unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb

from catalog.roles import SIGNAL_BACKEND, RoleStore
from sql.execution.backends import Backend, BackendRegistry
from storage.errors import DbError, InsufficientPrivilege, NumericValueOutOfRange, SqlWarning
from storage.waits_for import WaitsForGraph

_UDF = "nya_"
PREFIX = "pgf_"
DYNAMIC_RELATIONS = frozenset({"pg_stat_activity", "pg_locks", "pg_stat_progress_copy"})
_INSUFFICIENT = "<insufficient privilege>"


class Activity:
    """The backends as the session ``own`` may see and signal them."""

    def __init__(
        self,
        backends: BackendRegistry,
        waits_for: WaitsForGraph,
        roles: RoleStore | None,
        own: Backend,
        database_oid: int,
    ) -> None:
        self._backends = backends
        self._waits_for = waits_for
        self._roles = roles
        self.own = own
        self._database_oid = database_oid
        self.role_oids: dict[str, int] = {}
        self.notices: list[DbError] = []
        self.current_user: Callable[[], str] = lambda: own.user
        """The role checks are made as (SET ROLE changes it; the session sets this)."""
        self.lock_waited: Callable[[object], str | None] = lambda txn: None
        """What a transaction (or a block between transactions) waits for besides rows: a
        relation its DDL or statement waits to lock (``"relation"``) or a role name
        (``"object"``); the session sets this."""

    def take_notices(self) -> list[DbError]:
        notices, self.notices = self.notices, []
        return notices

    # -- who may see and signal whom -------------------------------------------------------

    def _is_superuser(self, name: str) -> bool:
        """A role the store does not know (``--auth trust``) counts as a superuser, as the
        session itself does."""
        role = self._roles.get(name) if self._roles is not None else None
        return role is None or role.superuser

    def is_superuser(self) -> bool:
        """Whether the role checks are made as is a superuser."""
        return self._is_superuser(self.current_user())

    def _mine(self) -> frozenset[str]:
        user = self.current_user()
        return self._roles.privileges_of(user) if self._roles is not None else frozenset((user,))

    def has_privileges_of(self, target_user: str) -> bool:
        """Whether the current role has ``target_user``'s privileges (superusers have all)."""
        return target_user in self._mine() or self._is_superuser(self.current_user())

    def _check_signal(self, target: Backend, superuser_message: str, member_message: str) -> None:
        """PostgreSQL 15's pg_signal_backend rules: a superuser's backend only by a superuser,
        any other by a role with the target role's privileges or pg_signal_backend's."""
        if self._is_superuser(target.user) and not self._is_superuser(self.current_user()):
            raise InsufficientPrivilege(superuser_message)
        if not self.has_privileges_of(target.user) and SIGNAL_BACKEND not in self._mine():
            raise InsufficientPrivilege(member_message)

    def _target(self, pid: int) -> Backend | None:
        backend = self._backends.get(pid)
        if backend is None:
            self.notices.append(SqlWarning(f"PID {pid} is not a PostgreSQL backend process"))
        return backend

    # -- the functions ---------------------------------------------------------------------

    def backend_pid(self) -> int:
        return self.own.pid

    def cancel_backend(self, pid: int | None) -> bool | None:
        if pid is None:
            return None
        target = self._target(pid)
        if target is None:
            return False
        self._check_signal(
            target,
            "must be a superuser to cancel superuser query",
            "must be a member of the role whose query is being canceled or member of"
            " pg_signal_backend",
        )
        target.cancel()
        return True

    def terminate_backend(self, pid: int | None, timeout_ms: int | None) -> bool | None:
        if pid is None or timeout_ms is None:
            return None
        if timeout_ms < 0:
            raise NumericValueOutOfRange('"timeout" must not be negative')
        target = self._target(pid)
        if target is None:
            return False
        self._check_signal(
            target,
            "must be a superuser to terminate superuser process",
            "must be a member of the role whose process is being terminated or member of"
            " pg_signal_backend",
        )
        target.terminated = True
        target.terminate()
        if timeout_ms == 0 or target is self.own:
            return True
        if target.closed.wait(timeout_ms / 1000):
            return True
        self.notices.append(
            SqlWarning(f"backend with PID {pid} did not terminate within {timeout_ms} milliseconds")
        )
        return False

    def blocking_pids(self, pid: int | None) -> list[int] | None:
        if pid is None:
            return None
        backend = self._backends.get(pid)
        txn = backend.transaction if backend is not None else None
        if txn is None:
            return []
        holder = self._waits_for.waiting_for(txn.state)
        if holder is None:
            return []
        return [b.pid for b in self._backends.all() if _txn_id(b) == holder.txn_id]

    # -- the relations ---------------------------------------------------------------------

    def stat_activity_rows(self) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        for backend in self._backends.all():
            txn = backend.transaction
            waiting = txn is not None and self._waits_for.waiting_for(txn.state) is not None
            lock_wait = None if waiting else self.lock_waited(txn or backend.block)
            head = (
                self._database_oid,
                backend.database,
                backend.pid,
                None,
                self.role_oids.get(backend.user),
                backend.user,
                backend.application_name,
            )
            if not self.has_privileges_of(backend.user):
                rows.append((*head, *[None] * 13, _INSUFFICIENT, "client backend"))
                continue
            if waiting:
                wait_type, wait_event = "Lock", "transactionid"
            elif lock_wait is not None:
                wait_type, wait_event = "Lock", lock_wait
            elif backend.state == "active":
                wait_type, wait_event = None, None
            else:
                wait_type, wait_event = "Client", "ClientRead"
            rows.append(
                (
                    *head,
                    backend.client_addr,
                    None,
                    backend.client_port,
                    backend.backend_start,
                    backend.xact_start,
                    backend.query_start,
                    backend.state_change,
                    wait_type,
                    wait_event,
                    backend.state,
                    txn.txn_id if txn is not None and (txn.has_writes or waiting) else None,
                    None,
                    None,
                    backend.query,
                    "client backend",
                )
            )
        return rows

    def lock_rows(self) -> list[tuple[Any, ...]]:
        """Each transaction's virtualxid and (once it writes) transactionid, and the
        transactionid each waiting writer asks for."""
        rows: list[tuple[Any, ...]] = []
        for number, backend in enumerate(self._backends.all(), start=1):
            txn = backend.transaction
            if txn is None:
                continue
            virtual = f"{number}/{txn.txn_id}"
            holder = self._waits_for.waiting_for(txn.state)
            rows.append(_lock("virtualxid", virtual, None, backend.pid, "ExclusiveLock", True))
            if txn.has_writes or holder is not None:
                rows.append(
                    _lock("transactionid", virtual, txn.txn_id, backend.pid, "ExclusiveLock", True)
                )
            if holder is not None:
                rows.append(
                    _lock("transactionid", virtual, holder.txn_id, backend.pid, "ShareLock", False)
                )
        return rows

    def copy_progress_rows(self) -> list[tuple[Any, ...]]:
        """Each running COPY; as in PostgreSQL, only its pid and database for a role without
        the privileges of the session's user."""
        rows: list[tuple[Any, ...]] = []
        for backend in self._backends.all():
            copy = backend.copy
            if copy is None or not copy.running or backend.state != "active":
                continue  # (a COPY whose rows were never read ends with its statement)
            head = (backend.pid, self._database_oid, backend.database)
            if not self.has_privileges_of(backend.user):
                rows.append((*head, *[None] * 7))
                continue
            rows.append(
                (
                    *head,
                    copy.relid,
                    copy.command,
                    copy.type,
                    copy.bytes_processed,
                    copy.bytes_total,
                    copy.tuples_processed,
                    copy.tuples_excluded,
                )
            )
        return rows

    def rows(self, relation: str) -> list[tuple[Any, ...]]:
        if relation == "pg_stat_activity":
            return self.stat_activity_rows()
        if relation == "pg_stat_progress_copy":
            return self.copy_progress_rows()
        return self.lock_rows()


def _txn_id(backend: Backend) -> int | None:
    txn = backend.transaction
    return txn.txn_id if txn is not None else None


def _lock(
    locktype: str, virtual: str, xid: int | None, pid: int, mode: str, granted: bool
) -> tuple[Any, ...]:
    is_virtual = locktype == "virtualxid"
    return (
        locktype, None, None, None, None, virtual if is_virtual else None, xid, None, None,
        None, virtual, pid, mode, granted, is_virtual, None,
    )  # fmt: skip


_UDFS: tuple[tuple[str, list[str], str], ...] = (
    ("backend_pid", [], "INTEGER"),
    ("cancel_backend", ["BIGINT"], "BOOLEAN"),
    ("terminate_backend", ["BIGINT", "BIGINT"], "BOOLEAN"),
    ("blocking_pids", ["BIGINT"], "INTEGER[]"),
)

MACROS: dict[str, str] = {
    "pg_backend_pid()": "nya_backend_pid()",
    "pg_cancel_backend(p)": "nya_cancel_backend(p)",
    "pg_terminate_backend(p, t := 0)": "nya_terminate_backend(p, t)",
    "pg_blocking_pids(p)": "nya_blocking_pids(p)",
}


def names() -> frozenset[str]:
    """Function names (without the prefix) the rewriter sends to these macros."""
    return frozenset(spec.split("(")[0] for spec in MACROS)


def _dispatch(current: Callable[[], Activity], name: str, arity: int) -> Callable[..., Any]:
    """A function of exactly ``arity`` arguments (DuckDB reads the signature) calling ``name``."""
    if arity == 0:
        return lambda: getattr(current(), name)()
    if arity == 1:
        return lambda a: getattr(current(), name)(a)
    return lambda a, b: getattr(current(), name)(a, b)


def register(duck: duckdb.DuckDBPyConnection, current: Callable[[], Activity]) -> None:
    """Create the ``nya_*`` functions and ``pgf_*`` macros; each call goes to ``current()``,
    the Activity of the session whose query runs.  They have side effects (signals) and
    read live state, so DuckDB must call them for every row."""
    for name, params, returns in _UDFS:
        duck.create_function(  # type: ignore[call-overload]  # DuckDB's stubs name only types
            _UDF + name,
            _dispatch(current, name, len(params)),
            params,
            returns,
            null_handling="special",
            side_effects=True,
        )
    for spec, body in MACROS.items():
        duck.execute(f"CREATE MACRO {PREFIX}{spec} AS {body}")
