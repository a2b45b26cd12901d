"""Rewrite a bound query so DuckDB computes what PostgreSQL would, then generate DuckDB SQL.

DuckDB runs every query above the tablet scans, but some of its defaults
differ from PostgreSQL's.  The rewrites here restore PostgreSQL semantics:

* bytea literals are read as PostgreSQL reads them (``'\\x00ff'`` is two bytes), and
  ``length`` of bytea counts bytes;
* ``int / int`` is integer division truncating toward zero (DuckDB's ``//``),
  and any division or modulo by zero is an error (22012), never NULL or inf;
* float ``+ - * /`` overflowing or underflowing is 22003, never inf or 0 (float_checks.py);
* ``sum`` of smallint/integer is bigint, not DuckDB's 128-bit integer;
* ``numeric`` casts, ``/`` and ``avg`` are exact decimals (numeric_casts.py);
* ``extract(year ...)`` of a BC date is negative from -1, with no year 0 (bc_years.py);
* ``concat`` and ``regexp_matches`` answer as PostgreSQL's (string_functions.py);
* ``version()``, ``current_database()``, ``current_schema()``, ``current_user``
  and ``now()`` answer for nyala and the transaction (``now()`` is the
  transaction's start time, constant within it, as in PostgreSQL);
* each ``$n`` is cast to its inferred type, so DuckDB binds it as PostgreSQL does;
* each base table becomes the scan view registered for it.

Output column names follow PostgreSQL: a column keeps its name, a function
call is named after the function, a cast after its type, else ``?column?``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from sql.common.datatypes import oid_type_name
from sql.common.uuid_values import canonical_uuid
from sql.planner.array_depths import flatten_quantified_arrays
from sql.planner.array_dimensions import rewrite_array_dimensions
from sql.planner.array_text import rewrite_array_text
from sql.planner.bc_years import is_far_date_text, rewrite_bc_text, rewrite_bc_year
from sql.planner.binder import BoundQuery, parameter_number, parameters
from sql.planner.blank_padding import BLANK_PADDED_PARAMETER
from sql.planner.float_checks import rewrite_float_arithmetic
from sql.planner.formatting import rewrite_formatting
from sql.planner.interval_arithmetic import rewrite_interval_arithmetic
from sql.planner.json_operators import json_kind, rewrite_json
from sql.planner.numeric_casts import rewrite_numeric
from sql.planner.query_checks import is_oid_cast
from sql.planner.sequence_calls import FUNCTIONS as SEQUENCE_FUNCTIONS
from sql.planner.series import rewrite_generate_series
from sql.planner.string_functions import rewrite_string_function
from sql.planner.to_char import rewrite_to_char
from sql.planner.zoned_times import spell_zoned_times
from storage.errors import InvalidParameterValue, InvalidTextRepresentation
from storage.type_oids import TypeOid

DT = exp.DataType.Type
INTEGER_TYPES = {DT.TINYINT, DT.SMALLINT, DT.INT, DT.BIGINT}
_SMALL_INTEGERS = {DT.TINYINT, DT.SMALLINT, DT.INT}
_BINARY_TYPES = {DT.VARBINARY, DT.BINARY, DT.BLOB}
_SQLGLOT_ALIAS = re.compile(r"^_col_\d+$")

_CAST_NAMES = {
    DT.INT: "int4",
    DT.BIGINT: "int8",
    DT.SMALLINT: "int2",
    DT.TINYINT: "int2",
    DT.BOOLEAN: "bool",
    DT.FLOAT: "float4",
    DT.DOUBLE: "float8",
    DT.DECIMAL: "numeric",
    DT.TEXT: "text",
    DT.VARCHAR: "varchar",
    DT.CHAR: "bpchar",
    DT.DATE: "date",
    DT.TIMESTAMP: "timestamp",
    DT.TIMESTAMPTZ: "timestamptz",
    DT.VARBINARY: "bytea",
    DT.UUID: "uuid",
    DT.JSON: "json",
    DT.JSONB: "jsonb",
}

_JSON_OPERATORS = (
    exp.JSONExtract,
    exp.JSONExtractScalar,
    exp.JSONBExtract,
    exp.JSONBExtractScalar,
    exp.JSONBContainsTopKey,
    exp.JSONBContainsAnyTopKeys,
    exp.JSONBContainsAllTopKeys,
)

_FUNCTION_NAMES = {
    exp.CurrentTimestamp: "now",
    exp.CurrentDate: "current_date",
    exp.CurrentSchema: "current_schema",
    exp.CurrentUser: "current_user",
    exp.SessionUser: "session_user",
    exp.CurrentVersion: "version",
    exp.CurrentDatabase: "current_database",
    exp.CurrentCatalog: "current_catalog",
    exp.Count: "count",
    exp.Sum: "sum",
    exp.Avg: "avg",
    exp.Min: "min",
    exp.Max: "max",
    exp.TimestampTrunc: "date_trunc",
    exp.DateTrunc: "date_trunc",
    exp.AtTimeZone: "timezone",
    exp.ConvertTimezone: "timezone",
    exp.TimeToStr: "to_char",
    exp.Interval: "interval",
}


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What the session-dependent functions answer.

    ``now()`` is not a constant of the compiled query: it becomes the extra
    parameter ``$now_param`` that each execution binds to its transaction's
    start time, so a prepared statement never freezes the clock.
    """

    version: str
    database: str
    user: str
    now_param: int = 0
    session_id: int = 0
    session_user: str = ""
    """SET SESSION AUTHORIZATION's user; ``user`` is the current one (SET ROLE's)."""


