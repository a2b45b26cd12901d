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

With the ``split_rows`` option (default 0: off), a tablet holding more rows
is read as several partitions, ranges of its first primary-key column (an
integer, numeric, date or timestamp) cutting that column's span at the job's
instant evenly; each task's range is a primary-key bound the scan seeks
to, so the pieces together read the tablet once.  Sizing the tablets costs the
driver one ``count, min, max`` over each tablet's key column, hence opt-in.

A task retried reads the same rows again, because the instant is part of its
partition; a job is one consistent table however long it runs, as long as it
finishes within the server's history window (``history_max_age_s``).
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, Filter, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType, TimestampNTZType

from spark import filters as spark_filters
from spark.options import Options, quote_identifier, quote_literal
from spark.wire import connect, copy_out_batches
from spark.worker_gc import freeze_imports

# Key types whose span divides evenly, and whose values print as literals that compare
# exactly as the stored values do.
_SPLITTABLE = ("smallint", "integer", "bigint", "numeric", "date", "timestamp")


@dataclass
class TabletPartition(InputPartition):
    """One task's share: a tablet of the table (None: the whole query) at one instant."""

    tablet_id: int | None
    as_of: str
    low: str | None = None
    """SQL conditions on the first key column bounding this piece of a split tablet."""
    high: str | None = None

    def __post_init__(self) -> None:
        super().__init__((self.tablet_id, self.low, self.high))

    def bounds(self) -> list[str]:
        return [bound for bound in (self.low, self.high) if bound is not None]


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
            scan = next(
                node for node in plan[0]["Plan"]["Plans"] if node["Node Type"] == "Tablet Scan"
            )
            key = self._first_key_column(conn) if self.options.split_rows > 0 else None
            partitions: list[InputPartition] = []
            for tablet in scan["Tablets"]:
                pieces = self._split(conn, key, tablet, as_of) if key is not None else []
                partitions.extend(pieces or [TabletPartition(tablet, as_of)])
        return partitions

    def _first_key_column(self, conn: Any) -> str | None:
        """The first primary-key column, if its values print as literals that split exactly."""
        row = conn.execute(
            "SELECT indkey FROM pg_index WHERE indrelid = %s::regclass AND indisprimary",
            (self.options.table,),
        ).fetchone()
        if row is None:
            return None
        first = int(str(row[0]).strip("{}[]").replace(",", " ").split()[0])
        name, kind = conn.execute(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
            " WHERE attrelid = %s::regclass AND attnum = %s",
            (self.options.table, first),
        ).fetchone()
        return str(name) if str(kind).startswith(_SPLITTABLE) else None

    def _split(self, conn: Any, key: str, tablet: int, as_of: str) -> list[InputPartition]:
        """Key ranges of one tablet of more than ``split_rows`` rows (none: read it whole)."""
        source = (
            f"{self.options.relation()} PARTITION ({int(tablet)})"
            f" FOR SYSTEM_TIME AS OF {quote_literal(as_of)}"
        )
        where = spark_filters.where_clause(self.pushed)
        column = quote_identifier(key)
        rows, low, high = conn.execute(
            f"SELECT count(*), min({column}), max({column}) FROM {source}{where}"
        ).fetchone()
        pieces = -(-rows // self.options.split_rows)
        if pieces < 2 or low == high:
            return []
        # Cut the key's span evenly: one pass over the key column, no sort, so planning a
        # big table stays cheap; keys far from uniform give uneven (never wrong) ranges.
        cuts = [low + (high - low) * i // pieces for i in range(1, pieces)]
        edges: list[str | None] = [None, *dict.fromkeys(map(_key_literal, cuts)), None]
        return [
            TabletPartition(
                tablet,
                as_of,
                None if low is None else f"{column} >= {low}",
                None if high is None else f"{column} < {high}",
            )
            for low, high in zip(edges, edges[1:], strict=False)
        ]

    def select(self, tablet_id: int | None, as_of: str | None, bounds: Sequence[str] = ()) -> str:
        """The SELECT one task runs (no tablet and no instant: the one EXPLAIN plans)."""
        columns = ", ".join(quote_identifier(f.name) for f in self.schema.fields) or "1"
        source = self.options.relation()
        if tablet_id is not None:
            source += f" PARTITION ({int(tablet_id)})"
        if as_of is not None and self.options.table is not None:
            source += f" FOR SYSTEM_TIME AS OF {quote_literal(as_of)}"
        return f"SELECT {columns} FROM {source}" + spark_filters.where_clause(
            [*self.pushed, *bounds]
        )

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, TabletPartition), "partitions() made it"
        freeze_imports()
        target = to_arrow_schema(self.schema, timezone="UTC")
        with connect(self.options, autocommit=False) as conn:
            if self.options.table is None:
                conn.execute(f"SET LOCAL nyala.read_timestamp = {quote_literal(partition.as_of)}")
            query = self.select(partition.tablet_id, partition.as_of, partition.bounds())
            for batch in copy_out_batches(conn, query):
                yield _cast(batch, target)
            conn.rollback()


def _key_literal(value: object) -> str:
    if isinstance(value, int | decimal.Decimal) and not isinstance(value, bool):
        return str(value)
    return quote_literal(str(value))


def _cast(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    arrays = [
        column if column.type == field.type else column.cast(field.type)
        for column, field in zip(batch.columns, target, strict=True)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=target)
