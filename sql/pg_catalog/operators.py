"""pg_operator: the binary operators nyala answers as PostgreSQL 15 does, over its types.

Built from the planner's measured signature table (``sql.planner.pg_signatures``),
with PostgreSQL's OIDs, so ``oprcom``/``oprnegate`` links and ``oprcode`` read as there.
"""

from __future__ import annotations

from collections.abc import Iterator

from sql.pg_catalog.sequences import Row
from sql.planner.pg_signatures import signatures

PG_CATALOG_OID = 11
SUPERUSER_OID = 10
# The selectivity estimators PostgreSQL names for equality and ordering operators.
_ESTIMATORS = {
    "=": ("eqsel", "eqjoinsel"),
    **dict.fromkeys(("<", "<=", ">", ">="), ("scalarltsel", "scalarltjoinsel")),
    "<>": ("neqsel", "neqjoinsel"),
}


def rows() -> Iterator[Row]:
    for op in signatures().operators:
        same_type = op.left_type == op.right_type
        rest, join = _ESTIMATORS.get(op.name, ("-", "-"))
        yield Row(
            "pg_operator",
            dict(
                oid=op.oid,
                oprname=op.name,
                oprnamespace=PG_CATALOG_OID,
                oprowner=SUPERUSER_OID,
                oprkind="b",
                oprcanmerge=op.name == "=" and same_type,
                oprcanhash=op.name == "=" and same_type,
                oprleft=op.left_type,
                oprright=op.right_type,
                oprresult=op.result_type,
                oprcom=op.commutator,
                oprnegate=op.negator,
                oprcode=op.function,
                oprrest=rest,
                oprjoin=join,
            ),
        )