@dataclass(frozen=True, slots=True)
class OutputColumn:
    name: str
    table_oid: int = 0
    attnum: int = 0
    typmod: int = -1
    is_varchar: bool = False
    is_bpchar: bool = False
    text_type_oid: int = 0
    """uuid, json or jsonb for such a column: DuckDB has one JSON type for json and jsonb,
    and rows a statement wrote (RETURNING, COPY) reach it as text."""
    is_oid: bool = False
    """A ``::oid`` cast: DuckDB's number, described and sent as PostgreSQL's oid (26)."""


def _is_integer(node: exp.Expr) -> bool:
    return node.type is not None and node.type.this in INTEGER_TYPES


def _error_if_zero(divisor: exp.Expr) -> exp.Expr:
    return exp.Case(
        ifs=[
            exp.If(
                this=exp.EQ(this=divisor.copy(), expression=exp.Literal.number(0)),
                true=exp.Anonymous(
                    this="error", expressions=[exp.Literal.string("division by zero")]
                ),
            )
        ],
        default=divisor,
    )


def parse_bytea(text: str) -> bytes:
    """Decode a bytea literal as PostgreSQL reads it: ``\\x`` hex, or the escape format."""
    if text.startswith("\\x"):
        digits = "".join(text[2:].split())
        try:
            return bytes.fromhex(digits)
        except ValueError as exc:
            # PostgreSQL's hex_decode reports bad digits and odd lengths as 22023.
            raise InvalidParameterValue(f'invalid hexadecimal data: "{text}"') from exc
    out = bytearray()
    index = 0
    while index < len(text):
        char = text[index]
        if char != "\\":
            out += char.encode()
            index += 1
        elif text[index + 1 : index + 2] == "\\":
            out.append(0x5C)
            index += 2
        elif len(text) >= index + 4 and all(c in "01234567" for c in text[index + 1 : index + 4]):
            out.append(int(text[index + 1 : index + 4], 8) & 0xFF)
            index += 4
        else:
            raise InvalidTextRepresentation("invalid input syntax for type bytea")
    return bytes(out)


def _blob_literal(data: bytes) -> exp.Expr:
    """A DuckDB BLOB literal, every byte spelled as ``\\xHH`` (DuckDB's escape format)."""
    text = "".join(f"\\x{byte:02X}" for byte in data)
    return exp.cast(exp.Literal.string(text), exp.DataType.build("BLOB", dialect="duckdb"))


def _rewrite_bytea(node: exp.Expr) -> exp.Expr:
    if (
        isinstance(node, exp.Cast)
        and node.to.this in _BINARY_TYPES
        and isinstance(node.this, exp.Literal)
        and node.this.is_string
    ):
        return _blob_literal(parse_bytea(node.this.name))
    arg_type = node.this.type if isinstance(node, exp.Length) else None
    if arg_type is not None and arg_type.this in _BINARY_TYPES:
        return exp.Anonymous(this="octet_length", expressions=[node.this])
    if (
        isinstance(node, exp.Cast)
        and node.to.this in (DT.TEXT, DT.VARCHAR)
        and not node.to.expressions
        and node.this.type is not None
        and node.this.type.this in _BINARY_TYPES
    ):
        # bytea's text is byteaout's hex form (DuckDB's cast would spell bytes as \x00).
        hexed = exp.Lower(this=exp.Hex(this=node.this))
        return exp.DPipe(this=exp.Literal.string("\\x"), expression=hexed)
    return node


