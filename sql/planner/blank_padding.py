"""char(n) comparisons: a string literal compared with a blank-padded value loses its trailing spaces.

PostgreSQL compares ``char(n)`` values ignoring trailing spaces, and a string
literal compared with one is read as ``char`` too, so ``c = 'a  '`` matches a
stored ``'a'``.  nyala stores char(n) values without their padding
(``storage.data_type``), so trimming the literal once, before predicates are
pushed into scans and the query goes to DuckDB, gives PostgreSQL's answer
with plain string comparisons everywhere below.  A parameter the client left untyped is
bpchar there too: its value is trimmed wherever it is compared (DuckDB and every scan
that pushes it down), while one sent as text keeps its blanks, as PostgreSQL compares
text.
"""

from __future__ import annotations

from sqlglot import exp

from storage.type_oids import ARRAY_OID, TypeOid

_BLANK_PADDED = (exp.DataType.Type.CHAR, exp.DataType.Type.BPCHAR, exp.DataType.Type.NCHAR)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)


def _is_blank_padded(node: exp.Expr) -> bool:
    return node.type is not None and node.type.this in _BLANK_PADDED


_BPCHAR_OIDS = (TypeOid.BPCHAR, ARRAY_OID[TypeOid.BPCHAR])

BLANK_PADDED_PARAMETER = "nyala_blank_padded"
"""Meta key of a ``$n`` read as bpchar where it is compared: its value loses its trailing
blanks there (``transpile.to_duckdb`` and ``pushdown.Operand``)."""


def _trim(node: exp.Expr) -> None:
    if isinstance(node, exp.Literal) and node.is_string and node.name != node.name.rstrip(" "):
        trimmed = exp.Literal.string(node.name.rstrip(" "))
        trimmed.type = node.type
        node.replace(trimmed)


def _compared_with_blank_padded(ast: exp.Expr) -> list[exp.Expr]:
    """The operands compared with a char(n)-typed expression (the other side of ``=``,
    ``IN``'s list, ``BETWEEN``'s bounds)."""
    out: list[exp.Expr] = []
    for node in ast.find_all(*_COMPARISONS, exp.In, exp.Between):
        if isinstance(node, exp.In):
            if _is_blank_padded(node.this):
                out.extend(node.expressions)
        elif isinstance(node, exp.Between):
            if _is_blank_padded(node.this):
                out.extend((node.args["low"], node.args["high"]))
        elif _is_blank_padded(node.this):
            out.append(_quantified_array(node.expression) or node.expression)
        elif _is_blank_padded(node.expression):
            out.append(node.this)
    return out


def _quantified_array(node: exp.Expr) -> exp.Expr | None:
    """The array of ``ANY(array)`` or ``ALL(array)``, else None."""
    if isinstance(node, (exp.Any, exp.All)):
        inner = node.this
    elif (
        isinstance(node, exp.Anonymous) and node.name.lower() in ("any", "all") and node.expressions
    ):
        inner = node.expressions[0]
    else:
        return None
    while isinstance(inner, exp.Paren):
        inner = inner.this
    return inner


def trim_blank_padded_literals(ast: exp.Expr) -> None:
    """Trim, in place, string literals compared with a char(n)-typed expression."""
    for operand in _compared_with_blank_padded(ast):
        _trim(operand)


def mark_blank_padded_parameters(ast: exp.Expr, param_oids: list[int]) -> None:
    """Mark each ``$n`` of type bpchar (as PostgreSQL types an untyped one) compared with a
    char(n)-typed expression, or of type bpchar[] in ``c = ANY($n)``, so its value (each
    element) is compared without trailing blanks."""
    for operand in _compared_with_blank_padded(ast):
        inner = operand.this if isinstance(operand, exp.Parameter) else None
        if not (isinstance(inner, exp.Literal) and not inner.is_string):
            continue
        number = int(inner.name)
        if 0 < number <= len(param_oids) and param_oids[number - 1] in _BPCHAR_OIDS:
            operand.meta[BLANK_PADDED_PARAMETER] = True
