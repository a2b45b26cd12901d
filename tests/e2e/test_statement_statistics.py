"""pg_stat_statements, pg_stat_statements_info and pg_stat_statements_reset() beside PostgreSQL 15.

PostgreSQL runs here with pg_stat_statements preloaded (its own cluster,
since the shared one has no extension library loaded), and both servers get
the same traffic: the normalised texts, calls and rows must match, as must
the column list, who may see whose query text, who may reset, and what
CREATE EXTENSION says.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import errors

from tests.support.servers import TEST_SETTINGS, PostgresServer, make_dsn, missing_postgres_reason

pytestmark = pytest.mark.e2e

_ROLES = ("stat_bob", "stat_carol")


@pytest.fixture(scope="module")
def postgres_with_statements() -> Iterator[PostgresServer]:
    reason = missing_postgres_reason()
    if reason is not None:
        pytest.skip(reason)
    settings = dict(TEST_SETTINGS, shared_preload_libraries="'pg_stat_statements'")
    with PostgresServer(settings) as server:
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            conn.execute("create extension pg_stat_statements")
        yield server


@pytest.fixture(scope="module")
def servers(nyala_server, postgres_with_statements):
    both = (nyala_server, postgres_with_statements)
    for server in both:
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            for role in _ROLES:
                conn.execute(f"drop role if exists {role}")
                conn.execute(f"create role {role} login")
            conn.execute("grant pg_read_all_stats to stat_carol")
    return both


def _dsn(server, user: str) -> str:
    return make_dsn(server.host, server.port, user, "nyala")


def _description(server) -> dict[str, list[tuple[str, int]]]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        out = {}
        for view in ("pg_stat_statements", "pg_stat_statements_info"):
            cur = conn.execute(f"select * from {view} limit 0")
            out[view] = [(c.name, c.type_code) for c in cur.description]
        return out


def test_the_views_have_postgresql_15s_columns_and_types(servers):
    nyala, postgres = servers
    assert _description(nyala) == _description(postgres)


_WORKLOAD = [
    "create table stat_t (a int primary key, b text)",
    "insert into stat_t values (1, 'one')",
    "INSERT INTO stat_t VALUES (2, 'two')",
    "insert into stat_t values (-3, e'th\\nree')",
    "select * from stat_t where a = 1",
    "select  *  from stat_t where a = -3",
    "select a - 1, true, null, date '2020-01-01' from stat_t where a in (1, 2) limit 10",
    "update stat_t set b = 'uno' where a = 1",
    "delete from stat_t where a = 2",
    "select count(*) from stat_t",
    "set work_mem = '4MB'",
    "begin",
    "select b from stat_t order by a",
    "commit",
    "drop table stat_t",
]


def _workload(server) -> list[tuple[object, ...]]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists stat_t")
        conn.execute("select pg_stat_statements_reset()")
        for statement in _WORKLOAD:
            conn.execute(statement)
            if statement.startswith("create"):
                with conn.cursor() as cur:
                    # Parameters of the extended protocol keep their numbers; literals follow.
                    for key in (1, 2, -3):
                        cur.execute("select b from stat_t where a = %s offset 0", (key,))
                    with cur.copy("copy stat_t from stdin") as copy:
                        for key in (10, 11, 12):
                            copy.write_row((key, "copied"))
        rows = conn.execute(
            "select query, calls, rows, toplevel, plans, queryid,"
            " total_exec_time, min_exec_time, max_exec_time, mean_exec_time,"
            " stddev_exec_time, userid = (select oid from pg_roles where rolname = 'nyala'),"
            " dbid = (select oid from pg_database where datname = 'nyala')"
            " from pg_stat_statements where query not like '%pg_stat_statements%'"
            " order by query"
        ).fetchall()
    return rows


def test_normalised_texts_calls_and_rows_match_postgresql(servers):
    nyala, postgres = (_workload(server) for server in servers)
    shape = [row[:5] for row in nyala]
    assert shape == [row[:5] for row in postgres]
    texts = {row[0]: row for row in nyala}
    assert texts["insert into stat_t values ($1, $2)"][1:3] == (3, 3)
    assert texts["select * from stat_t where a = $1"][1:3] == (2, 2)
    assert texts["select b from stat_t where a = $1 offset $2"][1:3] == (3, 0)  # still empty
    assert texts["set work_mem = '4MB'"][1:3] == (1, 0)
    assert texts["copy stat_t from stdin"][1:3] == (1, 3)
    assert len({row[5] for row in nyala}) == len(nyala)  # one query id per statement
    for _, calls, _, _, _, _, total, low, high, mean, stddev, is_user, is_db in nyala:
        assert is_user and is_db
        assert 0 <= low <= mean <= high <= total
        assert mean == pytest.approx(total / calls)
        assert stddev >= 0 and (calls > 1 or stddev == 0)


def test_counters_accumulate_and_reset(servers):
    nyala, _ = servers
    with psycopg.connect(nyala.dsn, autocommit=True) as conn:
        conn.execute("select pg_stat_statements_reset()")
        before = conn.execute("select stats_reset from pg_stat_statements_info").fetchone()
        for n in range(5):
            conn.execute(f"select {n} + 1")
        calls = conn.execute(
            "select calls, rows from pg_stat_statements where query = 'select $1 + $2'"
        ).fetchall()
        assert calls == [(5, 5)]
        conn.execute("select pg_stat_statements_reset()")
        after = conn.execute("select stats_reset from pg_stat_statements_info").fetchone()
        assert after > before
        assert conn.execute(
            "select count(*) from pg_stat_statements where query = 'select $1 + $2'"
        ).fetchone() == (0,)


def test_settings_turn_tracking_off(servers):
    nyala, _ = servers
    with psycopg.connect(nyala.dsn, autocommit=True) as conn:
        conn.execute("select pg_stat_statements_reset()")
        conn.execute("set pg_stat_statements.track_utility = off")
        conn.execute("set extra_float_digits = 3")
        conn.execute("select 42")
        conn.execute("set pg_stat_statements.track = none")
        conn.execute("select 1, 2")
        conn.execute("reset pg_stat_statements.track")
        queries = [
            r[0]
            for r in conn.execute(
                "select query from pg_stat_statements"
                " where query not like '%pg_stat_statements%' order by query"
            )
        ]
        assert queries == ["select $1"]


def _visibility(server) -> dict[str, object]:
    out: dict[str, object] = {}
    with psycopg.connect(server.dsn, autocommit=True) as admin:
        admin.execute("select pg_stat_statements_reset()")
        admin.execute("select 'admin secret'")
    with psycopg.connect(_dsn(server, "stat_bob"), autocommit=True) as bob:
        bob.execute("select 'bob query'")
        out["bob sees"] = bob.execute(
            "select query, queryid is null from pg_stat_statements"
            " where query in ('select $1', '<insufficient privilege>') order by query"
        ).fetchall()
        try:
            bob.execute("select pg_stat_statements_reset()")
            out["bob resets"] = None
        except psycopg.Error as exc:
            out["bob resets"] = exc.sqlstate
    with psycopg.connect(_dsn(server, "stat_carol"), autocommit=True) as carol:
        out["carol sees"] = carol.execute(
            "select query, queryid is null, count(*) from pg_stat_statements"
            " where query in ('select $1', '<insufficient privilege>')"
            " group by 1, 2 order by 1, 2"
        ).fetchall()
    return out


def test_other_users_query_text_is_hidden_as_in_postgresql(servers):
    nyala, postgres = (_visibility(server) for server in servers)
    assert nyala == postgres
    # The superuser's 'admin secret' and reset, hidden; bob's own query, shown.
    assert nyala["bob sees"] == [
        ("<insufficient privilege>", True),
        ("<insufficient privilege>", True),
        ("select $1", False),
    ]
    assert nyala["bob resets"] == errors.InsufficientPrivilege.sqlstate
    assert nyala["carol sees"] == [("select $1", False, 2)]


def _extension_statements(server) -> list[object]:
    out: list[object] = []
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        notices: list[str | None] = []
        conn.add_notice_handler(lambda notice: notices.append(notice.sqlstate))
        for statement in (
            "create extension if not exists pg_stat_statements",
            "create extension if not exists no_such_extension",
            "drop extension if exists no_such_extension",
            "drop extension no_such_extension",
            "create extension plpgsql",
            "create extension if not exists plpgsql",
        ):
            try:
                conn.execute(statement)
                out.append("ok")
            except psycopg.Error as exc:
                out.append(exc.sqlstate)
        out.append(notices)
        out.append(conn.execute("select count(*) >= 0 from public.pg_stat_statements").fetchone())
    return out


def test_create_extension_as_tools_send_it(servers):
    nyala, postgres = (_extension_statements(server) for server in servers)
    assert nyala == postgres
    assert nyala[:7] == [
        "ok",
        errors.FeatureNotSupported.sqlstate,
        "ok",
        errors.UndefinedObject.sqlstate,
        errors.DuplicateObject.sqlstate,
        "ok",
        ["42710", "00000", "42710"],
    ]


README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_statements() -> list[str]:
    section = README.read_text().split("## Statement statistics (pg_stat_statements)", 1)[1]
    block = section.split("```sql\n", 1)[1].split("```", 1)[0]
    text = "\n".join(line.split("--", 1)[0] for line in block.splitlines())
    return [s.strip() for s in text.split(";") if s.strip()]


def _readme_columns(server) -> list[list[str] | None]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        out = []
        for statement in _readme_statements():
            cur = conn.execute(statement)
            out.append([c.name for c in cur.description] if cur.description else None)
        return out


def test_the_readme_examples_run_as_on_postgresql(servers):
    nyala, postgres = (_readme_columns(server) for server in servers)
    assert nyala == postgres
    assert len(nyala) == 5


def _psql_top_statements(server) -> str:
    script = (
        "create extension if not exists pg_stat_statements;\n"
        "select pg_stat_statements_reset();\n"
        "select 1 + 1;\n"
        "select 2 + 2;\n"
        "select query, calls, rows from pg_stat_statements"
        " where query like 'select $%' order by query;\n"
    )
    result = server.psql(["-X", "-v", "ON_ERROR_STOP=1"], input=script, check=True)
    return result.stdout


def test_psql_shows_the_statements_as_postgresql_does(servers, psql):
    nyala, postgres = (_psql_top_statements(server) for server in servers)
    assert nyala == postgres
    assert "select $1 + $2 |     2 |    2" in nyala


_JAR = Path("/usr/share/java/postgresql.jar")
_JAVA = Path(__file__).parent / "java" / "JdbcStatistics.java"


def _jdbc(classes: Path, server) -> list[str]:
    fields = dict(part.split("=", 1) for part in server.dsn.split())
    url = (
        f"jdbc:postgresql://{fields['host']}:{fields['port']}/{fields['dbname']}"
        f"?user={fields['user']}"
    )
    done = subprocess.run(
        ["java", "-cp", f"{_JAR}:{classes}", "JdbcStatistics", url],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout.splitlines()


@pytest.mark.slow
def test_pgjdbc_batches_and_prepared_queries_are_counted_as_in_postgresql(servers, tmp_path):
    assert _JAR.exists(), "make installs libpostgresql-jdbc-java; run the tests through make"
    javac = shutil.which("javac")
    assert javac is not None, "javac (Java 17) is needed"
    subprocess.run([javac, "-cp", str(_JAR), "-d", str(tmp_path), str(_JAVA)], check=True)
    nyala_server, postgres = servers
    nyala = _jdbc(tmp_path, nyala_server)
    # PostgreSQL reports table counters a moment after the session ends; poll its view.
    expected_table = "table: jdbc_stats | 20 | 20"
    theirs = _jdbc(tmp_path, postgres)
    deadline = time.monotonic() + 10
    while expected_table not in theirs and time.monotonic() < deadline:
        with psycopg.connect(postgres.dsn, autocommit=True) as conn:
            row = conn.execute(
                "select relname, n_tup_ins, n_live_tup from pg_stat_user_tables"
                " where relname = 'jdbc_stats'"
            ).fetchone()
        theirs = [line for line in theirs if not line.startswith("table:")]
        theirs.append("table: " + " | ".join(str(v) for v in row))
        time.sleep(0.1)
    assert [line for line in nyala if line.startswith("statement:")] == [
        line for line in theirs if line.startswith("statement:")
    ]
    assert nyala == [
        "statement: insert into jdbc_stats values ($1, $2) | 20 | 20",
        "statement: select v from jdbc_stats where id = $1 | 7 | 7",
        expected_table,
    ]
    assert expected_table in theirs


def _prepared_tracking(server) -> list[tuple[object, ...]]:
    """Prepared point selects and index lookups, read whole on nyala, re-executed as
    pg_stat_statements.track changes (SET, SET LOCAL, a ROLLBACK undoing a SET)."""
    by_key = "select v from stat_prep where id = $1"
    by_index = "select id from stat_prep where code = $1"
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists stat_prep")
        conn.execute("create table stat_prep (id int primary key, code int, v text)")
        conn.execute("create index stat_prep_code on stat_prep (code)")
        conn.execute(
            "insert into stat_prep select i, i % 4, 'v' || i from generate_series(1, 40) i"
        )
        conn.execute("select pg_stat_statements_reset()")
        try:

            def run(values: tuple[int, ...]) -> None:
                for value in values:
                    conn.execute(by_key.replace("$1", "%s"), (value,), prepare=True).fetchall()
                    conn.execute(by_index.replace("$1", "%s"), (value,), prepare=True).fetchall()

            run((1, 2, 99))
            conn.execute("set pg_stat_statements.track = none")
            run((3, 4))
            with conn.transaction():
                conn.execute("set local pg_stat_statements.track = top")
                run((5,))
            run((6,))  # SET LOCAL ended with the transaction: not counted
            conn.execute("reset pg_stat_statements.track")
            with conn.transaction(force_rollback=True):
                conn.execute("set pg_stat_statements.track = none")
                run((7,))
            run((1, 2))  # the ROLLBACK undid the SET: counted
            return conn.execute(
                "select query, calls, rows from pg_stat_statements"
                " where query like '%stat_prep where%' order by query"
            ).fetchall()
        finally:
            conn.execute("drop table stat_prep")


def test_prepared_reads_are_counted_as_the_track_setting_says_as_in_postgresql(servers):
    nyala, postgres = (_prepared_tracking(server) for server in servers)
    assert nyala == postgres
    assert [calls for _, calls, _ in nyala] == [6, 6]
