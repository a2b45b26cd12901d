"""Rewrite PostgreSQL's json and jsonb casts, operators and functions for DuckDB.

In DuckDB a jsonb value is its JSON type holding jsonb_out's normalised text
(``sql.common.json_values``), and a json value the text as given (as VARCHAR where
a cast made it: DuckDB's JSON parser refuses a lone surrogate escape json keeps).
A cast to jsonb normalises, a cast to json checks, and an untyped literal beside
a jsonb is read as jsonb; jsonb's operators
(``-> ->> #> #>> @> <@ ? ?| ?& || = IN - #-``) and functions run as the ``nyj_``
functions of ``sql.execution.json_functions``, which follow PostgreSQL's rules
and give back normalised text (their ``nyj_column_`` forms when the document is a
table's jsonb column, read a batch at a time).  ``json_kind`` tells the wire layer which of
the two types a result column is, as DuckDB's one JSON type cannot.
"""

from __future__ import annotations

from sqlglot import exp

from sql.common.array_input import flatten, parse_array
from storage.errors import FeatureNotSupported, UndefinedFunction

DT = exp.DataType.Type

_KIND = "json_kind"
_JSON_TYPES = {DT.JSON: "json", DT.JSONB: "jsonb"}
_JSONB_FUNCTIONS = {
    "jsonb_build_object",
    "jsonb_agg",
    "to_jsonb",
    "jsonb_build_array",
    "jsonb_array_elements",
}
_JSON_FUNCTIONS = {
    "json_build_object",
    "json_agg",
    "to_json",
    "json_build_array",
    "json_array_elements",
}
_UNSUPPORTED = {
    "jsonb_each",
    "jsonb_each_text",
    "json_each",
    "json_each_text",
    "jsonb_set",
    "jsonb_insert",
    "jsonb_strip_nulls",
    "jsonb_pretty",
    "jsonb_path_query",
    "jsonb_path_exists",
    "jsonb_to_record",
    "jsonb_populate_record",
    "jsonb_object_agg",
    "json_object_agg",
}


_OPERATOR_SIGNS = {"eq": "=", "neq": "<>", "arraycontainsall": "@>", "arraycontainedby": "<@"}


# The set-returning functions a select list may call: each row becomes one row per item.
_SET_RETURNING: dict[str, tuple[str, str | None]] = {
    "jsonb_object_keys": ("nyj_object_keys", None),
    "json_object_keys": ("nyj_object_keys", None),
    "jsonb_array_elements": ("nyj_array_elements", "jsonb"),
    "json_array_elements": ("nyj_array_elements", "json"),
    "jsonb_array_elements_text": ("nyj_array_elements_text", None),
    "json_array_elements_text": ("nyj_array_elements_text", None),
}


def _in_select_list(node: exp.Expr) -> bool:
    """Whether ``node`` is inside a projection of a SELECT (not its FROM, WHERE or GROUP BY),
    where DuckDB's unnest gives one output row per item as PostgreSQL's set-returning call
    does."""
    child, parent = node, node.parent
    while parent is not None and not isinstance(parent, exp.Select):
        if isinstance(parent, (exp.AggFunc, exp.Window, exp.Subquery)):
            return False
        child, parent = parent, parent.parent
    return parent is not None and child.arg_key == "expressions"


def json_kind(node: exp.Expr | None) -> str | None:
    """``json`` or ``jsonb`` when ``node`` gives a value of that type, else None."""
    if node is None:
        return None
    kind = node.meta.get(_KIND)
    if kind is not None:
        return str(kind)
    if isinstance(node, (exp.Paren, exp.Alias)):
        return json_kind(node.this)
    if isinstance(node, exp.Cast):
        return _JSON_TYPES.get(node.to.this)
    if isinstance(node, (exp.JSONExtract, exp.JSONBExtract)):
        return json_kind(node.this)
    if isinstance(node, exp.JSONArrayAgg):
        return "json"
    if isinstance(node, exp.Anonymous):
        name = node.name.lower()
        if name in _JSONB_FUNCTIONS:
            return "jsonb"
        if name in _JSON_FUNCTIONS:
            return "json"
    if isinstance(node, exp.DPipe) and "jsonb" in (
        json_kind(node.this),
        json_kind(node.expression),
    ):
        return "jsonb"
    if isinstance(node, _CHOICES) and (kind := _choice_kind(node)) is not None:
        return kind
    if isinstance(node, (exp.JSONBDeleteAtPath, exp.Sub)) and json_kind(node.this) == "jsonb":
        return "jsonb"
    if isinstance(node, (exp.Column, exp.Subquery, exp.Max, exp.Min, exp.Coalesce)):
        dtype = node.type
        return _JSON_TYPES.get(dtype.this) if dtype is not None else None
    return None