def _rewrite_length_cast(node: exp.Expr) -> exp.Expr:
    """An explicit cast to ``varchar(n)`` or ``char(n)`` cuts the value to n characters, as
    PostgreSQL's does (an assignment refuses instead, in dml).  A ``char(n)`` value also
    loses its trailing spaces, as stored ones do (``storage.data_type``); the output pads
    it again."""
    if not isinstance(node, exp.Cast):
        return node
    blank_padded = node.to.this in (DT.CHAR, DT.BPCHAR, DT.NCHAR)
    if node.to.this is not DT.VARCHAR and not blank_padded:
        return node
    params = node.to.expressions
    size = params[0].this if params and isinstance(params[0], exp.DataTypeParam) else None
    if size is None and node.to.this in (DT.CHAR, DT.NCHAR):
        size = exp.Literal.number(1)
    text: exp.Expr = exp.Cast(this=node.this, to=exp.DataType.build("VARCHAR"))
    if isinstance(size, exp.Literal) and not size.is_string:
        text = exp.Anonymous(this="left", expressions=[text, size.copy()])
    elif not blank_padded:
        return node
    if blank_padded:
        text = exp.Anonymous(this="rtrim", expressions=[text, exp.Literal.string(" ")])
    return text


def _rewrite_uuid_literal(node: exp.Expr) -> exp.Expr:
    """A uuid constant read as uuid_in reads it (a hyphen after any four digits, braces), which
    is more than DuckDB's cast takes; a bad one is 22P02 in PostgreSQL's words, also where a
    string constant meets a uuid (``id = 'nope'``), even before any row is compared."""
    if (
        isinstance(node, exp.Cast)
        and node.to.this is DT.UUID
        and isinstance(node.this, exp.Literal)
        and node.this.is_string
    ):
        return exp.cast(exp.Literal.string(canonical_uuid(node.this.name)), node.to)
    if isinstance(node, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In)):
        operands = [node.this, *(node.expressions if isinstance(node, exp.In) else [])]
        if isinstance(node, exp.Binary):
            operands.append(node.expression)
        if any(o.type is not None and o.type.this is DT.UUID for o in operands):
            for operand in operands:
                if isinstance(operand, exp.Literal) and operand.is_string:
                    canonical = exp.Literal.string(canonical_uuid(operand.name))
                    operand.replace(exp.cast(canonical, exp.DataType.build("UUID")))
    return node


def _rewrite_function(node: exp.Expr) -> exp.Expr:
    """PostgreSQL functions DuckDB lacks or answers differently: ``round`` of a float rounds
    half to even (rint), ``every`` is ``bool_and``, ``num_nulls``/``num_nonnulls`` count."""
    if (
        isinstance(node, exp.Round)
        and node.args.get("decimals") is None
        and not isinstance(node.this, exp.Literal)  # 2.5 is numeric in PostgreSQL
        and node.this.type is not None
        and node.this.type.this in (DT.DOUBLE, DT.FLOAT)
    ):
        return exp.Anonymous(this="round_even", expressions=[node.this, exp.Literal.number(0)])
    if isinstance(node, exp.Hex):
        return _to_hex(node.this)
    name = node.name.lower() if isinstance(node, exp.Anonymous) else ""
    if name in ("quote_literal", "quote_nullable") and len(node.expressions) == 1:
        quoted = _quote_literal(node.expressions[0])
        if name == "quote_nullable":
            return exp.Coalesce(this=quoted, expressions=[exp.Literal.string("NULL")])
        return quoted
    if name == "quote_ident" and len(node.expressions) == 1:
        return _quote_ident(node.expressions[0])
    if name == "every":
        return exp.Anonymous(this="bool_and", expressions=node.expressions)
    if name in ("num_nulls", "num_nonnulls") and node.expressions:
        test = exp.Is if name == "num_nulls" else (lambda **a: exp.Not(this=exp.Is(**a)))
        terms = [
            exp.Case(
                ifs=[
                    exp.If(this=test(this=arg, expression=exp.Null()), true=exp.Literal.number(1))
                ],
                default=exp.Literal.number(0),
            )
            for arg in node.expressions
        ]
        total: exp.Expr = terms[0]
        for term in terms[1:]:
            total = exp.Add(this=total, expression=term)
        return exp.Cast(this=exp.Paren(this=total), to=exp.DataType.build("INTEGER"))
    return node


