"""Identifier normalisation as PostgreSQL does it: unquoted names fold to lower case."""

from __future__ import annotations

from sqlglot import exp


def identifier_name(node: exp.Expression) -> str:
    """The catalog name of an identifier, table or column node."""
    ident = node if isinstance(node, exp.Identifier) else node.this
    if isinstance(ident, exp.Identifier):
        return ident.name if ident.quoted else ident.name.lower()
    return node.name.lower()
