"""SECURITY LABEL FOR nyala: the form in which pg_dump carries nyala's storage layout.

pg_dump knows nothing of Kudu-style partitioning or column encodings, but it
dumps every ``pg_seclabel`` row as ``SECURITY LABEL FOR provider ON ...``, and
PostgreSQL refuses those of a provider it has not loaded in a statement of
their own (``pg_dump --no-security-labels`` leaves them out).  nyala is the
provider ``nyala``: a table's label is its ``PARTITION BY HASH ... RANGE ...``
clause, a column's its ``ENCODING x COMPRESSION y``.  A dump labels a table
before its data and adds the primary key after it, so a table with the hidden
key keeps the clause until ADD PRIMARY KEY rewrites it into the partitions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from sqlglot import exp

from catalog.catalog import Catalog
from catalog.partition import PartitionSchema, RangeBounds
from catalog.rekey import has_hidden_key
from catalog.table import TableInfo
from sql.common.result import Result
from sql.ddl import partitions, tables
from sql.frontend.dialect import NyalaPartitionBy
from sql.frontend.parser import parse
from sql.frontend.statements import SecurityLabelStatement
from storage.errors import (
    DbError,
    FeatureNotSupported,
    InvalidParameterValue,
    UndefinedColumn,
    UndefinedTable,
)
from storage.schema import Schema

PROVIDER = "nyala"
_DEFAULT_STORAGE = ("AUTO_ENCODING", "DEFAULT_COMPRESSION")


def column_label(encoding: str, compression: str) -> str | None:
    """A column's label (None when it has the default encoding and compression)."""
    if (encoding, compression) == _DEFAULT_STORAGE:
        return None
    return f"ENCODING {encoding} COMPRESSION {compression}"


def security_label(statement: SecurityLabelStatement, catalog: Catalog) -> Result:
    if statement.provider not in ("", PROVIDER):
        raise InvalidParameterValue(f'security label provider "{statement.provider}" is not loaded')
    table = catalog.find_table(statement.table)
    if table is None:
        raise UndefinedTable(f'relation "{statement.table}" does not exist')
    if statement.column:
        _label_column(table, statement.column, statement.label, catalog)
    else:
        _label_table(table, statement.label, catalog)
    return Result(command_tag="SECURITY LABEL")


def _label_column(table: TableInfo, name: str, label: str | None, catalog: Catalog) -> None:
    column = next((c for c in table.columns if c.name == name), None)
    if column is None:
        raise UndefinedColumn(f'column "{name}" of relation "{table.name}" does not exist')
    words = (label or "").split()
    if len(words) % 2 or any(w.lower() not in ("encoding", "compression") for w in words[::2]):
        raise InvalidParameterValue(
            f'invalid nyala label for column "{name}": "{label}"',
            hint="A column's label is ENCODING <encoding> COMPRESSION <compression>.",
        )
    attributes = {k.lower(): v.upper() for k, v in zip(words[::2], words[1::2], strict=True)}
    encoding, compression = tables.check_storage_attributes(name, column.type, attributes)
    replaced = dataclasses.replace(column, encoding=encoding, compression=compression)
    schema = Schema(
        tuple(replaced if c.id == column.id else c for c in table.schema.columns),
        table.schema.num_key_columns,
    )
    storage = tuple(entry for entry in table.column_storage if entry[0] != column.id)
    if (encoding, compression) != _DEFAULT_STORAGE:
        storage = (*storage, (column.id, encoding, compression))
    catalog.replace_table(table, dataclasses.replace(table, schema=schema, column_storage=storage))


def _label_table(table: TableInfo, label: str | None, catalog: Catalog) -> None:
    if not has_hidden_key(table) or table.partition_schema is not None:
        raise FeatureNotSupported(
            f'SECURITY LABEL FOR nyala on table "{table.name}": only a table without a primary '
            "key (as a dump restores it) takes a partitioning, applied by ADD PRIMARY KEY",
            hint="Create the table with its PARTITION BY instead.",
        )
    if label is not None:
        partitioning_clause(label)  # a syntax error is reported now, not at ADD PRIMARY KEY
    catalog.replace_table(table, dataclasses.replace(table, pending_partitioning=label or ""))


def partitioning_clause(label: str) -> exp.Expr:
    """The ``PARTITION BY HASH ... RANGE ...`` clause of a table's label, parsed."""
    try:
        statements = parse(f"CREATE TABLE label_of (c int) {label}")
    except DbError as exc:
        raise InvalidParameterValue(f'invalid nyala partitioning label "{label}"') from exc
    ast = statements[0].ast if len(statements) == 1 else None
    properties = ast.args.get("properties") if isinstance(ast, exp.Create) else None
    clause = partitions.partitioning_of(ast) if isinstance(ast, exp.Create) else None
    if (
        not isinstance(clause, NyalaPartitionBy)
        or ast is None
        or ast.args.get("expression") is not None
        or properties is None
        or len(properties.expressions) != 1
    ):
        raise InvalidParameterValue(
            f'invalid nyala partitioning label "{label}"',
            hint="A table's label is PARTITION BY HASH (...) PARTITIONS n [, RANGE (...) (...)].",
        )
    return clause


def pending_partitioning(
    table: TableInfo, evaluate: partitions.Evaluator
) -> Callable[[Schema], tuple[PartitionSchema, list[RangeBounds]]] | None:
    """The partitioning ADD PRIMARY KEY gives ``table`` (its label's), if it has one."""
    if not table.pending_partitioning:
        return None
    return partitions.build_partitioning(partitioning_clause(table.pending_partitioning), evaluate)