def _to_hex(arg: exp.Expr) -> exp.Expr:
    """PostgreSQL's to_hex: lower case, and a negative integer in its own width's two's
    complement (DuckDB's hex widens an integer to 64 bits first)."""
    narrow = arg.type is not None and arg.type.this in _SMALL_INTEGERS
    sign, literal = (-1, arg.this) if isinstance(arg, exp.Neg) else (1, arg)
    if isinstance(literal, exp.Literal) and not literal.is_string:
        # PostgreSQL types a constant (its minus sign folded in) by its value.
        narrow = -(2**31) <= sign * int(float(literal.this)) < 2**31
    if narrow:
        arg = exp.BitwiseAnd(
            this=exp.cast(arg, exp.DataType.build("BIGINT")),
            expression=exp.Literal.number(0xFFFFFFFF),
        )
    return exp.Lower(this=exp.Anonymous(this="to_hex", expressions=[arg]))


def _quote_ident(arg: exp.Expr) -> exp.Expr:
    """PostgreSQL's quote_ident as sql.common.names.quote_ident does it, vectorised: a plain
    lower-case name as it is, any other in double quotes (doubled inside).  NULL in, NULL out."""
    text = exp.cast(arg, exp.DataType.build("VARCHAR"))
    plain = exp.Anonymous(
        this="regexp_full_match",
        expressions=[text.copy(), exp.Literal.string("[a-z_][a-z0-9_$]*")],
    )
    doubled = exp.Anonymous(
        this="replace", expressions=[text.copy(), exp.Literal.string('"'), exp.Literal.string('""')]
    )
    quote = exp.Literal.string('"')
    quoted = exp.DPipe(this=exp.DPipe(this=quote, expression=doubled), expression=quote.copy())
    return exp.Case(ifs=[exp.If(this=plain, true=text)], default=quoted)


def _quote_literal(arg: exp.Expr) -> exp.Expr:
    """PostgreSQL's quote_literal: quotes doubled; a value with a backslash becomes an
    E'' string with the backslashes doubled too.  NULL in, NULL out."""
    text = exp.cast(arg, exp.DataType.build("VARCHAR"))

    def replace(value: exp.Expr, old: str, new: str) -> exp.Expr:
        return exp.Anonymous(
            this="replace",
            expressions=[value, exp.Literal.string(old), exp.Literal.string(new)],
        )

    plain = replace(text.copy(), "'", "''")
    escaped = replace(replace(text.copy(), "\\", "\\\\"), "'", "''")
    quote = exp.Literal.string("'")
    has_backslash = exp.GT(
        this=exp.Anonymous(this="strpos", expressions=[text.copy(), exp.Literal.string("\\")]),
        expression=exp.Literal.number(0),
    )
    return exp.Case(
        ifs=[
            exp.If(
                this=has_backslash,
                true=exp.DPipe(
                    this=exp.DPipe(this=exp.Literal.string("E'"), expression=escaped),
                    expression=quote.copy(),
                ),
            )
        ],
        default=exp.DPipe(
            this=exp.DPipe(this=quote.copy(), expression=plain), expression=quote.copy()
        ),
    )


def _rewrite_arithmetic(node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.Div):
        left, right = node.this, node.expression
        if _is_integer(left) and _is_integer(right):
            return exp.IntDiv(this=left, expression=right)
        divisor = _error_if_zero(right)
        divisor.type = right.type
        checked = exp.Div(this=left, expression=divisor)
        checked.type = node.type
        return rewrite_float_arithmetic(checked)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul)):
        return rewrite_float_arithmetic(node)
    if isinstance(node, exp.Mod):
        return exp.Mod(this=node.this, expression=_error_if_zero(node.expression))
    # A window's sum is cast outside its OVER clause: ``CAST(sum(x) OVER (...) AS BIGINT)``.
    summed = node.this if isinstance(node, exp.Window) else node
    arg = summed.this if isinstance(summed, exp.Sum) else None
    if isinstance(node, exp.Sum) and isinstance(node.parent, exp.Window):
        return node
    if arg is not None and arg.type is not None and arg.type.this in _SMALL_INTEGERS:
        return exp.cast(node, exp.DataType.build("BIGINT"))
    return node


CLOCK_FUNCTION = "nyf_clock_micros"
"""The wall clock in microseconds, read on every call (``sql.execution.clock_functions``)."""
TIMEOFDAY_FUNCTION = "nyf_timeofday"
"""timeofday()'s text of the wall clock in a time zone (``sql.execution.clock_functions``)."""
_TIMESTAMPTZ = exp.DataType.build("TIMESTAMPTZ")


