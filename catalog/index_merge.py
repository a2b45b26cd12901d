"""Committing an index built beside another transaction's: two CREATE INDEX on one table.

Both hold the table in SHARE mode, so both run at once (``ddl_locks``), and each
changes the table's entry in its own catalog view.  The one that commits second
would find the entry changed meanwhile and fail with 40001; instead, when both
changes only added indexes (with different names), its new indexes are put on
top of the committed entry, as PostgreSQL's two pg_index rows never meet.  A
write of the table in the transaction first takes the other's committed index
the same way (``Catalog.catch_up_indexes``), so it keeps that index in step;
rows it wrote by its own entry alone are never merged over (40001 as before).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from catalog.overlay import Overlay
from catalog.table import TableInfo


def merge_new_indexes(tables: Overlay[TableInfo], wrote: Callable[[TableInfo], bool]) -> None:
    """Rebase each table this transaction only added indexes to, and did not write
    (``wrote``), onto the committed entry, when another transaction's commit meanwhile only
    added indexes too (the caller holds the catalog lock)."""
    for name, seen in list(tables.seen.items()):
        current = tables.base.get(name)
        mine = tables.changes.get(name)
        if seen is None or current is None or current is seen or not isinstance(mine, TableInfo):
            continue
        if wrote(seen):
            continue
        known = {index.index_id for index in seen.indexes}
        added = tuple(index for index in mine.indexes if index.index_id not in known)
        if (
            not added
            or not _only_added_indexes(seen, mine)
            or not _only_added_indexes(seen, current)
        ):
            continue
        taken = {index.name for index in current.indexes}
        if any(index.name in taken for index in added):
            continue
        tables.changes[name] = dataclasses.replace(current, indexes=(*current.indexes, *added))
        tables.seen[name] = current


def _only_added_indexes(before: TableInfo, after: TableInfo) -> bool:
    """Whether ``after`` is ``before`` with indexes appended and nothing else changed."""
    count = len(before.indexes)
    return (
        after.indexes[:count] == before.indexes
        and dataclasses.replace(after, indexes=before.indexes) == before
    )