_CHOICES = (exp.Coalesce, exp.Case, exp.Greatest, exp.Least, exp.Nullif)
"""Expressions whose value is one of their operands', so whose type is theirs: an untyped
literal among them takes the type of a json or jsonb one, as PostgreSQL resolves it."""


def _choice_values(node: exp.Expr) -> list[exp.Expr]:
    """The operands a ``_CHOICES`` node's value comes from."""
    if isinstance(node, exp.Case):
        values = [branch.args["true"] for branch in node.args.get("ifs") or ()]
        default = node.args.get("default")
        return values + ([default] if default is not None else [])
    if isinstance(node, exp.Nullif):
        return [node.this]
    return [node.this, *node.expressions]


def _choice_kind(node: exp.Expr) -> str | None:
    kinds = {json_kind(value) for value in _choice_values(node)}
    return "jsonb" if "jsonb" in kinds else "json" if "json" in kinds else None


def _choice(node: exp.Expr, kind: str) -> exp.Expr:
    """A ``_CHOICES`` node of type ``kind`` with its string literals read as ``kind`` (jsonb's
    normalised, json's checked), and ``nullif`` comparing by jsonb's equality."""
    for value in _choice_values(node):
        if isinstance(value, exp.Literal) and value.is_string:
            value.replace(_as_jsonb(value.copy()) if kind == "jsonb" else _json_in(value.copy()))
    if isinstance(node, exp.Nullif) and kind == "jsonb":
        first = node.this
        equal = _call("nyj_equal", _operand(first), _operand(node.expression))
        case = exp.Case(ifs=[exp.If(this=equal, true=exp.Null())], default=first.copy())
        return _tagged(case, kind)
    return _tagged(node, kind)


def _tagged(node: exp.Expr, kind: str) -> exp.Expr:
    node.meta[_KIND] = kind
    return node


def _text(node: exp.Expr) -> exp.Expr:
    return exp.cast(node, exp.DataType.build("VARCHAR"))


