"""VALUES lists as PostgreSQL reads them: a table whose columns are column1, column2, ...

A VALUES list may stand wherever a query may (a statement, an operand of UNION, an
IN list's subquery) and in FROM.  sqlglot's ``qualify`` only reads it in FROM, and
names its columns ``_col_0``; so every VALUES list becomes one in FROM, aliased as
PostgreSQL names it (``"*VALUES*"`` with columns ``column1`` ... unless the query
names them), with its ORDER BY and LIMIT moved onto the SELECT that reads it.
"""

from __future__ import annotations

from sqlglot import exp

from sql.planner.untyped_literals import type_untyped_literals

_SELECT_ARGS = ("order", "limit", "offset")


def _width(values: exp.Values) -> int:
    rows = values.expressions
    if not rows:
        return 0
    first = rows[0]
    return len(first.expressions) if isinstance(first, exp.Tuple) else 1


def _columns(values: exp.Values) -> list[list[exp.Expr]]:
    """Each column's cells, row by row."""
    rows = [row.expressions if isinstance(row, exp.Tuple) else [row] for row in values.expressions]
    return [[row[i] for row in rows if i < len(row)] for i in range(_width(values))]


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
    for operation in list(ast.find_all(exp.SetOperation)):
        _type_set_operation(operation)
    for values in list(ast.find_all(exp.Values)):
        if isinstance(values.parent, (exp.From, exp.Join)) or (
            values.parent is not None and values.args.get("alias") is not None
        ):
            _name_columns(values)
            type_untyped_literals(_columns(values))
            continue
        parent = values.parent
        type_untyped_literals(_columns(values))
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


def _type_set_operation(operation: exp.SetOperation) -> None:
    """``type_untyped_literals`` over a set operation's output columns; a bare literal of the
    first branch that takes a type keeps its column name, ``?column?``."""
    first = operation
    while isinstance(first, exp.SetOperation):
        first = first.this
    bare = (
        {i for i, p in enumerate(first.expressions) if isinstance(p, exp.Literal)}
        if isinstance(first, exp.Select)
        else set()
    )
    type_untyped_literals(_set_operation_columns(operation))
    for i in bare:
        projection = first.expressions[i]
        if not isinstance(projection, exp.Literal):
            projection.replace(exp.alias_(projection.copy(), "?column?", quoted=True))


def _set_operation_columns(operation: exp.SetOperation) -> list[list[exp.Expr]]:
    """Each output column's expressions in the plain SELECT branches of a UNION, INTERSECT
    or EXCEPT (nested ones included); none when a branch is anything else."""
    branches: list[exp.Expr] = []
    pending: list[exp.Expr] = [operation]
    while pending:
        node = pending.pop()
        if isinstance(node, exp.SetOperation):
            pending += [node.this, node.expression]
        else:
            branches.append(node)
    if not all(isinstance(b, exp.Select) and not any(p.is_star for p in b.expressions)
               for b in branches):  # fmt: skip
        return []
    projections = [
        [p.this if isinstance(p, exp.Alias) else p for p in b.expressions] for b in branches
    ]
    width = min(len(p) for p in projections)
    return [[p[i] for p in projections] for i in range(width)]
