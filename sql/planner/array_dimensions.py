"""PostgreSQL's array dimension functions over DuckDB's nested lists, of any depth.

``array_length``, ``array_lower``, ``array_upper``, ``array_ndims``, ``array_dims`` and
``cardinality`` answer for every dimension of a PostgreSQL array; DuckDB's own
``array_length`` refuses a dimension other than 1 and its ``cardinality`` counts the
outer list.  One nyala ``int[]`` may hold lists of any depth (a nested parameter is
cast to its value's depth only when it runs), so the macros here read the depth from
the value's DuckDB type (``INTEGER[][]``: 2) and a dimension's length from its JSON
form (the first sub-list at that depth: PostgreSQL's arrays are rectangular).  An
empty array has no dimensions: NULL for all but ``cardinality``, which is 0.
"""

from __future__ import annotations

from sqlglot import exp

PREFIX = "nyd_"

MACROS: dict[str, str] = {
    "array_rank(a)": "(length(typeof(a)) - length(rtrim(typeof(a), '[]'))) // 2",
    "dim_length(a, d)": "json_array_length(to_json(a), '$' || repeat('[0]', d - 1))::INTEGER",
    "array_ndims(a)": "CASE WHEN len(a) > 0 THEN nyd_array_rank(a)::INTEGER END",
    "array_length(a, d)": (
        "CASE WHEN len(a) > 0 AND d BETWEEN 1 AND nyd_array_rank(a) THEN nyd_dim_length(a, d) END"
    ),
    "array_lower(a, d)": "CASE WHEN len(a) > 0 AND d BETWEEN 1 AND nyd_array_rank(a) THEN 1 END",
    "array_dims(a)": (
        "CASE WHEN len(a) > 0 THEN array_to_string(list_transform("
        "range(1, nyd_array_rank(a) + 1), lambda d: '[1:' || nyd_dim_length(a, d) || ']'), '') END"
    ),
    "cardinality(a)": (
        "CASE WHEN len(a) = 0 THEN 0 WHEN len(a) > 0 THEN list_product(list_transform("
        "range(1, nyd_array_rank(a) + 1), lambda d: nyd_dim_length(a, d)))::INTEGER END"
    ),
}

# The function each PostgreSQL name becomes, with how many arguments PostgreSQL takes.
_FUNCTIONS = {
    "array_length": ("array_length", 2),
    "array_upper": ("array_length", 2),  # lower bounds are always 1 here
    "array_lower": ("array_lower", 2),
    "array_ndims": ("array_ndims", 1),
    "array_dims": ("array_dims", 1),
    "cardinality": ("cardinality", 1),
}


def macro_statements() -> list[str]:
    """The ``CREATE MACRO`` statements a DuckDB that runs the rewritten calls needs."""
    return [f"CREATE OR REPLACE MACRO {PREFIX}{spec} AS {body}" for spec, body in MACROS.items()]


def rewrite_array_dimensions(node: exp.Expr) -> exp.Expr:
    """``node`` calling the nyala macro for a PostgreSQL array dimension function, or
    ``node`` itself."""
    if isinstance(node, exp.ArraySize):
        name, args = "array_length", [node.this, node.expression]
    elif isinstance(node, exp.Anonymous):
        name, args = node.name.lower(), list(node.expressions)
    else:
        return node
    target = _FUNCTIONS.get(name)
    if target is None or len(args) != target[1] or any(a is None for a in args):
        return node
    call = exp.Anonymous(this=PREFIX + target[0], expressions=args)
    call.meta["called_as"] = name
    return call
