"""timetz results: sent as DuckDB's text of them, the zone kept.

DuckDB hands a ``TIME WITH TIME ZONE`` column to Arrow as a ``time64``, which has no
zone, so ``'12:30+02'::timetz`` would reach the client as ``12:30:00``.  Its text
(``12:30:00+02``) is PostgreSQL's spelling, so each timetz output column is cast to
VARCHAR in the query and described as timetz (1266); ``server.pgtypes`` reads that text
back for the binary form (timetz_send).
"""

from __future__ import annotations

from sqlglot import exp


def spell_zoned_times(ast: exp.Expr, zoned: dict[int, str]) -> None:
    """Cast the output columns at the positions ``zoned`` names (to their names) to text."""
    if not zoned:
        return
    select = ast
    while isinstance(select, (exp.SetOperation, exp.Subquery)):
        select = select.this
    if not isinstance(select, exp.Select):
        return
    for position, projection in enumerate(select.expressions):
        name = zoned.get(position)
        if name is None:
            continue
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        text = exp.cast(inner.copy(), exp.DataType.build("VARCHAR"))
        if isinstance(projection, exp.Alias):
            inner.replace(text)
        else:
            projection.replace(exp.alias_(text, name, quoted=True))
