"""pg_dump carries nyala's hash/range partitioning and column encodings as
``SECURITY LABEL FOR nyala`` statements: restored into a fresh nyala (plain through psql,
custom through pg_restore) every table has the same rows, the same tablets (hash buckets and
ranges, ``nyala_tablets``), the same encodings and the same psql ``\\d``; a dump taken with
``--no-security-labels`` restores into PostgreSQL 15 with ON_ERROR_STOP."""

from __future__ import annotations

import subprocess

import psycopg
import pytest

from tests.e2e.test_pg_dump_nyala import _describe, _dump, _pg_tool
from tests.support.psql import run_psql
from tests.support.servers import NyalaServer, PostgresServer, make_dsn

pytestmark = pytest.mark.e2e

SCHEMA = (
    "create table metrics (host text not null, metric text not null, "
    "time timestamp not null, value double precision encoding plain_encoding compression zstd, "
    "primary key (host, metric, time)) "
    "partition by hash (host, metric) partitions 4, range (time) ("
    "partition '2014-01-01' <= values < '2015-01-01', "
    "partition '2015-01-01' <= values < '2016-01-01')",
    "create table events (id bigint primary key encoding bit_shuffle compression lz4, "
    "kind text encoding dict_encoding compression no_compression, n int) "
    "partition by hash (id) partitions 3",
    "create table ranged (k int primary key, v text) partition by range (k) "
    "(partition values < 10, partition 10 <= values < 100, partition 100 <= values)",
    "insert into metrics select 'h' || (i % 5), 'm' || (i % 3), "
    "timestamp '2014-03-01' + i * interval '3 day', i * 0.5 from generate_series(1, 200) i",
    "insert into events select i, 'k' || (i % 4), i from generate_series(1, 50) i",
    "insert into ranged select i * 7, 'v' || i from generate_series(0, 30) i",
)
KEYS = {"metrics": "host, metric, time", "events": "id", "ranged": "k"}
TABLES = tuple(KEYS)
LAYOUT = (
    "select table_name, hash_buckets, range_bounds, partition_name, rows from nyala_tablets "
    "where table_name in ('metrics', 'events', 'ranged') order by 1, 2, 3, 4"
)
LABELS = (
    "select c.relname, l.objsubid, l.provider, l.label from pg_seclabel l "
    "join pg_class c on c.oid = l.objoid order by 1, 2"
)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory):
    with NyalaServer(tmp_path_factory.mktemp("layout-source")) as server:
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            for statement in SCHEMA:
                conn.execute(statement)
        yield server


