"""PostgreSQL's declarative partitions in the catalogs and psql, side by side with PostgreSQL 15,
and their pruning: a query by the list key reads only the matching partition's tablet."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.psql import without_layout
from tests.support.servers import NyalaServer, PostgresServer, run_on_each

pytestmark = pytest.mark.e2e

TABLES = ("pgp_sales", "pgp_orders", "pgp_hashed")

SETUP = [
    "create table pgp_sales (id int, region text not null, amount numeric(10,2)) "
    "partition by list (region)",
    "create table pgp_sales_eu partition of pgp_sales for values in ('eu', 'uk')",
    "create table pgp_sales_us partition of pgp_sales for values in ('us')",
    "create table pgp_sales_rest partition of pgp_sales default",
    "create table pgp_orders (id int, region text, day date, primary key (id, region, day)) "
    "partition by list (region)",
    "create table pgp_orders_eu partition of pgp_orders for values in ('eu') "
    "partition by range (day)",
    "create table pgp_orders_eu_2024 partition of pgp_orders_eu "
    "for values from ('2024-01-01') to ('2025-01-01')",
    "create table pgp_orders_eu_old partition of pgp_orders_eu "
    "for values from (minvalue) to ('2024-01-01')",
    "create table pgp_hashed (id bigint primary key, v text) partition by hash (id)",
    "create table pgp_hashed_0 partition of pgp_hashed for values with (modulus 2, remainder 0)",
    "create table pgp_hashed_1 partition of pgp_hashed for values with (modulus 2, remainder 1)",
    "insert into pgp_sales values (1, 'eu', 10), (2, 'us', 20), (3, 'jp', 30)",
]


@pytest.fixture(scope="module")
def partitioned(nyala_server: NyalaServer, postgres_server: PostgresServer) -> None:
    servers = (nyala_server, postgres_server)
    run_on_each(servers, [f"drop table if exists {t}" for t in TABLES])
    run_on_each(servers, SETUP)


def _rows(server: NyalaServer | PostgresServer, sql: str) -> list[tuple]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        return conn.execute(sql).fetchall()


CATALOG_QUERIES = [
    "select c.relname, c.relkind, c.relispartition, pg_get_expr(c.relpartbound, c.oid) "
    "from pg_class c where c.relname like 'pgp%' and c.relkind in ('r', 'p') order by 1",
    "select c.relname, p.relname, i.inhseqno from pg_inherits i "
    "join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent "
    "where c.relname like 'pgp%' order by 1",
    "select c.relname, t.partstrat, t.partnatts, t.partattrs, d.relname "
    "from pg_partitioned_table t join pg_class c on c.oid = t.partrelid "
    "left join pg_class d on d.oid = t.partdefid where c.relname like 'pgp%' order by 1",
    "select relname, pg_get_partkeydef(oid) from pg_class "
    "where relname like 'pgp%' and relkind = 'p' order by 1",
    "select relname, relhassubclass from pg_class where relname like 'pgp%' "
    "and relkind in ('r', 'p') order by 1",
    "select a.attname, a.attnum from pg_attribute a join pg_class c on c.oid = a.attrelid "
    "where c.relname = 'pgp_sales_eu' and a.attnum > 0 order by 2",
    "select 'pgp_sales_eu'::regclass::text, "
    "(select count(*) from pg_inherits where inhparent = 'pgp_sales'::regclass)",
]


@pytest.mark.usefixtures("partitioned")
@pytest.mark.parametrize("sql", CATALOG_QUERIES)
def test_partition_catalogs_match_postgresql(nyala_server, postgres_server, sql):
    assert _rows(nyala_server, sql) == _rows(postgres_server, sql)


@pytest.mark.usefixtures("partitioned", "psql")
@pytest.mark.parametrize(
    "command",
    [
        r"\d pgp_sales",
        r"\d+ pgp_sales",
        r"\d pgp_sales_eu",
        r"\d+ pgp_sales_rest",
        r"\d+ pgp_orders",
        r"\d+ pgp_orders_eu",
        r"\d pgp_hashed_1",
        r"\dt pgp_*",
    ],
)
def test_psql_describes_partitions_as_postgresql(nyala_server, postgres_server, command):
    ours = nyala_server.psql(["-c", command])
    theirs = postgres_server.psql(["-c", command])
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0 and ours.stderr == "", ours.stderr
    normal = [
        without_layout(o.stdout.replace("pg_database_owner", "nyala")) for o in (ours, theirs)
    ]
    assert normal[0] == normal[1]


@pytest.mark.usefixtures("partitioned")
def test_a_list_key_equality_reads_only_its_partition(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        for where, partitions in (
            ("region = 'us'", 1),
            ("region in ('us', 'uk')", 2),
            ("region = 'jp'", 1),  # only the DEFAULT partition can hold it
            ("region in ('eu', 'uk')", 1),
            ("amount > 0", 3),
        ):
            plan = "\n".join(
                r[0] for r in conn.execute(f"explain select * from pgp_sales where {where}")
            )
            assert f": {partitions} of 3 tablets" in plan, (where, plan)


def _as_stranger(server: NyalaServer | PostgresServer) -> list[str | None]:
    """SQLSTATEs a role that owns nothing gets touching another role's partitions."""
    from tests.support.servers import make_dsn

    with psycopg.connect(server.dsn, autocommit=True) as su:
        su.execute("drop table if exists pgp_owned")
        su.execute("drop role if exists pgp_stranger")
        su.execute("create role pgp_stranger login")
        su.execute("create table pgp_owned (id int, r text not null) partition by list (r)")
        su.execute("create table pgp_owned_a partition of pgp_owned for values in ('a')")
        su.execute("insert into pgp_owned values (1, 'a')")
    states: list[str | None] = []
    dsn = make_dsn(server.host, server.port, "pgp_stranger", "nyala")
    with psycopg.connect(dsn, autocommit=True) as stranger:
        for sql in (
            "select * from pgp_owned_a",
            "insert into pgp_owned_a values (2, 'a')",
            "drop table pgp_owned_a",
            "alter table pgp_owned detach partition pgp_owned_a",
        ):
            try:
                stranger.execute(sql)
                states.append(None)
            except psycopg.Error as exc:
                states.append(exc.sqlstate)
    with psycopg.connect(server.dsn, autocommit=True) as su:
        states.append(str(su.execute("select count(*) from pgp_owned_a").fetchone()))
        su.execute("drop table pgp_owned")
        su.execute("drop role pgp_stranger")
    return states


