"""CREATE INDEX CONCURRENTLY: an index built while writers go on, in two transactions.

As PostgreSQL's.  The first transaction names the index in the catalog, not
yet valid and empty, and commits: every writer planned from then on keeps it
in step, and reads do not use it.  The second waits for the writers that were
there before (they do not know the index), then writes the entries of every
row at a snapshot taken after them, and marks the index valid.  A row a
writer changes meanwhile is that writer's to index: the build locks each row
FOR SHARE before writing its entry, so a change waits for the build, or the
build finds the row changed since its snapshot and leaves it; an entry a
writer already wrote is not written twice.  The table is held in SHARE UPDATE
EXCLUSIVE mode, which neither readers nor writers wait for.  A failure (a
duplicate in a unique index, a deadlock, a cancel) leaves the index invalid,
as PostgreSQL's does: writers keep it, reads ignore it, DROP INDEX removes it.
"""

from __future__ import annotations

import dataclasses

import pyarrow as pa
from sqlglot import exp

from catalog.catalog import Catalog
from catalog.table import TableInfo
from sql.common.names import table_name
from sql.common.result import Result
from sql.ddl import indexes
from sql.execution import index_writes
from storage.data_type import TabletId
from storage.predicate import ScanSpec
from storage.row_lock_mode import RowLockMode
from storage.transaction import Transaction


def is_concurrent(ast: exp.Expr) -> bool:
    """Whether ``ast`` is ``CREATE INDEX CONCURRENTLY``."""
    return (
        isinstance(ast, exp.Create)
        and str(ast.args.get("kind") or "").upper() == "INDEX"
        and bool(ast.args.get("concurrently"))
    )


def target(ast: exp.Create) -> str:
    """The table the index is on."""
    node = ast.this
    assert isinstance(node, exp.Index), "CREATE INDEX plans carry an Index"
    return table_name(node.args["table"])


def declare(ast: exp.Create, catalog: Catalog, txn: Transaction) -> tuple[Result, str | None]:
    """The first transaction: name the index, invalid and empty.  Returns the statement's
    result and the new index's name (None when ``IF NOT EXISTS`` found one)."""
    before = {i.name for i in catalog.get_table(target(ast)).indexes}
    result = indexes.create_index(ast, catalog, txn, concurrently=True)
    added = [i.name for i in catalog.get_table(target(ast)).indexes if i.name not in before]
    return result, added[0] if added else None


def build(catalog: Catalog, table: str, name: str, txn: Transaction) -> None:
    """The second transaction: wait for the older writers, fill the index, mark it valid."""
    txn.repeatable_read = False  # rows changed meanwhile are skipped, never a 40001
    catalog.wait_for_writers(catalog.get_table(table), txn)
    txn.refresh_snapshot()
    info = catalog.get_table(table)
    index = info.index_named(name)
    assert index is not None, "the first transaction named the index"
    only = dataclasses.replace(info, indexes=(index,))
    spec = ScanSpec(projection=info.schema.column_ids)
    names = [c.name for c in info.schema.columns]
    keys = [str(c.id) for c in info.schema.key_columns]
    for tablet_id in info.tablet_ids:
        for batch in txn.scan(tablet_id, spec):
            if batch.num_rows:
                _index_rows(only, txn, tablet_id, batch, names, keys)
    catalog.validate_index(name)


def _index_rows(
    table: TableInfo,
    txn: Transaction,
    tablet_id: TabletId,
    batch: pa.RecordBatch,
    names: list[str],
    keys: list[str],
) -> None:
    changed: list[int] = []
    txn.lock(
        tablet_id,
        batch.select(keys),
        RowLockMode.SHARE,
        conflicts=changed,
        command="CREATE INDEX",
    )
    rows = pa.Table.from_batches([batch]).rename_columns(names)
    if changed:
        keep = [True] * batch.num_rows
        for position in changed:
            keep[position] = False
        rows = rows.filter(pa.array(keep, pa.bool_()))
    index_writes.add_missing_entries(table, txn, rows)