def _query(dsn: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(sql).fetchall()


def _assert_same_layout(source: NyalaServer, target: str) -> None:
    for table in TABLES:
        ordered = f"select * from {table} order by {KEYS[table]}"
        assert _query(target, ordered) == _query(source.dsn, ordered), table
        assert _describe(target, table) == _describe(source.dsn, table), table
    assert _query(target, LAYOUT) == _query(source.dsn, LAYOUT)
    assert _query(target, LABELS) == _query(source.dsn, LABELS)


def test_the_labels_are_in_the_dump(source, tmp_path):
    assert len(_query(source.dsn, LAYOUT)) == 4 * 2 + 3 + 3
    text = _dump(source, tmp_path / "plain.sql").read_text()
    assert (
        "SECURITY LABEL FOR nyala ON TABLE public.events IS "
        "'PARTITION BY HASH (id) PARTITIONS 3';" in text
    )
    assert (
        "SECURITY LABEL FOR nyala ON COLUMN public.events.kind IS "
        "'ENCODING DICT_ENCODING COMPRESSION NO_COMPRESSION';" in text
    )


def test_plain_dump_restores_the_layout_into_nyala(source, fresh_nyala_server, tmp_path):
    path = _dump(source, tmp_path / "plain.sql")
    fresh_nyala_server.psql(["-f", str(path)], check=True)  # ON_ERROR_STOP=1
    _assert_same_layout(source, fresh_nyala_server.dsn)
    with (  # the ranges still bound the rows
        psycopg.connect(fresh_nyala_server.dsn) as conn,
        pytest.raises(psycopg.errors.CheckViolation),
    ):
        conn.execute("insert into metrics values ('h', 'm', '2020-01-01', 1)")


def test_custom_dump_restores_the_layout_with_pg_restore(source, fresh_nyala_server, tmp_path):
    path = _dump(source, tmp_path / "custom.dump", "-Fc")
    subprocess.run(
        [_pg_tool("pg_restore"), "--exit-on-error", "-d", fresh_nyala_server.dsn, str(path)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    _assert_same_layout(source, fresh_nyala_server.dsn)


def test_labels_are_checked(source):
    with psycopg.connect(source.dsn) as conn:
        with pytest.raises(psycopg.errors.InvalidParameterValue):  # as PostgreSQL's 22023
            conn.execute("security label for selinux on table events is 'x'")
        conn.rollback()
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            conn.execute("security label for nyala on column events.n is 'ENCODING PREFIX'")
        conn.rollback()
        with pytest.raises(psycopg.errors.FeatureNotSupported):  # it has its key already
            conn.execute("security label on table events is 'PARTITION BY HASH (id) PARTITIONS 2'")
        conn.rollback()
        conn.execute("create table bare (a int, b text)")
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            conn.execute("security label on table bare is 'PARTITION BY LIST (a)'")
        conn.rollback()
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute("security label on table missing is 'PARTITION BY HASH (a) PARTITIONS 2'")


def test_label_then_key_partitions_a_loaded_table(fresh_nyala_server):
    with psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as conn:
        conn.execute("create table t (a int not null, b text)")
        conn.execute("security label on table t is 'PARTITION BY HASH (a) PARTITIONS 2'")
        conn.execute("insert into t select i, 'x' from generate_series(1, 20) i")
    fresh_nyala_server.kill9()  # the label is durable once it has returned
    fresh_nyala_server.start()
    with psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as conn:
        conn.execute("alter table t add primary key (a)")
        tablets = conn.execute(
            "select hash_buckets, rows from nyala_tablets where table_name = 't' order by 1"
        ).fetchall()
        assert len(tablets) == 2 and sum(rows for _, rows in tablets) == 20
        assert conn.execute("select count(*) from t where a = 7").fetchone() == (1,)
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("insert into t values (7, 'y')")


def test_dump_without_labels_restores_into_postgresql(
    source, postgres_server: PostgresServer, tmp_path
):
    path = _dump(source, tmp_path / "plain.sql", "--no-security-labels")
    assert "SECURITY LABEL" not in path.read_text()
    name = "layout_from_nyala"
    with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
        admin.execute(f"drop database if exists {name}")
        admin.execute(f"create database {name}")
    target = make_dsn(postgres_server.host, postgres_server.port, dbname=name)
    try:
        run_psql(target, ["-v", "ON_ERROR_STOP=1", "-f", str(path)], check=True)
        for table in TABLES:
            ordered = f"select * from {table} order by {KEYS[table]}"
            assert _query(target, ordered) == _query(source.dsn, ordered), table
    finally:
        with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
            admin.execute(f"drop database if exists {name}")


def test_declarative_partitions_dump_into_postgresql(
    fresh_nyala_server, postgres_server: PostgresServer, tmp_path
):
    """pg_dump locks every partition by its own name and prepares with pg_catalog.oid."""
    with psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as conn:
        conn.execute(
            "create table sales (id int, day date, amount int, primary key (id, day)) "
            "partition by range (day)"
        )
        for year in (2024, 2025):
            conn.execute(
                f"create table sales_{year} partition of sales "
                f"for values from ('{year}-01-01') to ('{year + 1}-01-01')"
            )
        conn.execute("insert into sales values (1, '2024-05-01', 3), (2, '2025-02-02', 4)")
    path = _dump(fresh_nyala_server, tmp_path / "plain.sql")
    name = "partitions_from_nyala"
    with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
        admin.execute(f"drop database if exists {name}")
        admin.execute(f"create database {name}")
    target = make_dsn(postgres_server.host, postgres_server.port, dbname=name)
    try:
        run_psql(target, ["-v", "ON_ERROR_STOP=1", "-f", str(path)], check=True)
        for table in ("sales", "sales_2024", "sales_2025"):
            ordered = f"select * from {table} order by id"
            assert _query(target, ordered) == _query(fresh_nyala_server.dsn, ordered), table
            assert _describe(target, table) == _describe(fresh_nyala_server.dsn, table), table
    finally:
        with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
            admin.execute(f"drop database if exists {name}")
