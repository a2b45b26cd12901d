"""NyalaDataSource: the ``nyala`` format, what ``spark.dataSource.register`` takes."""

from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceWriter
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from spark.options import Options
from spark.reader import NyalaReader
from spark.wire import connect, copy_out_schema
from spark.worker_gc import freeze_imports
from spark.writer import NyalaWriter


class NyalaDataSource(DataSource):
    """``spark.read.format("nyala")`` and ``df.write.format("nyala")``."""

    @classmethod
    def name(cls) -> str:
        return "nyala"

    def __init__(self, options: dict[str, str]) -> None:
        freeze_imports()
        super().__init__(options)
        self.parsed = Options.parse(options)

    def schema(self) -> StructType:
        """The table's (or query's) columns, as the server's Arrow COPY describes them."""
        freeze_imports()
        with connect(self.parsed) as conn:
            arrow = copy_out_schema(conn, f"SELECT * FROM {self.parsed.relation()} WHERE false")
        return from_arrow_schema(arrow, prefer_timestamp_ntz=True)

    def reader(self, schema: StructType) -> DataSourceReader:
        freeze_imports()
        return NyalaReader(self.parsed, schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        freeze_imports()
        return NyalaWriter(self.parsed, schema, overwrite)
