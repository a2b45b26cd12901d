"""Foreign keys through real clients, side by side with PostgreSQL 15: the errors' messages and
details, COPY, ON CONFLICT, and the metadata psql, SQLAlchemy and pgjdbc read."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa

from tests.support.psql import without_layout
from tests.support.servers import NyalaServer, PostgresServer, run_on_each

pytestmark = pytest.mark.e2e

SETUP = (
    "drop table if exists fk_line, fk_order, fk_customer cascade",
    "create table fk_customer (id int primary key, email text unique, name text)",
    "create table fk_order (id int primary key, customer_id int references fk_customer, "
    "placed date)",
    "create table fk_line (order_id int, line int, customer_email text, qty int, "
    "primary key (order_id, line), "
    "constraint fk_line_order foreign key (order_id) references fk_order (id), "
    "foreign key (customer_email) references fk_customer (email))",
    "insert into fk_customer values (1, 'a@x', 'A'), (2, 'b@x', 'B')",
    "insert into fk_order values (10, 1, '2024-01-01'), (11, 2, '2024-01-02')",
    "insert into fk_line values (10, 1, 'a@x', 3)",
)


@pytest.fixture(scope="module")
def servers(nyala_server: NyalaServer, postgres_server: PostgresServer) -> list[str]:
    run_on_each((nyala_server, postgres_server), SETUP)
    return [nyala_server.dsn, postgres_server.dsn]


def _error(dsn: str, sql: str) -> tuple[str | None, str | None, str | None]:
    with psycopg.connect(dsn) as conn:
        with pytest.raises(psycopg.Error) as caught:
            conn.execute(sql)
        diag = caught.value.diag
        return diag.sqlstate, diag.message_primary, diag.message_detail


@pytest.mark.parametrize(
    "sql",
    [
        "insert into fk_order values (12, 9, null)",
        "insert into fk_line values (11, 1, 'zz@x', 1)",
        "update fk_order set customer_id = 5 where id = 10",
        "delete from fk_customer where id = 1",
        "update fk_customer set email = 'new@x' where id = 1",
        "delete from fk_order",
        "truncate fk_customer",
        "drop table fk_order",
        "insert into fk_order values (12, 1, null), (13, 3, null)",
        "insert into fk_order values (10, 7, null) on conflict (id) do update "
        "set customer_id = excluded.customer_id",
    ],
)
def test_errors_match_postgres(servers, sql):
    ours, theirs = (_error(dsn, sql) for dsn in servers)
    assert ours == theirs
    assert ours[0] in ("23503", "0A000", "2BP01")


def test_copy_rows_are_checked(servers):
    for dsn in servers:
        with psycopg.connect(dsn) as conn:
            with (
                pytest.raises(psycopg.errors.ForeignKeyViolation),
                conn.cursor().copy("copy fk_order from stdin") as copy,
            ):
                copy.write("20\t1\t\\N\n21\t99\t\\N\n")
            conn.rollback()
            with conn.cursor().copy("copy fk_order from stdin") as copy:
                copy.write("20\t1\t\\N\n21\t\\N\t\\N\n")
            conn.commit()
            rows = conn.execute("select id, customer_id from fk_order where id >= 20 order by id")
            assert rows.fetchall() == [(20, 1), (21, None)]
            conn.execute("delete from fk_order where id >= 20")
            conn.commit()


def test_a_parent_and_its_children_in_one_transaction(servers):
    for dsn in servers:
        with psycopg.connect(dsn) as conn:
            conn.execute("insert into fk_customer values (3, 'c@x', 'C')")
            conn.execute("insert into fk_order values (30, 3, null)")
            conn.execute("insert into fk_line values (30, 1, 'c@x', 1)")
            with pytest.raises(psycopg.errors.ForeignKeyViolation):
                conn.execute("delete from fk_customer where id = 3")
            conn.rollback()
            assert conn.execute("select count(*) from fk_order where id = 30").fetchone() == (0,)


@pytest.mark.parametrize("table", ["fk_customer", "fk_order", "fk_line"])
def test_psql_describe_lists_foreign_keys_and_referencing_tables(
    servers, nyala_server, postgres_server, table
):
    ours = nyala_server.psql(["-c", rf"\d {table}"], check=True).stdout
    theirs = postgres_server.psql(["-c", rf"\d {table}"], check=True).stdout
    assert without_layout(ours) == without_layout(theirs)
    assert ("Referenced by:" if table != "fk_line" else "Foreign-key constraints:") in ours


def test_sqlalchemy_reflects_foreign_keys(servers):
    answers = []
    for dsn in servers:
        params = dict(part.split("=", 1) for part in dsn.split())
        url = sa.URL.create(
            "postgresql+psycopg", username=params["user"], host=params["host"],
            port=int(params["port"]), database=params["dbname"],
        )  # fmt: skip
        engine = sa.create_engine(url)
        try:
            inspector = sa.inspect(engine)
            answers.append(
                [inspector.get_foreign_keys(t) for t in ("fk_customer", "fk_order", "fk_line")]
            )
            metadata = sa.MetaData()
            line = sa.Table("fk_line", metadata, autoload_with=engine)
            answers[-1].append(sorted(str(f.target_fullname) for f in line.foreign_keys))
        finally:
            engine.dispose()
    assert answers[0] == answers[1]
    assert answers[0][2][0]["name"] == "fk_line_customer_email_fkey"


JAR = Path("/usr/share/java/postgresql.jar")
SOURCE = Path(__file__).parent / "java" / "ForeignKeyMetadata.java"


@pytest.mark.slow
def test_pgjdbc_foreign_key_metadata_matches_postgres(
    servers, nyala_server, postgres_server, tmp_path
):
    assert JAR.exists(), "make installs libpostgresql-jdbc-java; run the tests through make"
    javac = shutil.which("javac")
    assert javac is not None, "javac (Java 17) is needed"
    subprocess.run([javac, "-cp", str(JAR), "-d", str(tmp_path), str(SOURCE)], check=True)
    outputs = []
    for server in (nyala_server, postgres_server):
        fields = dict(part.split("=", 1) for part in server.dsn.split())
        url = (
            f"jdbc:postgresql://{fields['host']}:{fields['port']}/{fields['dbname']}"
            f"?user={fields['user']}"
        )
        done = subprocess.run(
            ["java", "-cp", f"{JAR}:{tmp_path}", "ForeignKeyMetadata", url],
            capture_output=True, text=True, timeout=240,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr + done.stdout
        outputs.append(done.stdout.splitlines())
    assert outputs[0] == outputs[1]
    assert any(
        line.startswith("cross fk_customer fk_line: fk_customer.email") for line in outputs[0]
    )


def test_prepare_transaction_runs_the_deferred_checks(nyala_server):
    """As PostgreSQL (whose shared test server runs without prepared transactions): the checks
    a deferred key owes run at PREPARE TRANSACTION, which fails with 23503 and rolls back."""
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists fk_deferred_child, fk_deferred_parent")
        conn.execute("create table fk_deferred_parent (id int primary key)")
        conn.execute(
            "create table fk_deferred_child (id int primary key, p int references "
            "fk_deferred_parent deferrable initially deferred)"
        )
        conn.execute("begin")
        conn.execute("insert into fk_deferred_child values (1, 5)")
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute("prepare transaction 'fk_owed'")
        assert conn.execute("select count(*) from pg_prepared_xacts").fetchone() == (0,)
        assert conn.execute("select count(*) from fk_deferred_child").fetchone() == (0,)
        conn.execute("begin")
        conn.execute("insert into fk_deferred_child values (1, 5)")
        conn.execute("insert into fk_deferred_parent values (5)")
        conn.execute("prepare transaction 'fk_ok'")
        conn.execute("commit prepared 'fk_ok'")
        assert conn.execute("select p from fk_deferred_child").fetchall() == [(5,)]


def test_a_key_needs_the_references_privilege_on_its_parent(servers):
    for dsn in servers:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("drop table if exists fk_priv_child, fk_priv_parent")
            conn.execute("drop role if exists fk_referrer")
            conn.execute("create role fk_referrer")
            conn.execute("grant create on schema public to fk_referrer")
            conn.execute("create table fk_priv_parent (id int primary key)")
            try:
                conn.execute("set role fk_referrer")
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(
                        "create table fk_priv_child (id int primary key, "
                        "p int references fk_priv_parent)"
                    )
                conn.execute("reset role")
                conn.execute("grant references on fk_priv_parent to fk_referrer")
                conn.execute("set role fk_referrer")
                conn.execute(
                    "create table fk_priv_child (id int primary key, p int references fk_priv_parent)"
                )
            finally:
                conn.execute("reset role")
                conn.execute("drop table if exists fk_priv_child, fk_priv_parent")
                conn.execute("revoke all on schema public from fk_referrer")
                conn.execute("drop role fk_referrer")
