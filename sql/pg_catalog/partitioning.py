"""A table's partitioning as the DDL that makes it, for psql's ``\\d`` and ``pg_get_partkeydef``."""

from __future__ import annotations

from catalog.table import TableInfo
from sql.common.names import quote_ident


def partitioning_clause(table: TableInfo) -> str | None:
    """The table's partitioning in the DDL that makes it (Impala's spelling), for ``\\d``:
    ``PARTITION BY HASH (id) PARTITIONS 4, RANGE (ts) (PARTITION 1 <= VALUES < 10, ...)``."""
    partitioning = table.partition_schema
    if partitioning is None or partitioning.tree is not None:
        return None  # PostgreSQL's own partitioning shows as psql's "Partition key"
    names = {c.id: quote_ident(c.name) for c in table.schema.columns}
    levels = [
        f"HASH ({', '.join(names[c] for c in level.column_ids)}) PARTITIONS {level.buckets}"
        for level in partitioning.hash_levels
    ]
    if partitioning.range_column_ids is not None:
        ranges = list(dict.fromkeys(p.range for p in table.partitions if p.range is not None))
        listed = ", ".join(f"PARTITION {bounds.describe()}" for bounds in ranges)
        columns = ", ".join(names[c] for c in partitioning.range_column_ids)
        levels.append(f"RANGE ({columns}) ({listed})" if listed else f"RANGE ({columns})")
    return "PARTITION BY " + ", ".join(levels)