def _call(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _document(name: str, kind: str, *args: exp.Expr) -> exp.Expr:
    """A ``nyj_`` call giving a document's text, typed back as DuckDB's JSON."""
    return _tagged(exp.cast(_call(name, *args), exp.DataType.build("JSON", dialect="duckdb")), kind)


def _as_jsonb(node: exp.Expr) -> exp.Expr:
    """``node`` (a document, or text to read as one) as normalised jsonb text."""
    if json_kind(node) == "jsonb":
        return node
    return _document("nyj_jsonb_in", "jsonb", _text(node))


def _json_in(node: exp.Expr) -> exp.Expr:
    """``node`` read as json: checked, and kept as text, since DuckDB's JSON parser refuses
    some documents PostgreSQL's json keeps (a lone surrogate escape, ``"\\ud800"``)."""
    return _tagged(_call("nyj_json_in", _text(node)), "json")


def _operand(node: exp.Expr) -> exp.Expr:
    """An operand of a jsonb operator: a string literal is read as jsonb, as PostgreSQL
    resolves an unknown-typed literal beside a jsonb."""
    if isinstance(node, exp.Literal) and node.is_string:
        return _text(_as_jsonb(node))
    return _text(node)


def _key(path: exp.Expr) -> tuple[exp.Expr, exp.Expr]:
    """The key of ``->``/``->>`` as text, and whether it indexes an array."""
    if isinstance(path, exp.JSONPath) and len(path.expressions) == 2:
        part = path.expressions[1]
        if isinstance(part, exp.JSONPathSubscript):
            return exp.Literal.string(str(part.this)), exp.true()
        if isinstance(part, exp.JSONPathKey):
            return exp.Literal.string(str(part.this)), exp.false()
    if isinstance(path, exp.JSONPath):
        raise FeatureNotSupported(f"json path {path.sql(dialect='postgres')} is not supported")
    by_index = path.type is not None and path.type.is_type(*exp.DataType.INTEGER_TYPES)
    if isinstance(path, (exp.Neg, exp.Literal)) and not (
        isinstance(path, exp.Literal) and path.is_string
    ):
        by_index = True
    return _text(path), exp.true() if by_index else exp.false()


def _stored(document: exp.Expr) -> bool:
    """Whether ``document`` is a jsonb column of a base table, so its values are the stored
    jsonb_out text.  A column of a CTE, a subquery or a view may hold any text typed jsonb
    (``coalesce(doc, '{"a":1,"a":2}')``), which only the per-row functions read right."""
    if not isinstance(document, exp.Column) or json_kind(document) != "jsonb":
        return False
    select = document.find_ancestor(exp.Select)
    if select is None:
        return False
    ctes: set[str] = set()
    scope: exp.Expr | None = select
    while scope is not None:
        if isinstance(scope.args.get("with_"), exp.With):
            ctes.update(cte.alias_or_name for cte in scope.args["with_"].expressions)
        scope = scope.parent
    from_ = select.args.get("from_")
    sources = [from_.this] if from_ is not None else []
    sources += [join.this for join in select.args.get("joins") or ()]
    if document.table:
        sources = [s for s in sources if s.alias_or_name == document.table]
    return bool(sources) and all(
        isinstance(s, exp.Table) and isinstance(s.this, exp.Identifier) and s.name not in ctes
        for s in sources
    )


def _over(name: str, document: exp.Expr) -> str:
    """``name``, or its ``nyj_column_`` form when ``document`` is a stored jsonb column: its
    text is jsonb_out's, which that form reads a batch at a time (``jsonb_columns``)."""
    return name.replace("nyj_", "nyj_column_") if _stored(document) else name


def _text_array(node: exp.Expr) -> exp.Expr:
    """A text[] operand (a path, a key list): a string literal is read as an array literal."""
    if isinstance(node, exp.Literal) and node.is_string:
        elements = flatten(parse_array(node.name))
        return exp.Array(
            expressions=[exp.Null() if e is None else exp.Literal.string(e) for e in elements]
        )
    # exp.Cast, not exp.cast: that one keeps ``x::jsonb[]`` as it is, and no nyj_ function
    # takes DuckDB's JSON[].
    return exp.Cast(this=node, to=exp.DataType.build("VARCHAR[]", dialect="duckdb"))


def _build_object(args: list[exp.Expr]) -> exp.Expr:
    """json_build_object's text, ``{"k" : v, ...}``, built in SQL from DuckDB's to_json."""
    if len(args) % 2:
        raise FeatureNotSupported("json_build_object needs an even number of arguments")
    pairs: list[exp.Expr] = []
    for key, value in zip(args[::2], args[1::2], strict=True):
        pairs.append(
            exp.DPipe(
                this=exp.DPipe(
                    this=_text(_call("to_json", _text(key))),
                    expression=exp.Literal.string(" : "),
                ),
                expression=_json_value_text(value),
            )
        )
    inner: exp.Expr = (
        _call("concat_ws", exp.Literal.string(", "), *pairs) if pairs else exp.Literal.string("")
    )
    text = exp.DPipe(
        this=exp.DPipe(this=exp.Literal.string("{"), expression=inner),
        expression=exp.Literal.string("}"),
    )
    return exp.cast(text, exp.DataType.build("JSON", dialect="duckdb"))


def _json_value_text(value: exp.Expr) -> exp.Expr:
    """A SQL value's JSON text: a document as it is, anything else through to_json; null."""
    inner = value if json_kind(value) else _call("to_json", value)
    return exp.Coalesce(this=_text(inner), expressions=[exp.Literal.string("null")])


def _json_agg(value: exp.Expr) -> exp.Expr:
    """json_agg's text, ``[a, b]``, as string_agg of each value's JSON text."""
    order = None
    if isinstance(value, exp.Order):
        order, value = value, value.this
    separator: exp.Expr = exp.Literal.string(", ")
    if order is not None:
        # DuckDB reads string_agg(x, sep ORDER BY ...): the order goes after the separator.
        separator = exp.Order(this=separator, expressions=order.expressions)
    joined = _call("string_agg", _json_value_text(value), separator)
    text = exp.DPipe(
        this=exp.DPipe(this=exp.Literal.string("["), expression=joined),
        expression=exp.Literal.string("]"),
    )
    return exp.cast(text, exp.DataType.build("JSON", dialect="duckdb"))


def _rewrite_call(node: exp.Anonymous) -> exp.Expr:
    name = node.name.lower()
    args = node.expressions
    if name in _UNSUPPORTED:
        raise FeatureNotSupported(f"function {name} is not supported")
    if name in ("jsonb_typeof", "json_typeof") and len(args) == 1:
        return _call("nyj_typeof", _text(args[0]))
    if name in _SET_RETURNING and len(args) == 1 and _in_select_list(node):
        function, kind = _SET_RETURNING[name]
        document = _as_jsonb(args[0]) if name.startswith("jsonb") else args[0]
        unnested = exp.Unnest(expressions=[_call(function, _text(document))])
        if kind is None:
            return unnested
        return _tagged(exp.cast(unnested, exp.DataType.build("JSON", dialect="duckdb")), kind)
    if name in _SET_RETURNING:
        raise FeatureNotSupported(f"function {name} is supported only in a select list")
    if name in ("jsonb_array_length", "json_array_length") and len(args) == 1:
        return _call("nyj_array_length", _text(args[0]))
    if name == "row_to_json":
        # A scan hands DuckDB only the columns a query names, never a whole row.
        raise FeatureNotSupported("function row_to_json is not supported")
    if name == "to_json" and len(args) == 1:
        if json_kind(args[0]):
            return _tagged(args[0], "json")
        return _tagged(_call("to_json", args[0]), "json")
    if name == "to_jsonb" and len(args) == 1:
        return _as_jsonb(args[0] if json_kind(args[0]) else _call("to_json", args[0]))
    if name in ("json_build_object", "jsonb_build_object"):
        built = _build_object(args)
        return _as_jsonb(built) if name.startswith("jsonb") else _tagged(built, "json")
    if name in ("json_build_array", "jsonb_build_array"):
        parts = [_json_value_text(a) for a in args]
        inner = _call("concat_ws", exp.Literal.string(", "), *parts) if parts else None
        text = exp.DPipe(
            this=exp.DPipe(
                this=exp.Literal.string("["), expression=inner or exp.Literal.string("")
            ),
            expression=exp.Literal.string("]"),
        )
        built = exp.cast(text, exp.DataType.build("JSON", dialect="duckdb"))
        return _as_jsonb(built) if name.startswith("jsonb") else _tagged(built, "json")
    if name == "jsonb_agg" and len(args) == 1:
        return _as_jsonb(_json_agg(args[0]))
    return node


def rewrite_json(node: exp.Expr) -> exp.Expr:
    """``node`` as DuckDB computes it with PostgreSQL's json/jsonb semantics (or ``node``)."""
    if isinstance(node, exp.Cast) and node.to.this in _JSON_TYPES:
        source = json_kind(node.this)
        if node.to.this is DT.JSONB:
            return _as_jsonb(node.this)
        if source:
            return _tagged(node.this, "json")
        return _json_in(node.this)
    if isinstance(node, _CHOICES) and (choice := _choice_kind(node)) is not None:
        return _choice(node, choice)
    if isinstance(node, exp.In):
        return _in(node)
    if isinstance(node, exp.Anonymous):
        return _rewrite_call(node)
    if isinstance(node, exp.JSONArrayAgg):
        return _tagged(_json_agg(node.this), "json")
    kind = json_kind(node.this) if isinstance(node, exp.Binary) else None
    other = json_kind(node.expression) if isinstance(node, exp.Binary) else None
    if isinstance(node, (exp.JSONExtract, exp.JSONExtractScalar)) and kind:
        key, by_index = _key(node.expression)
        if isinstance(node, exp.JSONExtractScalar):
            return _call(_over("nyj_field_text", node.this), _text(node.this), key, by_index)
        return _document(_over("nyj_field", node.this), kind, _text(node.this), key, by_index)
    if isinstance(node, (exp.JSONBExtract, exp.JSONBExtractScalar)) and kind:
        path = _text_array(node.expression)
        if isinstance(node, exp.JSONBExtractScalar):
            return _call("nyj_path_text", _text(node.this), path)
        return _document("nyj_path", kind, _text(node.this), path)
    if not (kind or other):
        return node
    if isinstance(node, (exp.Sub, exp.JSONBDeleteAtPath)):
        return _deletion(node, kind, other)
    comparison = (exp.EQ, exp.NEQ, exp.ArrayContainsAll, exp.ArrayContainedBy)
    if "json" in (kind, other) and "jsonb" not in (kind, other) and isinstance(node, comparison):
        raise UndefinedFunction(
            f"operator does not exist: json {_OPERATOR_SIGNS.get(node.key, node.key)} json",
            hint="No operator matches the given name and argument types.",
        )
    if isinstance(node, exp.ArrayContainsAll):
        contains = _over("nyj_contains", node.this)
        return _call(contains, _operand(node.this), _operand(node.expression))
    if isinstance(node, exp.ArrayContainedBy):
        contains = _over("nyj_contains", node.expression)
        return _call(contains, _operand(node.expression), _operand(node.this))
    if isinstance(node, exp.JSONBContainsTopKey):
        return _call(_over("nyj_exists", node.this), _text(node.this), _text(node.expression))
    if isinstance(node, exp.JSONBContainsAnyTopKeys):
        return _call("nyj_exists_any", _text(node.this), _text_array(node.expression))
    if isinstance(node, exp.JSONBContainsAllTopKeys):
        return _call("nyj_exists_all", _text(node.this), _text_array(node.expression))
    if isinstance(node, exp.DPipe) and "jsonb" in (kind, other):
        concat = _call("nyj_concat", _operand(node.this), _operand(node.expression))
        return _tagged(exp.cast(concat, exp.DataType.build("JSON", dialect="duckdb")), "jsonb")
    if isinstance(node, (exp.EQ, exp.NEQ)) and _quantified_array(node.expression) is not None:
        return _quantified(node)
    if isinstance(node, (exp.EQ, exp.NEQ)):
        left, right = node.this, node.expression
        if _stored(right) and not _stored(left):
            left, right = right, left
        equal = _call(_over("nyj_equal", left), _operand(left), _operand(right))
        return equal if isinstance(node, exp.EQ) else exp.Not(this=equal)
    return node


def _in(node: exp.In) -> exp.Expr:
    """``doc IN (a, b)`` as jsonb's ``=`` against each (``nyj_in``): literals and parameters
    are read as jsonb, so keys in another order or ``1.0`` against ``1`` still match."""
    if node.args.get("query") or node.args.get("unnest") or not node.expressions:
        return node
    operands = [node.this, *node.expressions]
    kinds = {json_kind(o) for o in operands}
    if "jsonb" not in kinds:
        if "json" in kinds:
            first = node.expressions[0]
            left, right = json_kind(node.this), json_kind(first)
            raise UndefinedFunction(
                f"operator does not exist: {left or _type_name(node.this)} = "
                f"{right or _type_name(first)}",
                hint="No operator matches the given name and argument types.",
            )
        return node
    if _stored(node.this):
        # One vectorised equality per candidate (``nyj_column_equal``); OR gives IN's NULLs.
        document = node.this
        tests = [
            _call("nyj_column_equal", _operand(document), _operand(e)) for e in node.expressions
        ]
        return exp.Paren(this=exp.or_(*tests))
    candidates = exp.Array(expressions=[_operand(e) for e in node.expressions])
    return _call("nyj_in", _operand(node.this), candidates)


_TEXT_TYPES = (DT.TEXT, DT.VARCHAR, DT.CHAR, DT.BPCHAR, DT.NAME, DT.UNKNOWN)
_INDEX_TYPES = (DT.INT, DT.SMALLINT, DT.TINYINT)


def _deletion(node: exp.Expr, kind: str | None, other: str | None) -> exp.Expr:
    """``jsonb - text | int | text[]`` and ``jsonb #- text[]`` as the ``nyj_delete_``
    functions; any other operand types have no such operator (42883), as in PostgreSQL."""
    sign = "#-" if isinstance(node, exp.JSONBDeleteAtPath) else "-"
    right = node.expression
    dtype = right.to if isinstance(right, exp.Cast) else right.type
    if kind == "jsonb" and other is None:
        document = _text(node.this)
        if isinstance(node, exp.JSONBDeleteAtPath):
            return _document("nyj_delete_path", kind, document, _text_array(right))
        if isinstance(right, exp.Null) or (isinstance(right, exp.Literal) and right.is_string):
            return _document("nyj_delete_key", kind, document, _text(right))
        if isinstance(right, exp.Array) or (dtype is not None and dtype.this is DT.ARRAY):
            element = dtype.expressions[0] if dtype is not None and dtype.expressions else None
            if element is None or element.this in _TEXT_TYPES:
                return _document("nyj_delete_keys", kind, document, _text_array(right))
        elif dtype is not None and dtype.this in _INDEX_TYPES:
            integer = exp.cast(right, exp.DataType.build("INTEGER", dialect="duckdb"))
            return _document("nyj_delete_index", kind, document, integer)
        elif dtype is not None and dtype.this in _TEXT_TYPES:
            return _document("nyj_delete_key", kind, document, _text(right))
    names = [kind or _type_name(node.this), other or _type_name(right)]
    raise UndefinedFunction(
        f"operator does not exist: {names[0]} {sign} {names[1]}",
        hint="No operator matches the given name and argument types. "
        "You might need to add explicit type casts.",
    )


def _type_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Literal) and node.is_string:
        return "unknown"
    if isinstance(node, exp.Literal):
        return "integer" if node.name.isdigit() else "numeric"
    dtype = node.to if isinstance(node, exp.Cast) else node.type
    if dtype is None or dtype.this is DT.UNKNOWN:
        return "unknown"
    return dtype.sql(dialect="postgres").lower().replace("int[]", "integer[]")