def clock_function(node: exp.Expr) -> exp.Expr | None:
    """``statement_timestamp()``, ``clock_timestamp()`` and ``timeofday()`` as DuckDB reads
    them; None for any other node."""
    if not isinstance(node, exp.Anonymous) or node.expressions:
        return None
    name = node.name.lower()
    if name == "statement_timestamp":
        # DuckDB's clock of this statement: each statement runs in its own DuckDB transaction.
        return exp.cast(exp.Anonymous(this="get_current_timestamp"), _TIMESTAMPTZ)
    if name == "clock_timestamp":
        micros = exp.Anonymous(this=CLOCK_FUNCTION)
        return exp.Anonymous(this="make_timestamptz", expressions=[micros])
    if name == "timeofday":
        zone = exp.Anonymous(this="current_setting", expressions=[exp.Literal.string("TimeZone")])
        return exp.Anonymous(this=TIMEOFDAY_FUNCTION, expressions=[zone])
    return None


def _session_function(node: exp.Expr, facts: SessionFacts) -> exp.Expr | None:
    name = node.name.lower() if isinstance(node, exp.Anonymous) else ""
    if isinstance(node, exp.CurrentTimestamp) or name in ("now", "transaction_timestamp"):
        return exp.cast(
            exp.Parameter(this=exp.Literal.number(facts.now_param)),
            exp.DataType.build("TIMESTAMPTZ"),
        )
    clock = clock_function(node)
    if clock is not None:
        return clock
    return session_literal(node, facts)


def session_literal(node: exp.Expr, facts: SessionFacts) -> exp.Expr | None:
    """``current_schema``, ``session_user``, ``current_user``, ``version()`` or
    ``current_database()`` as the literal the session gives it; None for another node."""
    name = node.name.lower() if isinstance(node, exp.Anonymous) else ""
    if isinstance(node, exp.CurrentSchema) or name == "current_schema":
        return exp.Literal.string("public")
    if isinstance(node, exp.SessionUser) or name == "session_user":
        return exp.Literal.string(facts.session_user or facts.user)
    if isinstance(node, exp.CurrentUser) or name in ("current_user", "user", "current_role"):
        return exp.Literal.string(facts.user)
    if isinstance(node, exp.CurrentVersion) or name == "version":
        return exp.Literal.string(facts.version)
    if isinstance(node, (exp.CurrentDatabase, exp.CurrentCatalog)) or name == "current_database":
        return exp.Literal.string(facts.database)
    return None


def _sequence_function(node: exp.Expr, facts: SessionFacts) -> exp.Expr | None:
    """``nextval('s'[::regclass])`` and friends become the nyf_ functions, told the session."""
    if not isinstance(node, exp.Anonymous):
        return None
    target = SEQUENCE_FUNCTIONS.get(node.name.lower())
    if target is None:
        return None
    args = [_without_regclass(a) for a in node.expressions]
    if node.name.lower() == "setval" and len(args) == 2:
        args.append(exp.true())
    args.append(exp.Literal.number(facts.session_id))
    return exp.Anonymous(this=target, expressions=args)


def _without_regclass(node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.Cast) and "regclass" in node.to.sql().lower():
        return exp.cast(node.this, exp.DataType.build("VARCHAR"))
    return node


