"""PostgreSQL's string and pattern functions where DuckDB's of the same name answer otherwise.

* ``concat`` / ``concat_ws`` write a boolean as ``t``/``f`` (DuckDB: ``true``), and take
  ``VARIADIC array`` (DuckDB has no such syntax): the array's non-null elements, joined;
* ``regexp_matches`` is PostgreSQL's set-returning function, a ``text[]`` row per match
  (all of them with flag ``g``), not DuckDB's boolean test of the same name.  It runs as
  ``unnest(nyf_regexp_matches(...))`` (``execution.pattern_functions``);
* ``encode(bytea, 'hex' | 'base64')`` and ``decode(text, 'hex' | 'base64')`` convert
  between bytes and their text (DuckDB's encode/decode are UTF-8 conversions);
  base64 text is wrapped at 76 characters as PostgreSQL writes it, and read ignoring
  whitespace.
"""

from __future__ import annotations

from sqlglot import exp

from storage.errors import FeatureNotSupported, InvalidParameterValue

DT = exp.DataType.Type
REGEXP_MATCHES_FUNCTION = "nyf_regexp_matches"


def _as_text(arg: exp.Expr) -> exp.Expr:
    """A boolean argument as PostgreSQL's text for it; anything else unchanged."""
    if arg.type is None or arg.type.this is not DT.BOOLEAN:
        return arg
    return exp.Case(
        ifs=[
            exp.If(this=arg.copy(), true=exp.Literal.string("t")),
            exp.If(this=exp.Not(this=arg.copy()), true=exp.Literal.string("f")),
        ]
    )


def _joined(array: exp.Expr, separator: exp.Expr) -> exp.Expr:
    text_array = exp.Cast(this=array, to=exp.DataType.build("VARCHAR[]", dialect="duckdb"))
    return exp.Anonymous(this="array_to_string", expressions=[text_array, separator])


def _concat(node: exp.Concat | exp.ConcatWs) -> exp.Expr:
    args = list(node.expressions)
    separator = args[0] if isinstance(node, exp.ConcatWs) and args else None
    values = args[1:] if separator is not None else args
    if len(values) == 1 and isinstance(values[0], exp.Variadic):
        return _joined(values[0].this, separator or exp.Literal.string(""))
    if not any(v.type is not None and v.type.this is DT.BOOLEAN for v in values):
        return node
    node.set(
        "expressions",
        ([separator] if separator is not None else []) + [_as_text(v) for v in values],
    )
    return node


def _in_select_list(node: exp.Expr) -> bool:
    """Whether ``node`` is part of a SELECT list, where a set-returning function may be."""
    child, parent = node, node.parent
    while parent is not None and not isinstance(parent, exp.Select):
        child, parent = parent, parent.parent
    return parent is not None and child.arg_key == "expressions"


def _regexp_matches(node: exp.Anonymous) -> exp.Expr:
    args = list(node.expressions)
    if len(args) not in (2, 3) or not _in_select_list(node):
        return node
    flags = args[2] if len(args) == 3 else exp.Literal.string("")
    call = exp.Anonymous(this=REGEXP_MATCHES_FUNCTION, expressions=[args[0], args[1], flags])
    return exp.Unnest(expressions=[call])


def _call(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _format(node: exp.Encode | exp.Decode) -> str:
    charset = node.args.get("charset")
    if not (isinstance(charset, exp.Literal) and charset.is_string):
        raise FeatureNotSupported(f"{node.key}() takes its format as a constant")
    name = charset.name.lower()
    if name == "escape":
        raise FeatureNotSupported(f"{node.key}() of the escape format is not supported")
    if name not in ("hex", "base64"):
        raise InvalidParameterValue(f'unrecognized encoding: "{charset.name}"')
    return name


def _encode(node: exp.Encode) -> exp.Expr:
    data = node.this
    if _format(node) == "hex":
        return _call("lower", _call("hex", data))
    newline = _call("chr", exp.Literal.number(10))
    wrapped = _call(
        "regexp_replace", _call("to_base64", data), exp.Literal.string("(.{76})"),
        exp.DPipe(this=exp.Literal.string("\\1"), expression=newline), exp.Literal.string("g"),
    )  # fmt: skip
    return _call("rtrim", wrapped, newline)


def _decode(node: exp.Decode) -> exp.Expr:
    text = node.this
    if _format(node) == "hex":
        return _call("unhex", text)
    bare = _call(
        "regexp_replace", text, exp.Literal.string("\\s"), exp.Literal.string(""),
        exp.Literal.string("g"),
    )  # fmt: skip
    return _call("from_base64", bare)


def with_default_escape(node: exp.Expr) -> exp.Expr:
    """``LIKE``/``ILIKE`` with PostgreSQL's default escape character, the backslash (DuckDB's
    LIKE has none: ``'a_b' like 'a\\_b'`` would be false)."""
    if isinstance(node, (exp.Like, exp.ILike)) and not isinstance(node.parent, exp.Escape):
        return exp.Escape(this=node.copy(), expression=exp.Literal.string("\\"))
    return node


def rewrite_string_function(node: exp.Expr) -> exp.Expr:
    """``node`` answering as PostgreSQL's function does, or ``node`` itself."""
    if isinstance(node, exp.Encode):
        return _encode(node)
    if isinstance(node, exp.Decode):
        return _decode(node)
    if isinstance(node, (exp.Concat, exp.ConcatWs)):
        return _concat(node)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "regexp_matches":
        return _regexp_matches(node)
    return with_default_escape(node)
