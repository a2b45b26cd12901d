"""Reads: one input partition per tablet left after pruning, every task at one snapshot.

On the driver, ``pushFilters`` turns Spark's filters into a WHERE clause
(``filters``) and ``partitions`` asks the server, with ``EXPLAIN (FORMAT
JSON)``, which tablets a scan with that WHERE clause reads; it also fixes the
instant every task reads at (``as_of``, or the server's ``now()``).  Each task
then reads its tablet with ``FROM t PARTITION (id) FOR SYSTEM_TIME AS OF
'<instant>'`` through ``COPY ... TO STDOUT (FORMAT arrow)`` and hands Spark the
record batches as they arrive, cast to the Spark schema's Arrow types.  Only the
schema's columns are read: give ``.schema(...)`` or a ``query`` to read fewer
(PySpark's Python data sources are not told which columns a query uses).

A task retried reads the same rows again, because the instant is part of its
partition; a job is one consistent table however long it runs, as long as it
finishes within the server's history window (``history_max_age_s``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, Filter, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType, TimestampNTZType

from spark import filters as spark_filters
from spark.options import Options, quote_identifier, quote_literal
from spark.wire import connect, copy_out_batches


@dataclass
class TabletPartition(InputPartition):
    """One task's share: a tablet of the table (None: the whole query) at one instant."""

    tablet_id: int | None
    as_of: str

    def __post_init__(self) -> None:
        super().__init__(self.tablet_id)


class NyalaReader(DataSourceReader):
    """Plans tablets on the driver, reads one in each task."""

    def __init__(self, options: Options, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        self.pushed: list[str] = []

    def pushFilters(self, filters: list[Filter]) -> list[Filter]:  # noqa: N802 (PySpark's name)
        naive = [f.name for f in self.schema.fields if isinstance(f.dataType, TimestampNTZType)]
        self.pushed, kept = spark_filters.split(filters, naive)
        return kept

    def partitions(self) -> Sequence[InputPartition]:
        with connect(self.options) as conn:
            as_of = self.options.as_of
            if as_of is None:
                (now,) = conn.execute("SELECT now()").fetchone()  # type: ignore[misc]
                as_of = now.isoformat()
            if self.options.table is None:
                return [TabletPartition(None, as_of)]
            (document,) = conn.execute(  # type: ignore[misc]
                "EXPLAIN (FORMAT JSON) " + self.select(None, None)
            ).fetchone()
        plan = document if isinstance(document, list) else json.loads(document)
        scan = next(node for node in plan[0]["Plan"]["Plans"] if node["Node Type"] == "Tablet Scan")
        return [TabletPartition(tablet, as_of) for tablet in scan["Tablets"]]

    def select(self, tablet_id: int | None, as_of: str | None) -> str:
        """The SELECT one task runs (no tablet and no instant: the one EXPLAIN plans)."""
        columns = ", ".join(quote_identifier(f.name) for f in self.schema.fields) or "1"
        source = self.options.relation()
        if tablet_id is not None:
            source += f" PARTITION ({int(tablet_id)})"
        if as_of is not None and self.options.table is not None:
            source += f" FOR SYSTEM_TIME AS OF {quote_literal(as_of)}"
        return f"SELECT {columns} FROM {source}" + spark_filters.where_clause(self.pushed)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, TabletPartition), "partitions() made it"
        target = to_arrow_schema(self.schema, timezone="UTC")
        with connect(self.options, autocommit=False) as conn:
            if self.options.table is None:
                conn.execute(f"SET LOCAL nyala.read_timestamp = {quote_literal(partition.as_of)}")
            for batch in copy_out_batches(conn, self.select(partition.tablet_id, partition.as_of)):
                yield _cast(batch, target)
            conn.rollback()


def _cast(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    arrays = [
        column if column.type == field.type else column.cast(field.type)
        for column, field in zip(batch.columns, target, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=target)
