"""CREATE TABLE AS and SELECT INTO: a table whose columns and rows come from a query.

The query is described as any query is (names, type OIDs and typmods, ``?column?`` for an
unnamed expression), the table is created from those columns as a plain CREATE TABLE
without a primary key (Kudu's hidden key), and its rows go in through INSERT ... SELECT's
bulk path, in the statement's transaction, so a rollback or a failure part-way leaves
neither table nor rows.  The command tag is PostgreSQL's: ``SELECT n``, or ``CREATE TABLE
AS`` when no rows are written (``WITH NO DATA``, or IF NOT EXISTS found the table).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from catalog.catalog import Catalog
from sql.common.datatypes import column_type
from sql.common.names import listed_columns, table_name
from sql.common.result import Result
from storage.data_type import DataType
from storage.errors import (
    DuplicateColumn,
    DuplicateTable,
    FeatureNotSupported,
    SqlSyntaxError,
)
from storage.type_oids import ARRAY_OID, TypeOid

Describe = Callable[[exp.Expr], list[tuple[str, int, int]]]
"""Binds a query and returns its output columns: (name, type OID, typmod)."""
Fill = Callable[[str, exp.Expr], int]
"""Inserts a query's rows into the named table in the statement's transaction: the count."""
Create = Callable[[exp.Create], Result]
"""Creates the table a column-listed CREATE TABLE declares."""

NO_ROWS_TAG = "CREATE TABLE AS"

_TYPE_NAMES = (
    "boolean", "smallint", "integer", "bigint", "real", "double precision", "numeric",
    "text", "character varying", "character", "bytea", "date", "timestamp",
    "timestamp with time zone", "json", "jsonb", "uuid",
)  # fmt: skip
_SIZED = {1043: "character varying", 1042: "character"}
_NUMERIC_OID = 1700


@dataclass(frozen=True, slots=True)
class QuerySource:
    """How the session describes a query and writes its rows (``sql.dml`` is a sibling)."""

    describe: Describe
    fill: Fill


def _type_names() -> dict[int, str]:
    return {column_type(exp.DataType.build(n, dialect="postgres")).pg_oid: n for n in _TYPE_NAMES}


_NAME_BY_OID = _type_names()


def derived_type(column: str, oid: int, typmod: int) -> DataType:
    """The column type PostgreSQL gives a query column of type ``oid``: typmods of numeric,
    varchar and char kept; 0A000 for a type nyala tables cannot hold."""
    name = _NAME_BY_OID.get(oid)
    if name is None:
        raise FeatureNotSupported(
            f'column "{column}" has type {_type_label(oid)}, which nyala tables cannot hold',
            hint="Cast the expression to a supported type in the query.",
        )
    if typmod >= 4 and oid == _NUMERIC_OID:
        name = f"numeric({(typmod - 4) >> 16},{(typmod - 4) & 0xFFFF})"
    elif typmod >= 4 and oid in _SIZED:
        name = f"{_SIZED[oid]}({typmod - 4})"
    return column_type(exp.DataType.build(name, dialect="postgres"))


def _type_label(oid: int) -> str:
    element = next((e for e, a in ARRAY_OID.items() if a == oid), None)
    if element is not None:
        return f"{element.name.lower()}[]"
    return TypeOid(oid).name.lower() if oid in TypeOid._value2member_map_ else f"OID {oid}"


def is_create_table_as(ast: exp.Expr) -> bool:
    """Whether ``ast`` is CREATE TABLE ... AS query or CREATE TABLE ... AS EXECUTE."""
    if not isinstance(ast, exp.Create) or (ast.args.get("kind") or "").upper() != "TABLE":
        return False
    return ast.expression is not None or any(
        isinstance(p, exp.ExecuteAsProperty) for p in _properties(ast)
    )


def select_into(ast: object) -> exp.Create | None:
    """``SELECT ... INTO [TEMP|UNLOGGED] [TABLE] name FROM ...`` (INTO on the first SELECT of
    a set operation, too) as the CREATE TABLE AS it is; None for any other statement."""
    if not isinstance(ast, (exp.Select, exp.SetOperation)):
        return None
    query = ast.copy()
    first = query
    while isinstance(first, exp.SetOperation):
        first = first.this
    into = first.args.get("into") if isinstance(first, exp.Select) else None
    if into is None:
        return None
    first.set("into", None)
    properties: list[exp.Expr] = []
    if into.args.get("temporary"):
        properties.append(exp.TemporaryProperty())
    if into.args.get("unlogged"):
        properties.append(exp.UnloggedProperty())
    return exp.Create(
        this=into.this.copy(),
        kind="TABLE",
        expression=query,
        properties=exp.Properties(expressions=properties) if properties else None,
    )


def _properties(ast: exp.Create) -> list[exp.Expr]:
    properties = ast.args.get("properties")
    return list(properties.expressions) if properties is not None else []


def _query(ast: exp.Create) -> exp.Expr:
    query = ast.expression
    while isinstance(query, exp.Subquery) and not any(
        v for k, v in query.args.items() if k != "this"
    ):
        query = query.this  # dbt's ``AS ( select ... )``
    if not isinstance(query, (exp.Select, exp.SetOperation, exp.Values, exp.Subquery)):
        raise FeatureNotSupported("CREATE TABLE AS needs a SELECT, VALUES or TABLE query")
    return query


def create_table_as(
    ast: exp.Create, catalog: Catalog, create: Create, source: QuerySource
) -> Result:
    """Create the table ``ast`` names from its query's columns, then write the query's rows."""
    if any(isinstance(p, exp.ExecuteAsProperty) for p in _properties(ast)):
        raise FeatureNotSupported("CREATE TABLE AS EXECUTE is not supported")
    target, listed = listed_columns(ast.this)
    names = listed or []
    name = table_name(target)
    if ast.args.get("exists") and (
        catalog.find_table(name) is not None or catalog.find_view(name) is not None
    ):
        notice = DuplicateTable(f'relation "{name}" already exists, skipping', severity="NOTICE")
        return Result(command_tag=NO_ROWS_TAG, notices=[notice])
    query = _query(ast)
    described = source.describe(query.copy())
    if len(names) > len(described):
        raise SqlSyntaxError("too many column names were specified")
    columns = [(names[i] if i < len(names) else n, o, m) for i, (n, o, m) in enumerate(described)]
    seen: set[str] = set()
    for column, _oid, _typmod in columns:
        if column in seen:
            raise DuplicateColumn(f'column "{column}" specified more than once')
        seen.add(column)
    definitions = [
        exp.ColumnDef(
            this=exp.to_identifier(column, quoted=True),
            kind=exp.DataType.build(
                derived_type(column, oid, typmod).pg_name(), dialect="postgres"
            ),
        )
        for column, oid, typmod in columns
    ]
    kept = [
        p
        for p in _properties(ast)
        if not isinstance(p, (exp.WithDataProperty, exp.UnloggedProperty))
    ]
    declared = exp.Create(
        this=exp.Schema(this=target.copy(), expressions=definitions),
        kind="TABLE",
        properties=exp.Properties(expressions=kept) if kept else None,
    )
    create(declared)
    if any(isinstance(p, exp.WithDataProperty) and p.args.get("no") for p in _properties(ast)):
        return Result(command_tag=NO_ROWS_TAG)
    count = source.fill(name, query)
    return Result(command_tag=f"SELECT {count}")
