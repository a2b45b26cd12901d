"""pg_dump carries nyala's hash/range partitioning and column encodings as
``SECURITY LABEL FOR nyala`` statements: restored into a fresh nyala (plain through psql,
custom through pg_restore) every table has the same rows, the same tablets (hash buckets and
ranges, ``nyala_tablets``), the same encodings and the same psql ``\\d``; a dump taken with
``--no-security-labels`` restores into PostgreSQL 15 with ON_ERROR_STOP."""

from __future__ import annotations

import re
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


DECLARATIVE = (
    "create table sales (id int, region text, day date, amount numeric(10,2), "
    "primary key (id, region)) partition by list (region)",
    "create table sales_eu partition of sales for values in ('eu', 'uk')",
    "create table sales_us partition of sales for values in ('us')",
    "create table sales_rest partition of sales default",
    "insert into sales select g, (array['eu', 'uk', 'us', 'jp'])[g % 4 + 1], "
    "date '2024-01-01' + g, g * 1.5 from generate_series(1, 40) g",
    "create table log (at date not null, n int) partition by range (at)",
    "create table log_2024 partition of log for values from ('2024-01-01') to ('2025-01-01')",
    "create table log_2025 partition of log for values from ('2025-01-01') to (maxvalue)",
    "insert into log select date '2024-06-01' + g * 10, g from generate_series(1, 50) g",
    "create table hashed (id bigint primary key, v text) partition by hash (id)",
    "create table hashed_0 partition of hashed for values with (modulus 2, remainder 0)",
    "create table hashed_1 partition of hashed for values with (modulus 2, remainder 1)",
    "insert into hashed select g, 'v' || g from generate_series(1, 30) g",
    "create table events (id int, kind text, at date, primary key (id, kind, at)) "
    "partition by list (kind)",
    "create table events_click partition of events for values in ('click') partition by range (at)",
    "create table events_click_2024 partition of events_click "
    "for values from ('2024-01-01') to ('2025-01-01')",
    "create table events_other partition of events default",
    "insert into events values (1, 'click', '2024-02-02'), (2, 'view', '2023-01-01'), "
    "(3, 'click', '2024-12-31')",
)
DECLARED = {
    "sales": "id, region", "sales_eu": "id, region", "sales_us": "id, region",
    "sales_rest": "id, region", "log": "at", "log_2024": "at", "log_2025": "at",
    "hashed": "id", "hashed_0": "id", "hashed_1": "id", "events": "id, kind, at",
    "events_click": "id, kind, at", "events_click_2024": "id, kind, at",
    "events_other": "id, kind, at",
}  # fmt: skip


@pytest.fixture(scope="module")
def declarative(tmp_path_factory: pytest.TempPathFactory):
    with NyalaServer(tmp_path_factory.mktemp("declarative-source")) as server:
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            for statement in DECLARATIVE:
                conn.execute(statement)
        yield server


def _describe_plus(dsn: str, relation: str) -> str:
    r"""psql's ``\d+``, the root's OID in a hash partition's constraint aside (a restore, into
    PostgreSQL too, gives the root another OID)."""
    text = run_psql(dsn, ["-c", rf"\d+ {relation}"], check=True).stdout
    return re.sub(r"satisfies_hash_partition\('\d+'::oid", "satisfies_hash_partition(OID", text)


def _assert_same_partitions(source: NyalaServer, target: str) -> None:
    for relation, key in DECLARED.items():
        ordered = f"select * from {relation} order by {key}"
        assert _query(target, ordered) == _query(source.dsn, ordered), relation
        assert _describe_plus(target, relation) == _describe_plus(source.dsn, relation), relation
    with psycopg.connect(target) as conn:  # the keys and the bounds hold after the restore
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("insert into sales values (1, 'uk', null, 1)")
        conn.rollback()
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("insert into sales_us values (1000, 'eu', null, 1)")
        conn.rollback()
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("insert into events values (1, 'click', '2024-02-02')")
        conn.rollback()
        conn.execute("insert into log values ('2030-01-01', 0)")
        assert conn.execute("select count(*) from log_2025").fetchone() == (
            _query(source.dsn, "select count(*) from log_2025")[0][0] + 1,
        )


def test_declarative_partitions_restore_into_nyala_with_psql(
    declarative, fresh_nyala_server, tmp_path
):
    """pg_dump writes each partition as a plain table, attaches it, loads it and only then
    adds the keys (each partition's, the root's, ALTER INDEX ... ATTACH PARTITION)."""
    path = _dump(declarative, tmp_path / "plain.sql")
    text = path.read_text()
    assert "ALTER TABLE ONLY public.sales ATTACH PARTITION public.sales_eu" in text
    assert "ALTER INDEX public.events_pkey ATTACH PARTITION public.events_click_pkey" in text
    fresh_nyala_server.psql(["-f", str(path)], check=True)  # ON_ERROR_STOP=1
    _assert_same_partitions(declarative, fresh_nyala_server.dsn)


def test_declarative_partitions_restore_into_nyala_with_pg_restore(
    declarative, fresh_nyala_server, tmp_path
):
    path = _dump(declarative, tmp_path / "custom.dump", "-Fc")
    subprocess.run(
        [_pg_tool("pg_restore"), "--exit-on-error", "-d", fresh_nyala_server.dsn, str(path)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    _assert_same_partitions(declarative, fresh_nyala_server.dsn)


def test_attach_of_a_table_keyed_otherwise(fresh_nyala_server):
    """ATTACH takes an empty table with the root's columns whatever its key; one holding rows
    (or with other columns) is still 0A000; a table partitioned further joins the tree."""
    with psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as conn:
        conn.execute("create table p (id int, k text, primary key (id, k)) partition by list (k)")
        conn.execute("create table full_one (id int not null, k text not null)")
        conn.execute("insert into full_one values (1, 'a')")
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            conn.execute("alter table p attach partition full_one for values in ('a')")
        conn.execute("create table other (id int not null, x text not null)")
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            conn.execute("alter table p attach partition other for values in ('a')")
        conn.execute("create table empty_one (id int not null, k text not null)")
        conn.execute("alter table p attach partition empty_one for values in ('a')")
        conn.execute("insert into p values (1, 'a')")
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("insert into p values (1, 'a')")
        with pytest.raises(psycopg.errors.InvalidObjectDefinition):  # overlaps empty_one
            conn.execute("create table again (id int not null, k text not null)")
            conn.execute("alter table p attach partition again for values in ('a')")
        conn.execute("create table sub (id int not null, k text not null) partition by list (k)")
        conn.execute("create table sub_b (id int not null, k text not null)")
        conn.execute("alter table sub attach partition sub_b for values in ('b')")
        conn.execute("alter table p attach partition sub for values in ('b', 'c')")
        conn.execute("insert into p values (2, 'b')")
        assert conn.execute("select * from sub_b").fetchall() == [(2, "b")]
        with pytest.raises(psycopg.errors.CheckViolation):  # 'c' has no leaf below sub
            conn.execute("insert into p values (3, 'c')")
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute("alter index nope_pkey attach partition sub_b_pkey")
