"""Identifier normalisation as PostgreSQL does it: unquoted names fold to lower case.

Every table lives in the one schema, ``public``; a name qualified with it is
the same table, and any other schema is an error rather than a silent match.
"""

from __future__ import annotations

import re

from sqlglot import exp

from storage.errors import FeatureNotSupported, InvalidSchemaName

SCHEMA = "public"
SYSTEM_SCHEMAS = ("pg_catalog", "information_schema")


def identifier_name(node: exp.Expr) -> str:
    """The catalog name of an identifier, table or column node."""
    ident = node if isinstance(node, exp.Identifier) else node.this
    if isinstance(ident, exp.Identifier):
        return ident.name if ident.quoted else ident.name.lower()
    return node.name.lower()


def table_name(node: exp.Table) -> str:
    """The catalog name of a table reference, after checking its schema and database."""
    schema = node.args.get("db")
    if schema is not None:
        schema_name = identifier_name(schema)
        if schema_name in SYSTEM_SCHEMAS:
            raise FeatureNotSupported(f'the system catalog "{schema_name}" is not available yet')
        if schema_name != SCHEMA:
            raise InvalidSchemaName(f'schema "{schema_name}" does not exist')
    if node.args.get("catalog") is not None:
        raise FeatureNotSupported(
            "cross-database references are not implemented: " + node.sql(dialect="postgres")
        )
    return identifier_name(node)


def strip_schema(node: exp.Table) -> None:
    """Drop a checked ``public.`` qualifier, so the reference binds like an unqualified one."""
    table_name(node)
    node.set("db", None)


_PLAIN = re.compile(r"^[a-z_][a-z0-9_$]*$")


def quote_ident(name: str) -> str:
    """PostgreSQL's quote_ident: quoted only when it must be (upper case, spaces ...)."""
    if _PLAIN.match(name):
        return name
    return '"' + name.replace('"', '""') + '"'
