"""Copying a table's rows into its rewritten definition (ADD PRIMARY KEY, ALTER COLUMN TYPE).

Kudu cannot change a tablet's key or a column's stored type in place, so
these statements fill new tablets (``Catalog.rewrite_table``): once every other
transaction with uncommitted writes on the table has ended (``wait_for_writers``; their
later statements would write the old tablets), every live row is read at one snapshot
and written in one transaction, each column cast to its
new type (a widening, so no value changes), and the new key's own checks
find duplicates (23505); a NULL in a key column is 23502, as in PostgreSQL.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from catalog.catalog import Catalog
from catalog.table import TableInfo
from storage.data_type import ColumnId
from storage.errors import CheckViolation, NotNullViolation
from storage.predicate import ScanSpec
from storage.transaction import Transaction


def copy_rows(catalog: Catalog, old: TableInfo, new: TableInfo) -> None:
    """Write every row of ``old`` into ``new``'s tablets and commit (all or nothing)."""
    spec = ScanSpec(projection=new.schema.column_ids)
    schema = pa.schema([(str(c.id), c.type.arrow_type) for c in new.schema.columns])
    key_fields = [str(c.id) for c in new.schema.key_columns]
    constraint_name = new.primary_key_name or f"{new.name}_pkey"
    txn = catalog.engine.begin()
    try:
        catalog.wait_for_writers(old, txn)
        for tablet_id in old.tablet_ids:
            for batch in txn.scan(tablet_id, spec, latest=True):
                if not batch.num_rows:
                    continue
                for field in key_fields:
                    if batch.column(batch.schema.get_field_index(field)).null_count:
                        column = new.schema.column(int(field))
                        raise NotNullViolation(
                            f'column "{column.name}" of relation "{old.name}" contains null values'
                        )
                _insert(txn, new, batch.cast(schema), constraint_name)
        txn.commit()
    except BaseException:
        txn.rollback()
        raise


def _insert(txn: Transaction, new: TableInfo, batch: pa.RecordBatch, constraint_name: str) -> None:
    """Write ``batch`` into ``new``'s tablet, or routed to its partitions' tablets."""
    layout = new.partition_schema
    if layout is None:
        txn.insert(new.tablet_ids[0], batch, constraint_name=constraint_name)
        return
    columns = {ColumnId(int(name)): batch.column(i) for i, name in enumerate(batch.schema.names)}
    index = layout.route(new.schema, new.partitions, columns)
    if (index < 0).any():
        raise CheckViolation(
            f'no partition of relation "{new.name}" found for row',
            detail="The row's key falls outside every range partition of the table.",
        )
    for position in np.unique(index):
        rows = batch.filter(pa.array(index == position))
        txn.insert(new.tablet_ids[position], rows, constraint_name=constraint_name)