def _quantified_array(node: exp.Expr) -> exp.Expr | None:
    """The array of ``ANY(array)`` or ``ALL(array)`` (sqlglot parses either way), else None."""
    if isinstance(node, (exp.Any, exp.All)):
        return node.this
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("any", "all", "some"):
        return node.expressions[0] if len(node.expressions) == 1 else None
    return None


def _quantified(node: exp.Expr) -> exp.Expr:
    """``doc = ANY(array)`` as ``nyj_in`` over the array's documents and ``doc = ALL(array)``
    as ``nyj_all``: jsonb's equality, with ANY's and ALL's NULLs; ``<> ALL`` and ``<> ANY``
    are their negations."""
    quantifier = node.expression
    is_all = isinstance(quantifier, exp.All) or (
        isinstance(quantifier, exp.Anonymous) and quantifier.name.lower() == "all"
    )
    array = _quantified_array(quantifier)
    if array is None:
        raise FeatureNotSupported("this jsonb = ANY/ALL (...) form is not supported")
    inner = array
    while isinstance(inner, (exp.Cast, exp.Paren)):
        inner = inner.this
    # ``<> ANY`` is ``NOT (= ALL)`` and ``<> ALL`` is ``NOT (= ANY)``, NULLs included.
    every = is_all == isinstance(node, exp.EQ)
    name = "nyj_all" if every else "nyj_in"
    if isinstance(inner, exp.Parameter):
        # A jsonb[] parameter arrives as its array text, read by the function.
        found = _call(name + "_array_text", _operand(node.this), _text(inner))
    else:
        found = _call(name, _operand(node.this), _text_array(array))
    return found if isinstance(node, exp.EQ) else exp.Not(this=found)
