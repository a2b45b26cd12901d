"""pg_stat_activity, pg_locks, pg_blocking_pids, pg_cancel_backend and pg_terminate_backend.

The scenarios run the same statements against nyala and PostgreSQL 15 where
the behaviour is meant to match (column lists, the "who blocks whom" query,
the permission rules and SQLSTATEs of cancelling and terminating across
roles), and against nyala alone for a queue of three sessions on one row.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from psycopg import errors

from tests.support.differential import both, outcome
from tests.support.servers import make_dsn

pytestmark = pytest.mark.e2e

_WAIT_S = 10.0


def _dsn(server, user: str) -> str:
    return make_dsn(server.host, server.port, user, "nyala")


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + _WAIT_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Background:
    """One statement run on its own thread; ``error`` is what it raised, if anything."""

    def __init__(self, conn: psycopg.Connection, sql: str) -> None:
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(conn, sql), daemon=True)
        self._thread.start()

    def _run(self, conn: psycopg.Connection, sql: str) -> None:
        try:
            conn.execute(sql)
        except BaseException as exc:  # noqa: BLE001  # the test inspects it
            self.error = exc

    def join(self) -> None:
        self._thread.join(_WAIT_S)
        assert not self._thread.is_alive(), "the statement did not finish"


def _waiting(monitor: psycopg.Connection, pid: int) -> bool:
    row = monitor.execute(
        "select wait_event_type, wait_event from pg_stat_activity where pid = %s", (pid,)
    ).fetchone()
    return row == ("Lock", "transactionid")


def _client_wait(monitor: psycopg.Connection, pid: int) -> bool:
    row = monitor.execute(
        "select wait_event_type from pg_stat_activity where pid = %s", (pid,)
    ).fetchone()
    return row == ("Client",)


def _columns(server) -> dict[str, list[tuple[str, int]]]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        out = {}
        for view in ("pg_stat_activity", "pg_locks"):
            cur = conn.execute(f"select * from {view} limit 0")
            out[view] = [(c.name, c.type_code) for c in cur.description]
    return out


def test_the_views_have_postgresql_15s_columns(nyala_server, postgres_server):
    nyala = _columns(nyala_server)
    postgres = _columns(postgres_server)
    names = {view: [n for n, _ in cols] for view, cols in nyala.items()}
    assert names == {view: [n for n, _ in cols] for view, cols in postgres.items()}
    # Types match but for name, inet and xid, which nyala's catalogs send as text and oid.
    same = {19: 25, 869: 25, 28: 26}
    mismatched = [
        (view, name, oid, pg_oid)
        for view in nyala
        for (name, oid), (_, pg_oid) in zip(nyala[view], postgres[view], strict=True)
        if same.get(pg_oid, pg_oid) != oid
    ]
    assert mismatched == []


def _blocking_scenario(server) -> dict[str, object]:
    """Session a holds a row, b waits for it: what the monitoring queries say, by label."""
    with (
        psycopg.connect(server.dsn, autocommit=True) as monitor,
        psycopg.connect(server.dsn, application_name="holder") as a,
        psycopg.connect(server.dsn, autocommit=True, application_name="waiter") as b,
    ):
        monitor.execute("drop table if exists act_rows")
        monitor.execute("create table act_rows (id int primary key, v int)")
        monitor.execute("insert into act_rows values (1, 0)")
        labels = {a.info.backend_pid: "a", b.info.backend_pid: "b"}
        a.execute("update act_rows set v = 1 where id = 1")
        waiter = Background(b, "update act_rows set v = 2 where id = 1")
        _until(lambda: _waiting(monitor, b.info.backend_pid), "b to wait for a's row lock")
        # PostgreSQL's backend shows its ClientRead wait a moment after its ReadyForQuery.
        _until(lambda: _client_wait(monitor, a.info.backend_pid), "a to wait for its client")
        pairs = monitor.execute(
            "select blocked.pid, blocking.pid from pg_locks blocked"
            " join pg_locks blocking on blocking.transactionid = blocked.transactionid"
            " and blocking.pid <> blocked.pid and blocking.granted"
            " where not blocked.granted and blocked.locktype = 'transactionid'"
        ).fetchall()
        blocking = monitor.execute(
            "select pg_blocking_pids(%s), pg_blocking_pids(%s)",
            (b.info.backend_pid, a.info.backend_pid),
        ).fetchone()
        assert blocking is not None
        states = monitor.execute(
            "select pid, application_name, state, wait_event_type, query,"
            " backend_xid is not null, xact_start is not null"
            " from pg_stat_activity where pid in (%s, %s) order by application_name",
            (a.info.backend_pid, b.info.backend_pid),
        ).fetchall()
        a.commit()
        waiter.join()
        assert waiter.error is None
        monitor.execute("drop table act_rows")
    return {
        "pairs": sorted((labels[x], labels[y]) for x, y in pairs),
        "blocking": [[labels[p] for p in pids] for pids in blocking],
        "states": [(labels[pid], *rest) for pid, *rest in states],
    }


def test_a_blocked_session_shows_who_blocks_it_as_in_postgresql(nyala_server, postgres_server):
    nyala = both(_blocking_scenario, nyala_server, postgres_server)
    assert nyala["blocking"] == [["a"], []]
    assert nyala["states"][1][2:4] == ("active", "Lock")


def _relation_wait_scenario(server) -> list[object]:
    """A holds a table by ALTER TABLE in an open transaction; b's ALTER TABLE and c's SELECT
    of it wait: each shows as waiting for a relation lock until a commits."""
    with (
        psycopg.connect(server.dsn, autocommit=True) as monitor,
        psycopg.connect(server.dsn) as a,
        psycopg.connect(server.dsn, autocommit=True) as b,
        psycopg.connect(server.dsn, autocommit=True) as c,
    ):
        monitor.execute("drop table if exists act_ddl")
        monitor.execute("create table act_ddl (id int primary key, v int)")
        a.execute("alter table act_ddl add column w int")
        seen: list[object] = []
        waiters = []
        for conn, sql in (
            (b, "alter table act_ddl add column x int"),
            (c, "select * from act_ddl"),
        ):
            pid = conn.info.backend_pid
            waiters.append(Background(conn, sql))
            _until(
                lambda pid=pid: (
                    monitor.execute(
                        "select wait_event_type from pg_stat_activity where pid = %s", (pid,)
                    ).fetchone()
                    == ("Lock",)
                ),
                "a relation lock wait",
            )
            seen.append(
                monitor.execute(
                    "select state, wait_event_type, wait_event from pg_stat_activity"
                    " where pid = %s",
                    (pid,),
                ).fetchone()
            )
        a.commit()
        for waiter in waiters:
            waiter.join()
            assert waiter.error is None
        seen.append(
            monitor.execute(
                "select count(*) from pg_stat_activity where wait_event_type = 'Lock'"
            ).fetchone()
        )
        return seen


def test_a_session_waiting_for_ddl_shows_a_relation_lock_wait(nyala_server, postgres_server):
    nyala = both(_relation_wait_scenario, nyala_server, postgres_server)
    assert nyala[0] == ("active", "Lock", "relation")


def test_a_queue_of_three_sessions_on_one_row(nyala_server):
    """a holds the row; b and c wait for a; once a commits, one of them has the row and
    the other waits for it, until it commits too."""
    with (
        psycopg.connect(nyala_server.dsn, autocommit=True) as monitor,
        psycopg.connect(nyala_server.dsn) as a,
        psycopg.connect(nyala_server.dsn) as b,
        psycopg.connect(nyala_server.dsn) as c,
    ):
        monitor.execute("create table queue_rows (id int primary key, v int)")
        monitor.execute("insert into queue_rows values (1, 0)")
        pids = {s: conn.info.backend_pid for s, conn in (("a", a), ("b", b), ("c", c))}

        def blockers(label: str) -> list[int]:
            row = monitor.execute("select pg_blocking_pids(%s)", (pids[label],)).fetchone()
            assert row is not None
            return row[0]

        a.execute("update queue_rows set v = v + 1 where id = 1")
        waits = {s: Background(conn, "update queue_rows set v = v + 10 where id = 1") for s, conn in (("b", b), ("c", c))}  # fmt: skip
        _until(lambda: _waiting(monitor, pids["b"]) and _waiting(monitor, pids["c"]), "b and c")
        assert blockers("b") == [pids["a"]] and blockers("c") == [pids["a"]]
        ungranted = monitor.execute(
            "select pid from pg_locks where not granted and transactionid = %s order by pid",
            (
                monitor.execute(
                    "select backend_xid from pg_stat_activity where pid = %s", (pids["a"],)
                ).fetchone()[0],
            ),  # type: ignore[index]  # fmt: skip
        ).fetchall()
        assert [p for (p,) in ungranted] == sorted([pids["b"], pids["c"]])

        a.commit()

        def one_has_the_row() -> bool:
            return sum(_waiting(monitor, pids[s]) for s in ("b", "c")) == 1

        _until(one_has_the_row, "one of b and c to get the row")
        first = "b" if not _waiting(monitor, pids["b"]) else "c"
        second = "c" if first == "b" else "b"
        waits[first].join()
        assert blockers(second) == [pids[first]]
        assert monitor.execute(
            "select state from pg_stat_activity where pid = %s", (pids[first],)
        ).fetchone() == ("idle in transaction",)
        (b if first == "b" else c).commit()
        waits[second].join()
        (b if second == "b" else c).commit()
        assert waits["b"].error is None and waits["c"].error is None
        assert monitor.execute("select v from queue_rows").fetchone() == (21,)
        assert monitor.execute("select count(*) from pg_locks where not granted").fetchone() == (0,)
        monitor.execute("drop table queue_rows")


def _setup_roles(conn: psycopg.Connection) -> None:
    for role in ("act_alice", "act_bob"):
        conn.execute(f"drop role if exists {role}")
        conn.execute(f"create role {role} login")


def _outcome(conn: psycopg.Connection, sql: str, *args: object) -> object:
    return outcome(conn, sql, args, scalar=True)


def _signal_scenario(server) -> dict[str, object]:
    """Who may cancel and terminate whom, what the victim sees, and what others see."""
    out: dict[str, object] = {}
    with psycopg.connect(server.dsn, autocommit=True) as admin:
        _setup_roles(admin)
        with (
            psycopg.connect(_dsn(server, "act_alice"), autocommit=True) as alice,
            psycopg.connect(_dsn(server, "act_alice"), autocommit=True) as alice2,
            psycopg.connect(_dsn(server, "act_bob"), autocommit=True) as bob,
        ):
            admin_pid, alice2_pid = admin.info.backend_pid, alice2.info.backend_pid
            out["bob cancels alice"] = _outcome(bob, "select pg_cancel_backend(%s)", alice2_pid)
            out["bob terminates alice"] = _outcome(
                bob, "select pg_terminate_backend(%s)", alice2_pid
            )
            admin.execute("grant pg_signal_backend to act_bob")
            out["bob with pg_signal_backend cancels alice"] = _outcome(
                bob, "select pg_cancel_backend(%s)", alice2_pid
            )
            out["bob with pg_signal_backend cancels the superuser"] = _outcome(
                bob, "select pg_cancel_backend(%s)", admin_pid
            )
            admin.execute("revoke pg_signal_backend from act_bob")
            out["bob sees alice's query"] = _outcome(
                bob, "select query from pg_stat_activity where pid = %s", alice2_pid
            )
            admin.execute("grant act_alice to act_bob")
            out["bob, a member of alice, sees her query"] = _outcome(
                bob, "select query from pg_stat_activity where pid = %s", alice2_pid
            )
            admin.execute("revoke act_alice from act_bob")
            out["alice cancels the superuser"] = _outcome(
                alice, "select pg_cancel_backend(%s)", admin_pid
            )
            out["alice terminates the superuser"] = _outcome(
                alice, "select pg_terminate_backend(%s)", admin_pid
            )
            out["negative timeout"] = _outcome(
                admin, "select pg_terminate_backend(%s, -1)", alice2_pid
            )
            warnings: list[str] = []
            admin.add_notice_handler(lambda d: warnings.append(d.severity_nonlocalized or ""))
            out["no such pid"] = _outcome(admin, "select pg_cancel_backend(1)")
            out["no such pid warns"] = warnings
            out["bob sees the superuser"] = bob.execute(
                "select usename, state, query, backend_start, client_addr"
                " from pg_stat_activity where pid = %s",
                (admin_pid,),
            ).fetchone()
            out["alice sees herself"] = alice.execute(
                "select usename, state from pg_stat_activity where pid = %s", (alice2_pid,)
            ).fetchone()

            sleeper = Background(alice2, "select pg_sleep(30)")
            _until(
                lambda: (
                    admin.execute(
                        "select state from pg_stat_activity where pid = %s", (alice2_pid,)
                    ).fetchone()
                    == ("active",)
                ),
                "the sleep to start",
            )
            out["alice cancels her own session"] = _outcome(
                alice, "select pg_cancel_backend(%s)", alice2_pid
            )
            sleeper.join()
            out["her statement"] = getattr(sleeper.error, "sqlstate", None)
            out["still connected"] = _outcome(alice2, "select 1")

            sleeper = Background(alice2, "select pg_sleep(30)")
            _until(
                lambda: (
                    admin.execute(
                        "select state from pg_stat_activity where pid = %s", (alice2_pid,)
                    ).fetchone()
                    == ("active",)
                ),
                "the sleep to start",
            )
            out["superuser terminates alice"] = _outcome(
                admin, "select pg_terminate_backend(%s, 5000)", alice2_pid
            )
            sleeper.join()
            out["terminated statement"] = getattr(sleeper.error, "sqlstate", None)
            out["gone"] = admin.execute(
                "select count(*) from pg_stat_activity where pid = %s", (alice2_pid,)
            ).fetchone()
            out["idle bob terminated"] = _outcome(
                admin, "select pg_terminate_backend(%s, 5000)", bob.info.backend_pid
            )
            out["bob afterwards"] = _outcome(bob, "select 1")
        for role in ("act_alice", "act_bob"):
            admin.execute(f"drop role {role}")
    return out


def test_cancel_and_terminate_follow_postgresqls_rules(nyala_server, postgres_server):
    nyala = both(_signal_scenario, nyala_server, postgres_server)
    assert nyala["bob cancels alice"] == errors.InsufficientPrivilege.sqlstate
    assert nyala["bob with pg_signal_backend cancels alice"] is True
    assert nyala["bob sees alice's query"] == "<insufficient privilege>"
    assert nyala["bob sees the superuser"] == (
        "nyala",
        None,
        "<insufficient privilege>",
        None,
        None,
    )
    assert nyala["her statement"] == errors.QueryCanceled.sqlstate
    assert nyala["terminated statement"] == errors.AdminShutdown.sqlstate


README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_statements() -> list[str]:
    section = README.read_text().split("## Sessions, locks and stopping a session", 1)[1]
    block = section.split("```sql\n", 1)[1].split("```", 1)[0]
    text = "\n".join(line.split("--", 1)[0] for line in block.splitlines())
    return [s.strip() for s in text.split(";") if s.strip()]


def _readme_scenario(server) -> list[object]:
    """The README's recipe, run while session a blocks session b: what each step shows."""
    out: list[object] = []
    with (
        psycopg.connect(server.dsn, autocommit=True) as monitor,
        psycopg.connect(server.dsn, application_name="forgotten") as a,
        psycopg.connect(server.dsn, autocommit=True) as b,
    ):
        monitor.execute("drop table if exists readme_rows")
        monitor.execute("create table readme_rows (id int primary key, v int)")
        monitor.execute("insert into readme_rows values (1, 0)")
        labels = {a.info.backend_pid: "a", b.info.backend_pid: "b"}
        a.execute("update readme_rows set v = 1 where id = 1")
        waiter = Background(b, "update readme_rows set v = 2 where id = 1")
        _until(lambda: _waiting(monitor, b.info.backend_pid), "b to wait")
        for statement in _readme_statements():
            rows = monitor.execute(statement.replace("4711", str(a.info.backend_pid))).fetchall()
            out.append(
                [
                    tuple(
                        labels.get(v, v)
                        if isinstance(v, int) and not isinstance(v, bool)
                        else [labels[p] for p in v]
                        if isinstance(v, list)
                        else type(v).__name__
                        if v is not None and not isinstance(v, (str, bool))
                        else v
                        for v in row
                    )
                    for row in rows
                ]
            )
        waiter.join()
        out.append(getattr(waiter.error, "sqlstate", None))
        with pytest.raises(psycopg.OperationalError):
            a.execute("select 1")
        monitor.execute("drop table readme_rows")
    return out


def test_the_readme_recipe_finds_and_stops_a_blocking_session(nyala_server, postgres_server):
    nyala = both(_readme_scenario, nyala_server, postgres_server)
    assert [row[0] for row in nyala[0]] == ["b"]
    assert [row[0] for row in nyala[1]] == ["a"]
    assert nyala[-1] is None  # b got the row once a was terminated
