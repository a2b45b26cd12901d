"""reg* casts in catalog queries: ``x::regclass`` and friends make OIDs, as in PostgreSQL,
compared and sorted as OIDs and shown by name (``show_reg_outputs``); ``::oid``, ``::name``
and the other catalog types DuckDB lacks become their DuckDB types."""

from __future__ import annotations

from sqlglot import exp

from sql.pg_catalog import array_output, functions
from sql.pg_catalog.cast_targets import cast_target
from sql.pg_catalog.reg_arrays import (
    REG_ARRAY_OUT,
    is_array_literal,
    literal_array,
    reg_array,
    reg_array_element,
)
from storage.type_oids import TypeOid

REG_CASTS = {"regclass", "regtype", "regnamespace", "regproc", "regprocedure", "regrole"}
_PLAIN_CASTS = {
    "oid": "UINTEGER",
    "name": "VARCHAR",
    "char": "VARCHAR",
    "pg_node_tree": "VARCHAR",
    "int2vector": "SMALLINT[]",
    "oidvector": "UINTEGER[]",
    "xid": "UINTEGER",
}

OIDVECTOR_COLUMNS = frozenset(("proargtypes", "indclass", "indcollation", "partclass",
                                 "partcollation"))  # fmt: skip
"""The catalogs' oidvector columns, held as UINTEGER[] and sent as oidvector (``23 25``)."""


def is_reg_cast(node: exp.Cast) -> bool:
    return cast_target(node) in REG_CASTS or reg_array_element(node) is not None


def _call(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=functions.PREFIX + name, expressions=list(args))


_REG_OUT = {
    "regproc": "regproc_out",
    "regclass": "regclass_out",
    "regtype": "regtype_out",
    "regnamespace": "regnamespace_out",
    "regrole": "regrole_out",
}
# Functions returning a reg* value: an OID in comparisons, a name when shown or cast to text.
REG_RESULTS = {"to_regclass": "regclass", "to_regtype": "regtype"}
# Functions returning a reg* value computed as its name: described as the reg* type.
REG_NAMED_RESULTS = {"pg_typeof": "regtype"}
_TEXT_TYPES = {exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR, exp.DataType.Type.NAME}


def _reg_kind(node: exp.Expr) -> str | None:
    while isinstance(node, exp.Paren):
        node = node.this
    return node.meta.get("reg") if isinstance(node, exp.Expression) else None


def compared_by_name(node: exp.Expr) -> exp.Expr | None:
    """``pg_typeof(x) = 'integer'::regtype`` (either side, = or <>): pg_typeof's regtype is
    computed as its name, so the other side's OID is compared as its name too (else DuckDB
    reads the name as a number, 22P02)."""
    if not isinstance(node, (exp.EQ, exp.NEQ)):
        return None
    left, right = node.this, node.expression
    for named, other in ((left, right), (right, left)):
        kind = named.meta.get("reg_named") if isinstance(named, exp.Expression) else None
        if kind is not None and _reg_kind(other) == kind:
            other.replace(_call(_REG_OUT[kind], other.copy()))
            return node
    return None


def as_reg(call: exp.Expr, kind: str) -> exp.Expr:
    call.meta["reg"] = kind
    return call


def _uinteger(operand: exp.Expr) -> exp.Expr:
    return exp.cast(operand, exp.DataType.build("UINTEGER", dialect="duckdb"))


