"""Identifier normalisation as PostgreSQL does it: unquoted names fold to lower case.

PostgreSQL's scanner folds every unquoted identifier (ASCII letters only) and
truncates every identifier to 63 bytes, so ``Foo``, ``FOO`` and ``foo`` are one
name wherever they appear; the frontend does the same to each parsed tree
(``fold_identifiers``), so later stages compare names as plain strings.

Every table lives in the one schema, ``public``; a name qualified with it is
the same table, and any other schema is an error rather than a silent match.
"""

from __future__ import annotations

import re
from typing import cast

from sqlglot import exp

from storage.errors import FeatureNotSupported, InvalidSchemaName, NameTooLong

SCHEMA = "public"
SYSTEM_SCHEMAS = ("pg_catalog", "information_schema")
NAMEDATALEN = 64
"""PostgreSQL's name buffer: identifiers keep at most NAMEDATALEN - 1 bytes."""

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fold(name: str) -> str:
    """An unquoted identifier as PostgreSQL stores it: ASCII letters lower-cased."""
    return name.translate(_ASCII_LOWER)


def truncate(name: str) -> str:
    """The first 63 bytes of a name, cut at a character boundary."""
    data = name.encode()
    if len(data) < NAMEDATALEN:
        return name
    return data[: NAMEDATALEN - 1].decode(errors="ignore")


def fold_identifiers(tree: exp.Expr) -> None:
    """Fold unquoted identifiers and truncate all of them, in place, as PostgreSQL's scanner."""
    for ident in tree.find_all(exp.Identifier):
        name = ident.this
        if isinstance(name, str):
            ident.set("this", truncate(name if ident.quoted else fold(name)))


def truncation_notices(words: list[tuple[str, bool]]) -> list[NameTooLong]:
    """A NOTICE for each (identifier, quoted) longer than 63 bytes, as PostgreSQL sends."""
    notices = []
    for word, quoted in words:
        name = word if quoted else fold(word)
        short = truncate(name)
        if short != name:
            notices.append(
                NameTooLong(
                    f'identifier "{name}" will be truncated to "{short}"', severity="NOTICE"
                )
            )
    return notices


def identifier_name(node: exp.Expr) -> str:
    """The catalog name of an identifier, table or column node."""
    ident = node if isinstance(node, exp.Identifier) else node.this
    if isinstance(ident, exp.Identifier):
        return truncate(ident.name if ident.quoted else fold(ident.name))
    return truncate(fold(node.name))


def listed_columns(node: exp.Expr) -> tuple[exp.Table, list[str] | None]:
    """A target with an optional column list (``t (a, b)``, an ``exp.Schema``): the table
    node and the listed names, None when no list is given."""
    if isinstance(node, exp.Schema):
        return node.this, [identifier_name(e) for e in node.expressions]
    return cast(exp.Table, node), None


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


def table_node(name: str) -> exp.Table:
    """A reference to the catalog table ``name``, exactly (``exp.to_table`` would fold it)."""
    return exp.Table(this=exp.to_identifier(name, quoted=True))


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
