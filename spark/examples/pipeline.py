"""The pipeline: events land in nyala through COPY, Spark rolls them up per hour and host, exactly once.

1. ``load_events`` writes raw web-server events into ``events`` (hashed by
   host) with ``COPY ... FROM STDIN (FORMAT arrow)``.
2. ``rollup`` reads ``events`` with the nyala data source (one task per
   tablet, every task at one snapshot, only the events at or after ``since``),
   counts events and bytes per hour and host, and writes ``hourly`` back
   through the data source: every task prepares its rows and the job commits
   them all, so a retried task or a rerun never counts an hour twice.

Run against a server: ``python -m spark.examples.pipeline --port 5433``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io

import psycopg
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark import register

EVENTS_DDL = (
    "create table if not exists events (host text, ts timestamp, id bigint, path text,"
    " bytes bigint, primary key (host, ts, id)) partition by hash (host) partitions 4"
)
HOURLY_DDL = (
    "create table if not exists hourly (hour timestamp, host text, events bigint,"
    " bytes bigint, primary key (hour, host))"
)
START = dt.datetime(2024, 5, 1)


def load_events(conn: psycopg.Connection, rows: int, hosts: int = 8) -> None:
    """Write ``rows`` synthetic events, spread over a day, with one Arrow COPY."""
    conn.execute(EVENTS_DDL)
    conn.execute(HOURLY_DDL)
    table = pa.table({
        "host": [f"web-{i % hosts}" for i in range(rows)],
        "ts": pa.array([START + dt.timedelta(seconds=i * 86_400 // rows) for i in range(rows)],
                       pa.timestamp("us")),
        "id": pa.array(range(rows), pa.int64()),
        "path": [f"/page/{i % 13}" for i in range(rows)],
        "bytes": pa.array([200 + i % 1000 for i in range(rows)], pa.int64()),
    })  # fmt: skip
    stream = io.BytesIO()
    with pa.ipc.new_stream(stream, table.schema) as writer:
        writer.write_table(table, max_chunksize=65_536)
    with conn.cursor().copy("copy events from stdin (format arrow)") as copy:
        copy.write(stream.getvalue())


def rollup(spark: SparkSession, options: dict[str, str], since: dt.datetime = START) -> DataFrame:
    """Read the events since ``since``, count them per hour and host, write ``hourly``."""
    events = (
        spark.read.format("nyala").options(**options).option("table", "events").load()
        .where(F.col("ts") >= F.lit(since).cast("timestamp_ntz"))
    )  # fmt: skip
    hourly = events.groupBy(
        F.date_trunc("hour", F.col("ts")).cast("timestamp_ntz").alias("hour"), F.col("host")
    ).agg(F.count("*").alias("events"), F.sum("bytes").alias("bytes"))
    hourly.write.format("nyala").options(**options).option("table", "hourly").mode(
        "overwrite"
    ).save()
    return hourly


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default="5433")
    parser.add_argument("--user", default="nyala")
    parser.add_argument("--dbname", default="nyala")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    options = {"host": args.host, "port": args.port, "user": args.user, "dbname": args.dbname}
    with psycopg.connect(autocommit=True, **options) as conn:  # type: ignore[arg-type]
        load_events(conn, args.rows)
    spark = SparkSession.builder.master(args.master).appName("nyala-pipeline").getOrCreate()
    register(spark)
    rollup(spark, options)
    with psycopg.connect(autocommit=True, **options) as conn:  # type: ignore[arg-type]
        for row in conn.execute("select * from hourly order by hour, host limit 5"):
            print(*row)
    spark.stop()


if __name__ == "__main__":
    main()
