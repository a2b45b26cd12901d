"""A plain-SQL dump written by PostgreSQL 15's pg_dump restores into nyala with
``psql -v ON_ERROR_STOP=1 -f``: primary keys added after the data, unique, check and partial
indexes, INCLUDE columns, views and data; the rows and psql's ``\\d`` of each table then
match PostgreSQL's.  Not in it yet: foreign keys (nyala has none), and SERIAL or identity
columns, which pg_dump writes as a standalone CREATE SEQUENCE that nyala does not have."""

from __future__ import annotations

import re
import shutil
import subprocess

import psycopg
import pytest

from tests.support.psql import run_psql, without_layout
from tests.support.servers import PostgresServer, make_dsn

pytestmark = pytest.mark.e2e

SOURCE_DB = "dump_source"
SCHEMA = (
    "create table customer (id int primary key, email varchar(80) not null unique, "
    "name text, tier int check (tier between 0 and 3))",
    "create table orders (id bigint primary key, "
    "customer_id int not null, code text, amount numeric(10,2), placed date, "
    "constraint orders_code_customer unique (code, customer_id))",
    "create index orders_placed on orders (placed)",
    "create unique index orders_late_code on orders (code) where customer_id > 40",
    "create index orders_customer_amount on orders (customer_id) include (amount)",
    "create table bare (a int, b text)",
    "create view big_orders as select id, code, amount from orders where amount > 100",
    "insert into customer (id, email, name, tier) select i, 'c' || i || '@x', 'n' || i, i % 4 "
    "from generate_series(1, 50) i",
    "insert into orders (id, customer_id, code, amount, placed) select i, 1 + i % 50, 'o' || i, "
    "i * 10.5, date '2024-01-01' + i from generate_series(1, 200) i",
    "insert into bare values (1, 'x'), (2, null)",
)
TABLES = ("customer", "orders", "bare")


@pytest.fixture(scope="module")
def dump_file(postgres_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory):
    pg_dump = shutil.which("pg_dump")
    if pg_dump is None:
        pytest.skip("pg_dump is not on PATH")
    with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
        admin.execute(f"drop database if exists {SOURCE_DB}")
        admin.execute(f"create database {SOURCE_DB}")
    source = make_dsn(postgres_server.host, postgres_server.port, dbname=SOURCE_DB)
    with psycopg.connect(source, autocommit=True) as conn:
        for statement in SCHEMA:
            conn.execute(statement)
    path = tmp_path_factory.mktemp("dump") / "dump.sql"
    subprocess.run(
        [pg_dump, "--no-owner", "--no-privileges", "-f", str(path), source],
        check=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    yield path, source
    with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
        admin.execute(f"drop database if exists {SOURCE_DB}")


def _normalise(text: str) -> str:
    """Whitespace and rule lengths aside; and, a difference the README lists, a CHECK
    expression is shown as written (here, as pg_dump wrote it: fully parenthesised)."""
    lines = without_layout(text).splitlines()
    lines = [re.sub(r"[()]", "", line) if " CHECK " in line else line for line in lines]
    return "\n".join(lines)


def test_pg_dump_restores_into_nyala(dump_file, fresh_nyala_server, postgres_server):
    path, source = dump_file
    fresh_nyala_server.psql(["-f", str(path)], check=True)
    with psycopg.connect(fresh_nyala_server.dsn) as ours, psycopg.connect(source) as theirs:
        for table in (*TABLES, "big_orders"):
            query = f"select * from {table} order by 1"
            assert ours.execute(query).fetchall() == theirs.execute(query).fetchall(), table
        # The restored constraints hold.
        with pytest.raises(psycopg.errors.UniqueViolation):
            ours.execute("insert into customer (id, email) values (99, 'c1@x')")
        ours.rollback()
        with pytest.raises(psycopg.errors.UniqueViolation):
            ours.execute("insert into orders (id, customer_id, code) values (999, 2, 'o1')")
    for table in TABLES:
        mine = fresh_nyala_server.psql(["-c", rf"\d {table}"], check=True).stdout
        real = run_psql(source, ["-c", rf"\d {table}"], check=True).stdout
        assert _normalise(mine) == _normalise(real), table
