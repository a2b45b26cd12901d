"""log_statement, log_min_duration_statement, log_connections and log_disconnections.

The lines go to the server's log through ``logging`` in PostgreSQL's wording;
only superusers may set them (42501, as PostgreSQL answers).
"""

from __future__ import annotations

import time

import psycopg
import pytest

from tests.support.servers import make_dsn

pytestmark = pytest.mark.e2e


def _log_lines(server, marker: str) -> list[str]:
    deadline = time.monotonic() + 5
    while True:
        lines = [line.split("nyala.statements: ", 1)[1] for line in server.log.splitlines()
                 if "nyala.statements: " in line and marker in line]  # fmt: skip
        if lines or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def test_statements_are_logged_by_kind_and_duration(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("set log_statement = 'mod'")
        conn.execute("create table log_ddl_1 (id int primary key)")
        conn.execute("insert into log_ddl_1 values (1)")
        conn.execute("select id as log_read_1 from log_ddl_1").fetchall()
        conn.execute("set log_statement = 'ddl'")
        conn.execute("insert into log_ddl_1 values (2)")
        conn.execute("set log_statement = 'none'")
        conn.execute("set log_min_duration_statement = 0")
        conn.execute("select id as log_timed_1 from log_ddl_1 where id = %s", (1,)).fetchall()
        conn.execute("set log_min_duration_statement = '1h'")
        conn.execute("select id as log_untimed_1 from log_ddl_1").fetchall()
        conn.execute("reset log_min_duration_statement")
        conn.execute("drop table log_ddl_1")
    assert [
        line for line in _log_lines(nyala_server, "log_ddl_1") if "log_timed_1" not in line
    ] == [
        "statement: create table log_ddl_1 (id int primary key)",
        "statement: insert into log_ddl_1 values (1)",
    ]
    assert _log_lines(nyala_server, "log_read_1") == []
    timed = _log_lines(nyala_server, "log_timed_1")
    assert len(timed) == 1 and timed[0].startswith("duration: ") and " ms  statement: " in timed[0]
    assert _log_lines(nyala_server, "log_untimed_1") == []


def test_connections_are_logged_when_asked_at_connection_start(nyala_server):
    options = " options='-c log_connections=on -c log_disconnections=on'"
    with psycopg.connect(nyala_server.dsn + options, application_name="logged") as conn:
        assert conn.execute("show log_connections").fetchone() == ("on",)
    assert _log_lines(nyala_server, "connection authorized: user=nyala database=nyala")
    assert _log_lines(nyala_server, "disconnection: session time: ")


def test_only_superusers_set_the_log_settings(nyala_server, postgres_server):
    def outcome(server) -> list[object]:
        out: list[object] = []
        with psycopg.connect(server.dsn, autocommit=True) as su:
            su.execute("drop role if exists log_user")
            su.execute("create role log_user login")
            dsn = make_dsn(server.host, server.port, "log_user", "nyala")
            with psycopg.connect(dsn, autocommit=True) as conn:
                for sql in ("set log_statement = 'all'", "set log_min_duration_statement = 0",
                            "set application_name = 'fine'", "set log_lock_waits = on"):  # fmt: skip
                    try:
                        conn.execute(sql)
                        out.append("ok")
                    except psycopg.Error as exc:
                        out.append(exc.sqlstate)
            su.execute("drop role log_user")
        return out

    nyala = outcome(nyala_server)
    assert nyala == outcome(postgres_server)
    assert nyala[0] == "42501"


def test_prepared_statements_follow_each_change_of_the_log_settings(nyala_server):
    """A prepared point select re-executed as the settings change (SET, SET LOCAL, a
    ROLLBACK that undoes a SET): logged and timed exactly while the settings say so."""
    select = "select v as log_prepared_2 from log_prep_2 where id = %s"
    timed = "select v as log_prepared_timed_2 from log_prep_2 where id = %s"
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("create table log_prep_2 (id int primary key, v int)")
        conn.execute("insert into log_prep_2 values (1, 10)")
        try:

            def run(times: int = 1) -> None:
                for _ in range(times):
                    conn.execute(select, (1,), prepare=True).fetchall()
                    conn.execute(timed, (1,), prepare=True).fetchall()

            run(3)  # both off: nothing
            conn.execute("set log_statement = 'all'")
            run(2)  # 2 statement lines of each
            conn.execute("set log_statement = 'mod'")
            run()
            with conn.transaction():
                conn.execute("set local log_statement = 'all'")
                run()  # 1 more of each
            run()  # SET LOCAL ended with the transaction
            with conn.transaction(force_rollback=True):
                conn.execute("set log_min_duration_statement = 0")
                run()  # 1 duration line of each
            run()  # the ROLLBACK undid the SET
            conn.execute("set log_min_duration_statement = 0")
            run()  # 1 more duration line of each
            conn.execute("reset log_min_duration_statement")
            conn.execute("reset log_statement")
            run(2)
        finally:
            conn.execute("drop table log_prep_2")
    for marker in ("log_prepared_2 ", "log_prepared_timed_2 "):
        time.sleep(0.2)
        lines = _log_lines(nyala_server, marker)
        assert len([line for line in lines if line.startswith("statement: ")]) == 3, lines
        assert len([line for line in lines if line.startswith("duration: ")]) == 2, lines
