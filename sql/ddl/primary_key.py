"""ALTER TABLE ... ADD [CONSTRAINT name] PRIMARY KEY (cols) on a table created without a key.

pg_dump and ``pgbench -i`` create tables bare, load them, then add the key.
A Kudu tablet's key is fixed, so the rows are copied, in one transaction at
one snapshot, into new tablets keyed by those columns (``Catalog.rekey_table``
swaps them in only once that has committed).  The new tablets' own key check
finds duplicates (23505); NULLs in a key column are 23502, as in PostgreSQL.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.catalog import Catalog
from catalog.table import TableInfo
from sql.common.names import identifier_name
from sql.ddl.tables import KEY_FORBIDDEN
from storage.errors import (
    DuplicateColumn,
    FeatureNotSupported,
    InvalidTableDefinition,
    NotNullViolation,
)
from storage.predicate import ScanSpec
from storage.schema import ColumnSchema


def add_primary_key(
    table: TableInfo,
    key: exp.PrimaryKey,
    constraint_name: str | None,
    catalog: Catalog,
    *,
    in_block: bool,
) -> None:
    """Rewrite ``table`` keyed by the columns ``key`` names (all or nothing)."""
    if in_block:
        raise FeatureNotSupported(
            "ALTER TABLE ... ADD PRIMARY KEY inside a transaction block is not supported",
            hint="Run it on its own: the table is rewritten and committed at once.",
        )
    names = [
        identifier_name(node.this if isinstance(node, exp.Ordered) else node)
        for node in key.expressions
    ]
    if len(set(names)) != len(names):
        raise DuplicateColumn("column appears twice in primary key constraint")
    for column in table.columns:
        if column.name in names and column.type.kind in KEY_FORBIDDEN:
            raise InvalidTableDefinition(
                f'column "{column.name}" of type {column.type.pg_name()} cannot be part of a '
                "primary key"
            )
    name = constraint_name or f"{table.name}_pkey"
    catalog.rekey_table(table, names, name, lambda new: _copy_rows(catalog, table, new, name))


def _copy_rows(catalog: Catalog, old: TableInfo, new: TableInfo, constraint_name: str) -> None:
    key_columns: list[ColumnSchema] = list(new.schema.key_columns)
    spec = ScanSpec(projection=new.schema.column_ids)
    fields = [str(c) for c in new.schema.column_ids]
    txn = catalog.engine.begin()
    try:
        for tablet_id in old.tablet_ids:
            for batch in txn.scan(tablet_id, spec):
                for column in key_columns:
                    if batch.column(fields.index(str(column.id))).null_count:
                        raise NotNullViolation(
                            f'column "{column.name}" of relation "{old.name}" contains null values'
                        )
                if batch.num_rows:
                    txn.insert(new.tablet_ids[0], batch, constraint_name=constraint_name)
        txn.commit()
    except BaseException:
        txn.rollback()
        raise
