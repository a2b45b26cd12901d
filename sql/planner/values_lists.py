"""VALUES lists as PostgreSQL reads them: a table whose columns are column1, column2, ...

A VALUES list may stand wherever a query may (a statement, an operand of UNION, an
IN list's subquery) and in FROM.  sqlglot's ``qualify`` only reads it in FROM, and
names its columns ``_col_0``; so every VALUES list becomes one in FROM, aliased as
PostgreSQL names it (``"*VALUES*"`` with columns ``column1`` ... unless the query
names them), with its ORDER BY and LIMIT moved onto the SELECT that reads it.
"""

from __future__ import annotations

from sqlglot import exp

from sql.common.array_input import parse_array, shape
from storage.errors import FeatureNotSupported

DT = exp.DataType.Type
_SELECT_ARGS = ("order", "limit", "offset")


def _width(values: exp.Values) -> int:
    rows = values.expressions
    if not rows:
        return 0
    first = rows[0]
    return len(first.expressions) if isinstance(first, exp.Tuple) else 1


def _name_columns(values: exp.Values) -> None:
    alias = values.args.get("alias")
    if alias is None or (alias.name == "_values" and not alias.this.quoted):
        # sqlglot's own name for an unaliased VALUES
        alias = exp.TableAlias(this=exp.to_identifier("*VALUES*", quoted=True))
        values.set("alias", alias)
    if not alias.columns:
        alias.set("columns", [exp.to_identifier(f"column{i + 1}") for i in range(_width(values))])


def as_select(values: exp.Values) -> exp.Select:
    """``VALUES ...`` as ``SELECT * FROM (VALUES ...) AS "*VALUES*"(column1, ...)``."""
    moved = {key: values.args.pop(key) for key in _SELECT_ARGS if values.args.get(key)}
    values.set("alias", None)
    _name_columns(values)
    select = exp.select("*").from_(values)
    for key, node in moved.items():
        select.set(key, node)
    return select


def shape_values(ast: exp.Expr) -> exp.Expr:
    """Every VALUES list in ``ast`` read from FROM with PostgreSQL's column names; returns the
    new root when the statement itself is a VALUES list."""
    for values in list(ast.find_all(exp.Values)):
        if isinstance(values.parent, (exp.From, exp.Join)) or (
            values.parent is not None and values.args.get("alias") is not None
        ):
            _name_columns(values)
            type_untyped_literals(values)
            continue
        parent = values.parent
        type_untyped_literals(values)
        if values is ast:
            ast = as_select(values)
        elif isinstance(parent, exp.In) and len(parent.expressions) == 1:
            parent.set("expressions", [])
            parent.set("query", exp.Subquery(this=as_select(values)))
        else:
            placeholder = exp.Null()
            values.replace(placeholder)
            placeholder.replace(as_select(values))
    return ast


_OWN_TYPES = (DT.JSON, DT.JSONB, DT.ARRAY)
"""Column types whose untyped literals DuckDB would not read as PostgreSQL does: a document
stays unnormalised text, ``'{}'`` is no DuckDB list."""


def type_untyped_literals(values: exp.Values) -> None:
    """Give each untyped string literal of a VALUES column the json, jsonb or array type the
    column's other rows cast to, as PostgreSQL resolves an unknown-typed literal there; an
    empty array takes the column's dimensions (DuckDB's lists have a fixed depth)."""
    rows = [row.expressions if isinstance(row, exp.Tuple) else [row] for row in values.expressions]
    for column in range(_width(values)):
        cells = [row[column] for row in rows if column < len(row)]
        types = {c.to.sql() for c in cells if isinstance(c, exp.Cast)}
        to = next((c.to for c in cells if isinstance(c, exp.Cast)), None)
        if len(types) != 1 or to is None or to.this not in _OWN_TYPES:
            continue
        depth = _literal_depth(cells) if to.this is DT.ARRAY else None
        for cell in cells:
            if isinstance(cell, exp.Literal) and cell.is_string:
                cell.replace(_typed(cell, to, depth))


def _literal_depth(cells: list[exp.Expr]) -> int | None:
    """The dimensions of the column's array literals (``'{{1,2}}'::int[]``: 2), when they
    all have the same; None when some typed cell is no literal."""
    depths = set()
    for cell in cells:
        if isinstance(cell, exp.Cast):
            if not (isinstance(cell.this, exp.Literal) and cell.this.is_string):
                return None
            parsed = parse_array(cell.this.name)
            if parsed:
                depths.add(len(shape(parsed)))
    return depths.pop() if len(depths) == 1 else None


def _typed(literal: exp.Literal, to: exp.DataType, depth: int | None) -> exp.Expr:
    if depth is None or depth == 1:
        return exp.Cast(this=literal.copy(), to=to.copy())
    parsed = parse_array(literal.name)
    if parsed and len(shape(parsed)) != depth:
        raise FeatureNotSupported(
            f"a VALUES column of arrays with {depth} dimensions and with "
            f"{len(shape(parsed))} is not supported"
        )
    if parsed:
        return exp.Cast(this=literal.copy(), to=to.copy())
    element = to
    while element.this is DT.ARRAY and element.expressions:
        element = element.expressions[0]
    typed = element.copy()
    for _ in range(depth):
        typed = exp.DataType(this=DT.ARRAY, expressions=[typed], nested=True)
    return exp.Cast(this=exp.Array(expressions=[]), to=typed)
