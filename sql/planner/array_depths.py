"""Arrays of more than one dimension in DuckDB SQL.

PostgreSQL's ``int[]`` holds an array of any number of dimensions; DuckDB's ``INTEGER[]``
holds exactly one, and a list of lists cast to it fails (or, for text, becomes a list of
its sub-lists' texts).  A statement run with a nested list parameter is therefore
spelt again with each such parameter cast to as many levels as its value has, and
``x = ANY(array)`` over a nested array reads its elements, as PostgreSQL's does
(``array_dimensions`` answers ``cardinality`` and the other dimension functions).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

DT = exp.DataType.Type


def list_depth(value: object) -> int:
    """How many levels of lists ``value`` nests (PostgreSQL's sub-arrays are never NULL)."""
    depth = 0
    while type(value) is list:
        depth += 1
        if not value:
            break
        value = value[0]
    return depth


def nested_depths(values: Sequence[object]) -> tuple[int, ...] | None:
    """Each value's list depth, or None when no value nests lists."""
    depths = tuple(list_depth(value) if type(value) is list else 0 for value in values)
    return depths if any(depth > 1 for depth in depths) else None


def _array_depth(dtype: exp.DataType) -> int:
    depth = 0
    while dtype.this is DT.ARRAY and dtype.expressions:
        depth += 1
        dtype = dtype.expressions[0]
    return depth


def _is_quantifier(node: exp.Expr | None) -> bool:
    if isinstance(node, (exp.Any, exp.All)):
        return True
    return isinstance(node, exp.Anonymous) and node.name.lower() in ("any", "all")


def _quantified(node: exp.Expr) -> bool:
    holder = node.parent
    while isinstance(holder, exp.Paren):
        holder = holder.parent
    return _is_quantifier(holder)


def _flattened(node: exp.Expr, depth: int) -> exp.Expr:
    flat = node.copy()
    for _ in range(depth - 1):
        flat = exp.Anonymous(this="flatten", expressions=[flat])
    return flat


def flatten_quantified_arrays(ast: exp.Expr) -> None:
    """``x = ANY(a)`` where ``a`` is cast to a nested array: compare with its elements, in
    place (DuckDB compares ``x`` with the sub-arrays and refuses)."""
    for cast in list(ast.find_all(exp.Cast)):
        depth = _array_depth(cast.to)
        if depth > 1 and _quantified(cast):
            cast.replace(_flattened(cast, depth))


def deepened_sql(ast: exp.Expr, depths: Sequence[int]) -> str:
    """DuckDB SQL for ``ast`` (DuckDB SQL's tree, parameters numbered densely) with each
    ``CAST($n AS T[])`` cast to ``depths[n - 1]`` levels of arrays instead, and an uncast
    one in ``ANY(...)`` flattened (DuckDB infers its nested type from the value)."""
    ast = ast.copy()
    for param in list(ast.find_all(exp.Parameter)):
        inner = param.this
        if not (isinstance(inner, exp.Literal) and not inner.is_string):
            continue
        number = int(inner.name)
        depth = depths[number - 1] if number <= len(depths) else 0
        if depth < 2:
            continue
        cast = param.parent
        if not isinstance(cast, exp.Cast):
            if _quantified(param):
                param.replace(_flattened(param, depth))
            continue
        if _array_depth(cast.to) < 1:
            continue
        element = cast.to
        while element.this is DT.ARRAY and element.expressions:
            element = element.expressions[0]
        typed = element.copy()
        for _ in range(depth):
            typed = exp.DataType(this=DT.ARRAY, expressions=[typed], nested=True)
        cast.set("to", typed)
    flatten_quantified_arrays(ast)
    return ast.sql(dialect="duckdb")