def test_partitions_are_their_owners_to_read_and_change(nyala_server, postgres_server):
    ours = _as_stranger(nyala_server)
    assert ours == _as_stranger(postgres_server)
    assert ours[:4] == ["42501"] * 4


def test_a_partition_tree_survives_a_restart(fresh_nyala_server):
    setup = [
        "create table kept (id int, r text, d date, primary key (id, r, d)) partition by list (r)",
        "create table kept_a partition of kept for values in ('a') partition by range (d)",
        "create table kept_a_old partition of kept_a for values from (minvalue) to ('2024-01-01')",
        "create table kept_rest partition of kept default",
        "insert into kept values (1, 'a', '2020-01-01'), (2, 'b', '2020-01-01')",
    ]
    run_on_each([fresh_nyala_server], setup)
    fresh_nyala_server.restart()
    assert _rows(fresh_nyala_server, "select id from kept_a_old") == [(1,)]
    assert _rows(fresh_nyala_server, "select id from kept_rest") == [(2,)]
    assert _rows(
        fresh_nyala_server,
        "select c.relname, pg_get_expr(c.relpartbound, c.oid) from pg_inherits i "
        "join pg_class c on c.oid = i.inhrelid where c.relkind <> 'i' order by 1",
    ) == [
        ("kept_a", "FOR VALUES IN ('a')"),
        ("kept_a_old", "FOR VALUES FROM (MINVALUE) TO ('2024-01-01')"),
        ("kept_rest", "DEFAULT"),
    ]
    with (
        psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as conn,
        pytest.raises(psycopg.errors.CheckViolation),
    ):
        conn.execute("insert into kept values (3, 'a', '2025-01-01')")


def test_copy_into_a_partition_by_its_name_routes_within_it(nyala_server, postgres_server):
    for server in (nyala_server, postgres_server):
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            conn.execute("drop table if exists pgp_copy")
            conn.execute("create table pgp_copy (id int, r text) partition by list (r)")
            conn.execute("create table pgp_copy_a partition of pgp_copy for values in ('a')")
            conn.execute("create table pgp_copy_b partition of pgp_copy for values in ('b')")
            with conn.cursor().copy("copy pgp_copy_a from stdin") as copy:
                copy.write("1\ta\n2\ta\n")
            with conn.cursor().copy("copy pgp_copy from stdin") as copy:
                copy.write("3\tb\n4\ta\n")
            with (
                pytest.raises(psycopg.errors.CheckViolation),
                conn.cursor().copy("copy pgp_copy_a from stdin") as copy,
            ):
                copy.write("5\tb\n")
    assert _rows(nyala_server, "select id from pgp_copy_a order by id") == [(1,), (2,), (4,)]
    assert _rows(nyala_server, "select id from pgp_copy_b") == [(3,)]
    assert _rows(postgres_server, "select id from pgp_copy_a order by id") == [(1,), (2,), (4,)]
