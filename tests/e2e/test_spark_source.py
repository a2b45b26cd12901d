"""The ``nyala`` PySpark data source (spark/), local[2], reading and writing a real server.

Reads: the tasks planned are the tablets EXPLAIN (FORMAT JSON) leaves for the
pushed filters, the pushed filters reach the scans, every task reads at one
snapshot while another connection writes between task starts, time travel
reads the past.  Writes: each task's rows once, whatever Spark retries.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import sys
from pathlib import Path

import psycopg
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.datasource import (
    EqualTo,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    Not,
    StringStartsWith,
)

from spark import register
from spark.examples import pipeline
from spark.options import Options
from spark.reader import NyalaReader

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
JAR = Path("/usr/share/java/postgresql.jar")
RESTORE_KIND = "update events set kind = case id % 3 when 0 then 'click' when 1 then 'view' end"


@pytest.fixture(scope="module")
def spark():
    # Spark's Python workers run this interpreter and import the data source by module name.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    session = (
        SparkSession.builder.master("local[2,3]")  # 2 threads, a task may fail twice
        .appName("nyala-source")
        .config("spark.ui.enabled", "false")
        .config("spark.jars", str(JAR))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.python.daemon.module", "spark.daemon")
        .getOrCreate()
    )
    register(session)
    yield session
    session.stop()


def _options(server) -> dict[str, str]:
    fields = dict(part.split("=", 1) for part in server.dsn.split())
    return {"host": fields["host"], "port": fields["port"], "user": "nyala", "dbname": "nyala"}


def _reader(spark, server, **options):
    return spark.read.format("nyala").options(**_options(server), **options)


@pytest.fixture(scope="module")
def events(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists events")
        conn.execute(
            "create table events (host text, ts timestamp, id bigint, kind varchar(10),"
            " amount numeric(10,2), at timestamptz, day date, ok boolean, f double precision,"
            " raw bytea, primary key (host, ts, id))"
            " partition by hash (host) partitions 4, range (ts) ("
            " partition values < '2024-01-01', partition '2024-01-01' <= values)"
        )
        with conn.cursor().copy("copy events from stdin") as copy:
            for i in range(2000):
                ts = dt.datetime(2023, 12, 1) + dt.timedelta(hours=i)
                copy.write_row((
                    f"h{i % 10}", ts, i, ["click", "view", None][i % 3],
                    decimal.Decimal(i) / 4, ts.replace(tzinfo=dt.UTC), ts.date(), i % 2 == 0,
                    i / 3, bytes([i % 256]),
                ))  # fmt: skip
    return "events"


def _tablets(server, where: str) -> list[int]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        (plan,) = conn.execute(f"explain (format json) select * from events where {where}").fetchone()
    return plan[0]["Plan"]["Plans"][0]["Tablets"]


def test_python_workers_import_the_installed_pyspark_not_the_zip(spark):
    """spark.daemon puts pyspark.zip behind the installed PySpark: no per-daemon recompile."""
    files = (
        spark.sparkContext.parallelize([0], 1)
        .map(lambda _: (sys.modules["pyspark"].__file__, sys.argv[0]))
        .collect()
    )
    [(pyspark_file, _)] = files
    assert ".zip" not in pyspark_file
    assert pyspark_file.endswith(os.path.join("pyspark", "__init__.py"))


def test_whole_table_in_spark_equals_the_server(spark, nyala_server, events):
    df = _reader(spark, nyala_server, table=events).load()
    assert df.rdd.getNumPartitions() == 8
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        expected = sorted(conn.execute("select * from events").fetchall())
    rows = sorted(tuple(r) for r in df.collect())
    assert len(rows) == 2000
    for got, want in zip(rows, expected, strict=True):
        assert got[:3] == want[:3] and got[3:5] == want[3:5]
        assert got[5] == want[5].astimezone(dt.UTC).replace(tzinfo=None)  # Spark: naive, UTC here
        assert got[6:9] == want[6:9] and bytes(got[9]) == want[9]
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types == {
        "host": "string", "ts": "timestamp_ntz", "id": "bigint", "kind": "string",
        "amount": "decimal(10,2)", "at": "timestamp", "day": "date", "ok": "boolean",
        "f": "double", "raw": "binary",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("spark_filter", "sql"),
    [
        ("host = 'h3'", "host = 'h3'"),
        ("host in ('h1', 'h2') and id > 100", "host in ('h1','h2') and id > 100"),
        ("ts < timestamp_ntz '2024-01-01 00:00:00'", "ts < '2024-01-01'"),
        ("host like 'h1%' and kind is null", "host like 'h1%' and kind is null"),
    ],
)
def test_tasks_are_the_tablets_left_after_pruning(spark, nyala_server, events, spark_filter, sql):
    df = _reader(spark, nyala_server, table=events).load().where(spark_filter)
    tablets = _tablets(nyala_server, sql)
    assert df.rdd.getNumPartitions() == len(tablets)
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        (expected,) = conn.execute(f"select count(*) from events where {sql}").fetchone()
    assert df.count() == expected


def test_pushed_filters_reach_the_scan(spark, nyala_server, events):
    df = _reader(spark, nyala_server, table=events).load().where(
        "host = 'h3' and id >= 10 and kind is not null and not (kind = 'view')"
        " and ts >= timestamp_ntz '2023-12-02 00:00:00'"
    )
    plan = df._jdf.queryExecution().executedPlan().toString()
    spark_filter = next(line for line in plan.splitlines() if "Filter" in line)
    # Spark still evaluates what it could not push (NOT) and the timestamp it re-checks ...
    assert "NOT (kind" in spark_filter and "ts#" in spark_filter
    # ... but not the equality, the range on id or IS NOT NULL, which the server applies.
    assert "h3" not in spark_filter and "id#" not in spark_filter
    assert sorted(r.id for r in df.collect()) == [
        i for i in range(24, 2000) if i % 10 == 3 and i % 3 == 0
    ]
    # The reader's SQL, through the server's EXPLAIN: the filters are scan predicates.
    reader = NyalaReader(Options.parse({**_options(nyala_server), "table": events}), df.schema)
    kept = list(reader.pushFilters([
        EqualTo(("host",), "h3"), GreaterThanOrEqual(("id",), 10), IsNotNull(("kind",)),
        Not(EqualTo(("kind",), "view")), StringStartsWith(("kind",), "cl"),
        In(("day",), (dt.date(2023, 12, 3),)),
    ]))  # fmt: skip
    assert [type(f).__name__ for f in kept] == ["Not", "In"]  # dates are re-checked by Spark
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        (document,) = conn.execute("explain (format json) " + reader.select(None, None)).fetchone()
    scan = document[0]["Plan"]["Plans"][0]
    assert scan["Pushed Predicates"] == [
        "host = 'h3'", "id >= 10", "kind IS NOT NULL", "kind LIKE 'cl%'", "day IN ('2023-12-03')",
    ]
    assert len(scan["Tablets"]) == 2


def test_a_large_tablet_is_read_as_key_ranges(spark, nyala_server):
    """Two tablets of ~1,500 rows with split_rows=500: about three key ranges each, bounds
    the scans seek to (EXPLAIN's Primary-Key Bounds), every row read once."""
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists big")
        conn.execute("create table big (id bigint primary key, v text) partition by hash (id)"
                     " partitions 2")  # fmt: skip
        conn.execute("insert into big select g, 'v' || g from generate_series(0, 2999) g")
        sizes = [
            conn.execute(f"select count(*) from big partition ({t})").fetchone()[0]
            for t in _tablets_of(conn, "big")
        ]
    options = {**_options(nyala_server), "table": "big", "split_rows": "500"}
    df = spark.read.format("nyala").options(**options).load()
    assert df.rdd.getNumPartitions() == sum(-(-n // 500) for n in sizes) > 2
    assert sorted(r.id for r in df.collect()) == list(range(3000))
    assert df.where("id < 1000").count() == 1000
    reader = NyalaReader(Options.parse(options), df.schema)
    pieces = reader.partitions()
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        counts = []
        for piece in pieces:
            query = reader.select(piece.tablet_id, piece.as_of, piece.bounds())
            (document,) = conn.execute("explain (format json) " + query).fetchone()
            scan = document[0]["Plan"]["Plans"][0]
            assert scan["Tablets"] == [piece.tablet_id]
            assert scan["Primary-Key Bounds"] == ["id"]
            counts.append(conn.execute(f"select count(*) from ({query}) q").fetchone()[0])
    assert sum(counts) == 3000 and max(counts) <= 600 and min(counts) >= 400
    whole = spark.read.format("nyala").options(**_options(nyala_server), table="big").load()
    assert whole.rdd.getNumPartitions() == 2


def _tablets_of(conn, table: str) -> list[int]:
    (plan,) = conn.execute(f"explain (format json) select * from {table}").fetchone()
    return plan[0]["Plan"]["Plans"][0]["Tablets"]


def test_one_snapshot_across_tasks_while_another_connection_writes(spark, nyala_server, events):
    """Each task inserts rows into every tablet through a second connection before reading;
    every task still sees the table as it was when the job was planned."""
    options = {**_options(nyala_server), "table": events}
    dsn = nyala_server.dsn

    df = spark.read.format("nyala").options(**options).load()

    def write_then_count(index, rows):
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(
                "insert into events (host, ts, id) select 'h' || (g %% 10),"
                " timestamp '2030-01-01' + g * interval '1 second', 100000 + %s * 1000 + g"
                " from generate_series(1, 50) g", (index,)
            )
        yield sum(1 for _ in rows)

    counts = df.rdd.mapPartitionsWithIndex(write_then_count).collect()
    assert len(counts) == 8 and sum(counts) == 2000
    with psycopg.connect(dsn, autocommit=True) as conn:
        assert conn.execute("select count(*) from events").fetchone() == (2000 + 8 * 50,)
        conn.execute("delete from events where id >= 100000")


def test_time_travel_and_query_option(spark, nyala_server, events):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        (before,) = conn.execute("select now()").fetchone()
        conn.execute("update events set kind = 'gone' where host = 'h0'")
    try:
        past = _reader(spark, nyala_server, table=events, as_of=before.isoformat()).load()
        assert past.where(F.col("kind") == "gone").count() == 0
        now = _reader(spark, nyala_server, table=events).load()
        assert now.where(F.col("kind") == "gone").count() == 200
        query = _reader(
            spark, nyala_server, snapshot=before.isoformat(),
            query="select host, count(*) as n from events where kind = 'gone' group by host",
        ).load()  # fmt: skip
        assert query.rdd.getNumPartitions() == 1 and query.count() == 0
    finally:
        with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
            conn.execute(RESTORE_KIND + " where kind = 'gone'")


def test_a_schema_reads_only_its_columns(spark, nyala_server, events):
    df = _reader(spark, nyala_server, table=events).schema("host string, amount decimal(10,2)").load()
    assert df.columns == ["host", "amount"]
    total = df.groupBy().sum("amount").collect()[0][0]
    assert total == sum(decimal.Decimal(i) / 4 for i in range(2000))


def test_jdbc_partitions_share_one_snapshot_through_session_init(spark, nyala_server, events):
    """Item 5: Spark's own JDBC source, each partition its own connection, one instant for all."""
    fields = dict(part.split("=", 1) for part in nyala_server.dsn.split())
    url = f"jdbc:postgresql://{fields['host']}:{fields['port']}/{fields['dbname']}"
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        (before,) = conn.execute("select now()").fetchone()
        conn.execute("update events set kind = 'later' where id % 2 = 0")
    try:
        df = (
            spark.read.format("jdbc")
            .option("url", url).option("user", "nyala").option("driver", "org.postgresql.Driver")
            .option("dbtable", "events").option("partitionColumn", "id")
            .option("lowerBound", "0").option("upperBound", "2000").option("numPartitions", "4")
            .option("sessionInitStatement", f"SET nyala.read_timestamp = '{before.isoformat()}'")
            .load()
        )  # fmt: skip
        assert df.rdd.getNumPartitions() == 4
        assert df.where("kind = 'later'").count() == 0 and df.count() == 2000
    finally:
        with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
            conn.execute(RESTORE_KIND + " where kind = 'later'")


def _sink(conn, name: str) -> None:
    conn.execute(f"drop table if exists {name}")
    conn.execute(f"create table {name} (id bigint primary key, host text, amount numeric(10,2))"
                 " partition by hash (id) partitions 3")  # fmt: skip


def _frame(spark, rows: int, partitions: int = 4):
    return spark.range(rows, numPartitions=partitions).selectExpr(
        "id", "concat('h', cast(id % 7 as string)) as host", "cast(id / 4 as decimal(10,2)) as amount"
    )


def test_append_writes_every_row_once_through_prepared_transactions(spark, nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        _sink(conn, "sink_once")
    _frame(spark, 1000).write.format("nyala").options(
        **_options(nyala_server), table="sink_once"
    ).mode("append").save()
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        assert conn.execute("select count(*), count(distinct id), sum(amount) from sink_once"
                            ).fetchone() == (1000, 1000, sum(decimal.Decimal(i // 4 * 100 + i % 4 * 25) / 100 for i in range(1000)))  # fmt: skip
        assert conn.execute("select count(*) from pg_prepared_xacts").fetchone() == (0,)


def test_a_task_failing_after_prepare_and_retried_writes_its_rows_once(spark, nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        _sink(conn, "sink_retry")
    _frame(spark, 400).write.format("nyala").options(
        **_options(nyala_server), table="sink_retry", fail_after_prepare="0,2"
    ).mode("append").save()
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        assert conn.execute("select count(*), count(distinct id) from sink_retry").fetchone() == (
            400, 400,
        )  # fmt: skip
        assert conn.execute("select count(*) from pg_prepared_xacts").fetchone() == (0,)


def test_an_aborted_job_leaves_no_rows(spark, nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        _sink(conn, "sink_abort")
        conn.execute("insert into sink_abort values (5, 'taken', 0)")
    # Partition 3 writes id 5 again: its COPY fails (23505) on every attempt, so the job
    # aborts after the other partitions prepared their rows.
    frame = _frame(spark, 8, partitions=4)
    with pytest.raises(Exception, match="23505|duplicate key"):
        frame.write.format("nyala").options(**_options(nyala_server), table="sink_abort").mode(
            "append"
        ).save()
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        assert conn.execute("select id from sink_abort").fetchall() == [(5,)]
        assert conn.execute("select count(*) from pg_prepared_xacts").fetchone() == (0,)


def test_overwrite_replaces_the_rows_in_one_transaction(spark, nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        _sink(conn, "sink_over")
        conn.execute("insert into sink_over select g, 'old', 1 from generate_series(0, 2999) g")
    _frame(spark, 100).write.format("nyala").options(
        **_options(nyala_server), table="sink_over"
    ).mode("overwrite").save()
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        assert conn.execute("select count(*), min(host) from sink_over").fetchone() == (100, "h0")
        tables = conn.execute(
            "select count(*) from information_schema.tables where table_name like 'nyala_spark%'"
        ).fetchone()
        assert tables == (0,)


def test_errorifexists_and_ignore_as_options(spark, nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        _sink(conn, "sink_modes")
    write = _frame(spark, 10).write.format("nyala").options(**_options(nyala_server), table="sink_modes")
    write.option("save_mode", "errorifexists").mode("append").save()  # empty: writes
    with pytest.raises(Exception, match="already holds rows"):
        write.option("save_mode", "errorifexists").mode("append").save()
    write.option("save_mode", "ignore").mode("append").save()  # not empty: writes nothing
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        assert conn.execute("select count(*) from sink_modes").fetchone() == (10,)


def test_upsert_appends_with_on_conflict_do_update_as_postgres_does(
    spark, nyala_server, postgres_server
):
    """Rows 0-99 exist; the job writes 50-149 with upsert, one task failing after PREPARE:
    the table ends as PostgreSQL's INSERT ... ON CONFLICT (id) DO UPDATE leaves it."""
    frame = _frame(spark, 150).where("id >= 50")
    for dsn in (nyala_server.dsn, postgres_server.dsn):
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("drop table if exists sink_upsert")
            conn.execute("create table sink_upsert (id bigint primary key, host text,"
                         " amount numeric(10,2), note text default 'kept')")  # fmt: skip
            conn.execute("insert into sink_upsert select g, 'old', 1 from generate_series(0, 99) g")
    frame.write.format("nyala").options(
        **_options(nyala_server), table="sink_upsert", upsert="true", fail_after_prepare="1"
    ).mode("append").save()
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        with conn.cursor() as cur:
            cur.executemany(
                "insert into sink_upsert (id, host, amount) values (%s, %s, %s) on conflict (id)"
                " do update set host = excluded.host, amount = excluded.amount",
                [tuple(r) for r in frame.collect()],
            )
        expected = conn.execute("select * from sink_upsert order by id").fetchall()
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        assert conn.execute("select * from sink_upsert order by id").fetchall() == expected
        assert len(expected) == 150 and expected[49][1] == "old" and expected[50][1] == "h1"
        assert conn.execute("select count(*) from pg_prepared_xacts").fetchone() == (0,)
        tables = conn.execute(
            "select count(*) from information_schema.tables where table_name like 'nyala_spark%'"
        ).fetchone()
        assert tables == (0,)


def test_upsert_of_a_key_twice_in_one_job_fails_and_changes_nothing(spark, nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        _sink(conn, "sink_upsert_twice")
        conn.execute("insert into sink_upsert_twice values (1, 'old', 1)")
    frame = _frame(spark, 6, partitions=2).selectExpr("id % 3 as id", "host", "amount")
    with pytest.raises(Exception, match="CardinalityViolation"):  # psycopg's class for 21000
        frame.write.format("nyala").options(
            **_options(nyala_server), table="sink_upsert_twice", upsert="true"
        ).mode("append").save()
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        assert conn.execute("select * from sink_upsert_twice").fetchall() == [
            (1, "old", decimal.Decimal("1.00"))
        ]
        assert conn.execute("select count(*) from pg_prepared_xacts").fetchone() == (0,)
        tables = conn.execute(
            "select count(*) from information_schema.tables where table_name like 'nyala_spark%'"
        ).fetchone()
        assert tables == (0,)


def test_upsert_needs_a_primary_key_and_an_append(spark, nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        _sink(conn, "sink_upsert_bad")
    write = _frame(spark, 4).write.format("nyala").options(
        **_options(nyala_server), table="sink_upsert_bad", upsert="true"
    )
    with pytest.raises(Exception, match="overwrite"):
        write.mode("overwrite").save()
    with pytest.raises(Exception, match="primary key"):
        _frame(spark, 4).select("host", "amount").write.format("nyala").options(
            **_options(nyala_server), table="sink_upsert_bad", upsert="true"
        ).mode("append").save()
    with pytest.raises(Exception, match="true or false"):
        write.option("upsert", "maybe").mode("append").save()


def test_the_pipeline_example(spark, nyala_server):
    """spark/examples/pipeline.py: COPY in, roll up per hour and host, write back exactly once."""
    options = _options(nyala_server)
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists hourly")
        conn.execute("drop table if exists events")
        pipeline.load_events(conn, 20_000)
    for _ in range(2):  # a rerun replaces the hours, it does not add to them
        pipeline.rollup(spark, options)
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        expected = conn.execute(
            "select date_trunc('hour', ts) as hour, host, count(*), sum(bytes) from events"
            " group by 1, 2 order by 1, 2"
        ).fetchall()
        assert len(expected) == 24 * 8
        assert conn.execute("select * from hourly order by hour, host").fetchall() == expected
