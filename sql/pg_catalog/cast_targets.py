"""The name of a cast's target type as a catalog query spells it: ``regclass``,
``pg_catalog.regtype``, ``"char"``, ``name`` (types sqlglot has no DataType for)."""

from __future__ import annotations

from sqlglot import exp


def cast_target(node: exp.Cast) -> str:
    to = node.to
    if isinstance(to, exp.ObjectIdentifier):
        return to.name.lower()
    if isinstance(to, exp.DataType) and to.this == exp.DataType.Type.USERDEFINED:
        kind = to.args.get("kind")
        if isinstance(kind, exp.Dot):
            return kind.expression.name.lower()
        if kind is not None:
            return kind.name.lower() if isinstance(kind, exp.Expression) else str(kind).lower()
    if isinstance(to, exp.DataType) and to.this == exp.DataType.Type.NAME:
        return "name"
    if isinstance(to, exp.DataType) and to.this == exp.DataType.Type.CHAR and not to.expressions:
        return "char" if '"char"' in to.sql(dialect="postgres") else ""
    return ""
