"""pg_cast: the casts between nyala's types that behave as PostgreSQL 15's do.

Built from the planner's measured signature table (``sql.planner.pg_signatures``):
a cast is listed when nyala gives PostgreSQL's result, or its SQLSTATE, for it.
"""

from __future__ import annotations

from collections.abc import Iterator

from sql.pg_catalog.sequences import Row
from sql.planner.pg_signatures import signatures


def rows() -> Iterator[Row]:
    for cast in signatures().casts:
        yield Row(
            "pg_cast",
            dict(
                oid=cast.oid,
                castsource=cast.source_type,
                casttarget=cast.target_type,
                castfunc=cast.function,
                castcontext=cast.context,
                castmethod=cast.method,
            ),
        )