def output_name(projection: exp.Expr) -> str:
    """PostgreSQL's name for an output column."""
    alias = projection.alias if isinstance(projection, exp.Alias) else ""
    inner = projection.this if isinstance(projection, exp.Alias) else projection
    core = inner
    while isinstance(core, exp.Paren):
        core = core.this
    generated = (
        _SQLGLOT_ALIAS.match(alias)
        or (not isinstance(core, exp.Column) and alias.lower() == core.name.lower())
        # qualify names ``doc -> 'k'`` after its key; PostgreSQL calls it ?column?
        or (isinstance(inner, _JSON_OPERATORS) and alias == inner.output_name)
    )
    if alias and not generated:
        return alias
    while isinstance(inner, (exp.Paren, exp.Window, exp.Filter)):
        inner = inner.this
    if isinstance(inner, exp.Subquery) and isinstance(inner.this, exp.Select):
        # A scalar subquery is named after its one column: (SELECT count(*) ...) is count.
        projections = inner.this.expressions
        return output_name(projections[0]) if len(projections) == 1 else "?column?"
    if isinstance(inner, exp.Column):
        return inner.name
    if isinstance(inner, exp.Cast):
        while isinstance(inner.this, exp.Cast) and _cast_argument_named(inner.this):
            inner = inner.this  # x::regclass::text is x, as PostgreSQL names it
        if isinstance(inner.this, exp.Column):
            return inner.this.name
        if isinstance(inner.this, exp.Anonymous):
            return inner.this.name.lower()  # f(x)::text is named f, as PostgreSQL names it
        if isinstance(inner.this, exp.Array):
            return "array"
        if isinstance(inner.this, exp.Func) and not isinstance(
            inner.this, (exp.Binary, exp.Cast, exp.Case)
        ):
            named = output_name(inner.this)  # count(*)::numeric is count, as f(x)::text is f
            if named != "?column?":
                return named
        return _cast_name(inner.to)
    if isinstance(inner, _JSON_OPERATORS):
        return "?column?"
    if isinstance(inner, exp.Trim):
        position = str(inner.args.get("position") or "").upper()
        return {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(position, "btrim")
    if isinstance(inner, exp.Anonymous):
        return inner.name.lower()
    called_as = inner.meta.get("called_as") if isinstance(inner, exp.Func) else None
    if called_as and called_as.isidentifier():
        return str(called_as)
    for cls, name in _FUNCTION_NAMES.items():
        if isinstance(inner, cls):
            return name
    if isinstance(inner, exp.Func) and not isinstance(inner, exp.Binary):
        return inner.sql_name().lower()
    if isinstance(inner, exp.Case):
        return "case"
    if isinstance(inner, exp.Boolean):
        return "bool"
    return "?column?"


def _cast_argument_named(cast: exp.Cast) -> bool:
    """Whether a cast's column name comes from its argument (a column, a call, ARRAY[...]),
    not its type: PostgreSQL then names an outer cast of it so too."""
    arg = cast.this
    while isinstance(arg, exp.Cast):
        arg = arg.this
    return isinstance(arg, (exp.Column, exp.Anonymous, exp.Array))


def _cast_name(to: exp.DataType) -> str:
    """A cast's column name: its type's (an array's, its element type's), as PostgreSQL's."""
    while to.this is DT.ARRAY and to.expressions and isinstance(to.expressions[0], exp.DataType):
        to = to.expressions[0]
    if to.this is DT.USERDEFINED and isinstance(to.args.get("kind"), exp.Dot):
        return to.args["kind"].expression.name.lower()  # pg_catalog.regtype is regtype
    return _CAST_NAMES.get(to.this, to.sql(dialect="postgres").lower())


def _named_text_cast(node: exp.Expr) -> tuple[int, int] | None:
    """(type OID, typmod) of ``x::varchar[(n)]`` or ``x::name``: DuckDB's result is VARCHAR,
    which would describe it as text."""
    while isinstance(node, exp.Paren):
        node = node.this
    if not isinstance(node, exp.Cast):
        return None
    to = node.to
    if to.this is DT.NAME:
        return TypeOid.NAME, -1
    if to.this is not DT.VARCHAR:
        return None
    params = to.expressions
    size = params[0].this if params and isinstance(params[0], exp.DataTypeParam) else None
    if isinstance(size, exp.Literal) and not size.is_string:
        return TypeOid.VARCHAR, int(size.name) + 4
    return TypeOid.VARCHAR, -1


def _blank_padded_length(node: exp.Expr) -> int | None:
    """n when ``node`` is a ``char(n)`` value (a cast, min(c), a subquery's column ...), whose
    output PostgreSQL pads to n; 0 for a ``bpchar`` without a length; None for anything else."""
    dtype = node.type
    if dtype is None or dtype.this not in (DT.CHAR, DT.BPCHAR, DT.NCHAR):
        return None
    params = dtype.expressions
    size = params[0].this if params and isinstance(params[0], exp.DataTypeParam) else None
    if isinstance(size, exp.Literal) and not size.is_string:
        return int(size.name)
    return 1 if dtype.this is not DT.BPCHAR else 0


def _output_columns(bound: BoundQuery) -> list[OutputColumn]:
    ast = bound.ast
    select = ast
    while isinstance(select, (exp.SetOperation, exp.Subquery)):
        select = select.this
    if not isinstance(select, exp.Select):
        return []
    sources = {
        ref.alias: ref for ref in bound.tables if ref.node.find_ancestor(exp.Select) is select
    }
    out = []
    for projection in select.expressions:
        name = output_name(projection)
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        if isinstance(inner, exp.Column) and name == inner.name and inner.table:
            name = _derived_name(select, inner) or name
        ref = sources.get(inner.table) if isinstance(inner, exp.Column) else None
        column = ref.table.schema.find(inner.name) if ref is not None else None
        if ref is not None and column is not None:
            out.append(
                OutputColumn(
                    name,
                    ref.table.oid,
                    ref.table.attnum(column.id),
                    column.type.pg_typmod,
                    column.type.pg_oid == TypeOid.VARCHAR,
                    column.type.blank_padded,
                    column.type.pg_oid if column.type.text_type else 0,
                )
            )
        elif (length := _blank_padded_length(projection)) is not None:
            out.append(OutputColumn(name, typmod=length + 4 if length else -1, is_bpchar=True))
        elif is_oid_cast(inner):
            out.append(OutputColumn(name, is_oid=True))
        elif (named := _named_text_cast(inner)) is not None:
            out.append(OutputColumn(name, typmod=named[1], text_type_oid=named[0]))
        elif inner.type is not None and inner.type.this is DT.TIMETZ:
            out.append(OutputColumn(name, text_type_oid=TypeOid.TIMETZ))
        elif (kind := json_kind(inner)) is not None:
            out.append(OutputColumn(name, text_type_oid=_JSON_OIDS[kind]))
        elif (oid := _parameter_oid(inner, bound.param_oids)) in _JSON_OIDS.values():
            # ``SELECT $1`` of a json or jsonb parameter: DuckDB has one JSON type for both,
            # and json's text is kept as VARCHAR (``json_operators._json_in``).
            out.append(OutputColumn(name, text_type_oid=oid))
        else:
            out.append(OutputColumn(name))
    return out


_JSON_OIDS = {"json": int(TypeOid.JSON), "jsonb": int(TypeOid.JSONB)}


def _derived_name(select: exp.Select, column: exp.Column) -> str | None:
    """PostgreSQL's name for ``column`` of a subquery or CTE ``select`` reads, from that
    query's projection: sqlglot names ``(select 1) s``'s column ``1`` and
    ``(select 1 + 1) s``'s ``_col_0`` where PostgreSQL says ``?column?``."""
    with_ = select.args.get("with_") or select.args.get("with")
    ctes = {cte.alias_or_name: cte.this for cte in with_.expressions} if with_ else {}
    from_ = select.args.get("from_") or select.args.get("from")
    items = ([from_.this] if from_ else []) + [j.this for j in select.args.get("joins") or []]
    for item in items:
        query = None
        if isinstance(item, exp.Subquery) and item.alias_or_name == column.table:
            query = item.this
        elif isinstance(item, exp.Table) and item.alias_or_name == column.table:
            query = ctes.get(item.name) if not item.db else None
        while isinstance(query, (exp.SetOperation, exp.Subquery)):
            query = query.this
        if not isinstance(query, exp.Select):
            continue
        source = next((p for p in query.expressions if p.alias_or_name == column.name), None)
        if source is None:
            return None
        inner = source.this if isinstance(source, exp.Alias) else source
        if isinstance(inner, exp.Column) and inner.name == column.name:
            return _derived_name(query, inner) or column.name
        name = output_name(source)
        if name == "bool" and source.alias != "bool":
            return "?column?"  # a subquery's bare true: PostgreSQL's ?column?, not bool
        return name
    return None


def _parameter_oid(node: exp.Expr, param_oids: list[int]) -> int:
    """The type of ``node`` when it is a bare ``$n`` (in parentheses or not), else 0."""
    while isinstance(node, exp.Paren):
        node = node.this
    if not (isinstance(node, exp.Parameter) and isinstance(node.this, exp.Literal)):
        return 0
    if node.this.is_string:
        return 0
    number = parameter_number(node)
    return param_oids[number - 1] if 0 < number <= len(param_oids) else 0


def scan_view_table(node: exp.Table, view: str, alias: exp.TableAlias) -> exp.Table:
    """The reference to a base table's scan view standing in for ``node``: it keeps the
    joins nested under it (``a LEFT JOIN b JOIN c ON .. ON ..``) and its TABLESAMPLE."""
    replacement = exp.Table(this=exp.to_identifier(view, quoted=True), alias=alias)
    for arg in ("joins", "sample", "laterals"):
        if node.args.get(arg):
            replacement.set(arg, node.args[arg])
    return replacement


def _without_trailing_blanks(param: exp.Expr, oid: int) -> exp.Expr:
    """``rtrim($n, ' ')`` for a bpchar parameter, of each element for a bpchar[] one."""
    blank = exp.Literal.string(" ")
    if oid == TypeOid.BPCHAR:
        text = exp.cast(param.copy(), exp.DataType.build("VARCHAR", dialect="duckdb"))
        return exp.Anonymous(this="rtrim", expressions=[text, blank])
    texts = exp.cast(param.copy(), exp.DataType.build("VARCHAR[]", dialect="duckdb"))
    element = exp.to_identifier("_element")
    trimmed = exp.Anonymous(this="rtrim", expressions=[exp.column(element.copy()), blank])
    return exp.Anonymous(
        this="list_transform",
        expressions=[texts, exp.Lambda(this=trimmed, expressions=[element])],
    )


def used_parameters(bound: BoundQuery) -> list[int]:
    """The ``$n`` numbers the query names, ascending."""
    return sorted({parameter_number(p) for p in parameters(bound.ast)})


def to_duckdb(
    bound: BoundQuery, view_names: list[str], facts: SessionFacts
) -> tuple[str, list[OutputColumn], bool]:
    """DuckDB SQL for the bound query, its PostgreSQL column description, and whether it uses now()."""
    tree, columns, uses_now = duckdb_tree(bound, view_names, facts)
    return tree.sql(dialect="duckdb"), columns, uses_now


def duckdb_tree(
    bound: BoundQuery, view_names: list[str], facts: SessionFacts
) -> tuple[exp.Expr, list[OutputColumn], bool]:
    """``to_duckdb`` before it is spelt: DuckDB SQL's tree (``array_depths`` spells it again)."""
    columns = _output_columns(bound)
    ast = bound.ast
    spell_zoned_times(
        ast, {i: c.name for i, c in enumerate(columns) if c.text_type_oid == TypeOid.TIMETZ}
    )
    for ref, view in zip(bound.tables, view_names, strict=True):
        replacement = scan_view_table(
            ref.node, view, exp.TableAlias(this=exp.to_identifier(ref.alias, quoted=True))
        )
        ref.node.replace(replacement)
        ref.node = replacement
    uses_now = False
    for param in parameters(ast):
        number = parameter_number(param)
        type_name = oid_type_name(bound.param_oids[number - 1])
        if param.meta.get(BLANK_PADDED_PARAMETER):
            param.replace(_without_trailing_blanks(param, bound.param_oids[number - 1]))
        elif type_name is not None and (
            not isinstance(param.parent, exp.Cast) or is_far_date_text(param, type_name)
        ):
            typed = exp.cast(param.copy(), exp.DataType.build(type_name, dialect="duckdb"))
            typed.type = typed.to.copy()
            param.replace(typed)
    # DuckDB takes exactly the parameters a statement names, so the used ones are numbered
    # densely (a client may declare some that only RETURNING, or nothing, uses).
    dense = {old: new for new, old in enumerate(used_parameters(bound), start=1)}
    for param in parameters(ast):
        param.set("this", exp.Literal.number(dense[parameter_number(param)]))

    # Children before parents, so a rewritten node's operands are already rewritten.
    for node in reversed(list(ast.walk(bfs=False))):
        replaced = _session_function(node, facts)
        if replaced is not None and replaced.find(exp.Parameter):
            uses_now = True
        if replaced is None:
            replaced = _sequence_function(node, facts)
        if replaced is None:
            replaced = rewrite_json(node)
        if replaced is node:
            replaced = rewrite_formatting(node)
            if replaced is node:
                replaced = rewrite_to_char(node)
        if replaced is node:
            replaced = rewrite_interval_arithmetic(node, _error_if_zero)
        if replaced is node:
            replaced = rewrite_bc_year(node)
        if replaced is node:
            replaced = rewrite_bc_text(node)
            if replaced is not node:
                replaced = _rewrite_length_cast(replaced)  # ``::varchar(n)`` cuts the text
        if replaced is node:
            replaced = rewrite_array_text(node)
        if replaced is node:
            replaced = rewrite_array_dimensions(node)
        if replaced is node:
            replaced = rewrite_numeric(node)
        if replaced is node:
            replaced = rewrite_string_function(node)
        if replaced is node:
            replaced = rewrite_generate_series(node)
        if replaced is node and isinstance(node, exp.DataType) and node.this is DT.NAME:
            # PostgreSQL's catalog type ``name`` (``'a'::name``, ``'{a,b}'::name[]``) is text.
            replaced = exp.DataType.build("VARCHAR")
        if replaced is node:
            replaced = _rewrite_arithmetic(
                _rewrite_function(_rewrite_length_cast(_rewrite_bytea(_rewrite_uuid_literal(node))))
            )
        if replaced is not node:
            if node is ast:
                ast = replaced
            else:
                node.replace(replaced)
    flatten_quantified_arrays(ast)
    return ast, columns, uses_now
