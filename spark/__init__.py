"""nyala for Spark: a PySpark data source that reads and writes tablet by tablet, in Arrow.

``spark.read.format("nyala")`` plans one Spark task per tablet left after
pruning for the filters Spark pushes, and every task reads at one MVCC
snapshot fixed on the driver; ``df.write.format("nyala")`` writes each task's
rows with ``COPY ... (FORMAT arrow)`` in a prepared transaction that the
driver commits (or rolls back) with the whole job.  This package is the only
code that imports pyspark, and it reaches the server through the PostgreSQL
wire protocol (psycopg) like any client: it never imports the engine.

Modules:

    options     the data source options: connection, table or query, snapshot
    wire        connections, and COPY's Arrow stream read as RecordBatches
    filters     Spark's pushed filters as SQL, and which of them Spark must still apply
    reader      partitions (one per tablet) and the tasks that read them
    writer      exactly-once writes through two-phase commit
    source      NyalaDataSource, what ``spark.dataSource.register`` takes
    daemon      Spark's worker daemon importing the installed PySpark (no zip recompiles)
    worker_gc   reused Python workers freeze their imports out of the per-task gc.collect()

Use::

    from spark import register
    register(spark)            # the data source, and Python filter pushdown on
    df = spark.read.format("nyala").option("table", "events").load()

Importing the package imports no PySpark (``NyalaDataSource`` loads on
first use), so ``python -m spark.daemon`` can choose where PySpark comes from.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NyalaDataSource", "register"]


def __getattr__(name: str) -> Any:
    if name == "NyalaDataSource":
        from spark.source import NyalaDataSource

        return NyalaDataSource
    raise AttributeError(f"module 'spark' has no attribute {name!r}")


def register(session: Any) -> None:
    """Register the ``nyala`` format on a SparkSession and turn on Python filter pushdown,
    which PySpark requires of a data source that takes filters."""
    from spark.source import NyalaDataSource

    session.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    session.dataSource.register(NyalaDataSource)
