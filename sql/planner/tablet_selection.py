"""Tablet selection: ``FROM t PARTITION (tablet_id, ...)`` reads only the tablets named.

MySQL's partition-selection syntax, with nyala's tablets as the partitions
and their ids (``nyala_tablets.tablet_id``, or ``EXPLAIN (FORMAT JSON)``'s
``Tablets``) as the names.  It is how a parallel reader (the Spark data
source) gives each task one tablet of a scan: the selection is intersected
with what partition pruning leaves, so the WHERE clause still prunes and
pushes as usual.  Time travel goes after it:
``FROM t PARTITION (3) FOR SYSTEM_TIME AS OF '...'``.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.table import TableInfo
from storage.data_type import TabletId
from storage.errors import InvalidParameterValue, UndefinedObject


def selected_tablets(node: exp.Table, table: TableInfo) -> tuple[TabletId, ...] | None:
    """The tablets a table reference is restricted to, or None when it names none."""
    partition = node.args.get("partition")
    if partition is None:
        return None
    ids: list[TabletId] = []
    for expression in partition.expressions:
        if not (isinstance(expression, exp.Literal) and not expression.is_string
                and expression.this.isdigit()):  # fmt: skip
            raise InvalidParameterValue(
                f"PARTITION selection takes tablet ids, not {expression.sql(dialect='postgres')}"
            )
        tablet_id = TabletId(int(expression.this))
        if tablet_id not in table.tablet_ids:
            raise UndefinedObject(f'tablet {tablet_id} of relation "{table.name}" does not exist')
        ids.append(tablet_id)
    return tuple(ids)