def rewrite_cast(node: exp.Cast) -> exp.Expr | None:
    """reg* casts make OIDs (as in PostgreSQL); the name appears when cast to text or shown."""
    target = cast_target(node)
    operand = node.this
    reg_element = reg_array_element(node)
    if reg_element is not None:
        return reg_array(node, reg_element)
    if is_array_literal(node):
        return literal_array(operand.name, node.to.expressions[0])
    text = exp.cast(operand, exp.DataType.build("VARCHAR", dialect="duckdb"))
    if target == "regclass":
        return as_reg(_call("regclass_in", text), "regclass")
    if target == "regtype":
        return as_reg(_call("regtype_in", text), "regtype")
    if target in ("regproc", "regprocedure"):
        return as_reg(_call("regproc_in", text), "regproc")
    if target == "regnamespace" and isinstance(operand, exp.Literal) and operand.is_string:
        return as_reg(_call("regnamespace_in", text), target)
    if target in ("regnamespace", "regrole"):
        return as_reg(_uinteger(operand), target)
    kind = _reg_kind(operand)
    is_text = target in ("text", "varchar", "name") or (
        isinstance(node.to, exp.DataType) and node.to.this in _TEXT_TYPES
    )
    if kind is not None and is_text:
        return _call(_REG_OUT[kind], operand)
    if kind == "regproc" and target == "oid":
        return _call("regproc_oid", operand.expressions[0] if operand.expressions else operand)
    if kind is not None and target == "oid":
        # A new node: exp.cast would return a regnamespace's own UINTEGER cast, still marked reg.
        return exp.Cast(this=operand, to=exp.DataType.build("UINTEGER", dialect="duckdb"))
    if target in _PLAIN_CASTS:
        return exp.cast(operand, exp.DataType.build(_PLAIN_CASTS[target], dialect="duckdb"))
    if is_text and isinstance(operand, exp.Column) and operand.name in OIDVECTOR_COLUMNS:
        return exp.Anonymous(
            this="array_to_string", expressions=[operand, exp.Literal.string(" ")]
        )  # oidvector's text: ``23 25``
    if is_text and not isinstance(operand, exp.Literal):
        return array_output.text_of(operand)
    return None


_REG_TYPE_OIDS = {
    "regclass": int(TypeOid.REGCLASS),
    "regtype": int(TypeOid.REGTYPE),
    "regproc": int(TypeOid.REGPROC),
    "regnamespace": int(TypeOid.REGNAMESPACE),
    "regrole": 4096,
}


def show_reg_outputs(ast: exp.Expr) -> dict[int, int]:
    """A reg* value in the select list is shown by name, as PostgreSQL's output function does.

    Returns the reg* type OID of each such output column of a plain SELECT (by position), to
    describe it as PostgreSQL does; its ORDER BY on one (by position or alias) keeps sorting
    by the OID, as PostgreSQL's reg* ordering does, not by the name shown."""
    described: dict[int, int] = {}
    if isinstance(ast, exp.Select) and not any(p.is_star for p in ast.expressions):
        described = _order_by_oid(ast)
    select = ast
    selects = []
    while isinstance(select, exp.SetOperation):
        selects.append(select.expression)
        select = select.this
    selects.append(select)
    for sel in selects:
        if not isinstance(sel, exp.Select):
            continue
        for position, projection in enumerate(sel.expressions):
            inner = projection.this if isinstance(projection, exp.Alias) else projection
            named = inner.meta.get("reg_named") if sel is select else None
            if named is not None:
                described[position] = _REG_TYPE_OIDS[named]
            kind = _reg_kind(inner)
            if kind is not None:
                if sel is select and select is not ast:  # a UNION's: described by its first
                    described[position] = _REG_TYPE_OIDS[kind]
                inner.replace(_call(_REG_OUT[kind], inner.copy()))
            element = inner.meta.get("reg_array")
            if element is not None:
                name = exp.to_identifier("nyala_oid")
                shown = _call(REG_ARRAY_OUT[element], exp.column(name.copy()))
                lambda_ = exp.Lambda(this=shown, expressions=[name])
                inner.replace(
                    exp.Anonymous(this="list_transform", expressions=[inner.copy(), lambda_])
                )
    return described


def _order_by_oid(select: exp.Select) -> dict[int, int]:
    """The reg* output columns of ``select`` (position: type OID); an ORDER BY naming one
    by position or alias is pointed at its OID expression before the name replaces it."""
    described: dict[int, int] = {}
    by_alias: dict[str, exp.Expr] = {}
    by_position: dict[int, exp.Expr] = {}
    for position, projection in enumerate(select.expressions):
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        kind = _reg_kind(inner)
        if kind is None:
            continue
        described[position] = _REG_TYPE_OIDS[kind]
        by_position[position + 1] = inner
        if isinstance(projection, exp.Alias):
            by_alias[projection.alias] = inner
    order = select.args.get("order")
    if order is None:
        return described
    for ordered in order.expressions:
        key = ordered.this
        source = None
        if isinstance(key, exp.Literal) and not key.is_string and key.name.isdigit():
            source = by_position.get(int(key.name))
        elif isinstance(key, exp.Column) and not key.table:
            source = by_alias.get(key.name)
        if source is not None:
            key.replace(source.copy())
    return described
