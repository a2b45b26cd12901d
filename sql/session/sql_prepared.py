"""SQL-level PREPARE and EXECUTE over the session's named statements, which protocol-level
Parse shares (one namespace, as in PostgreSQL), and the rows of pg_prepared_statements."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import pyarrow as pa
import sqlglot
import sqlglot.errors
from sqlglot import exp

from sql.common.datatypes import column_type
from sql.common.result import PreparedStatement
from sql.frontend import parser
from sql.frontend.statements import ExecuteStatement, PrepareStatement
from sql.pg_catalog.builtin_types import BUILTIN_TYPES, TYPE_BY_OID
from sql.planner import binder
from storage.errors import (
    DatatypeMismatch,
    DbError,
    DuplicatePreparedStatement,
    IndeterminateDatatype,
    InvalidSqlStatementName,
    SqlSyntaxError,
    UndefinedObject,
)

# Prepares a statement's text with declared parameter OIDs (Session.prepare).
Preparer = Callable[[str, tuple[int, ...]], PreparedStatement]
# Runs one ``SELECT`` of constants and gives its single row (the EXECUTE arguments).
RowEvaluator = Callable[[str], tuple[Any, ...]]


def type_oid(name: str) -> int:
    """The OID of a type named in PREPARE's list (42704 for an unknown one)."""
    try:
        node = sqlglot.parse_one(f"CAST(NULL AS {name})", read="postgres")
        data_type = node.args.get("to")
        if data_type is not None:
            return int(column_type(data_type).pg_oid)
    except (sqlglot.errors.ParseError, DbError):
        pass
    wanted = " ".join(name.lower().split()).removeprefix("pg_catalog.")  # pg_dump qualifies
    for info in BUILTIN_TYPES:
        if wanted in (info.name, info.display):
            return int(info.oid)
    raise UndefinedObject(f'type "{name}" does not exist')


def prepare(
    statement: PrepareStatement,
    statements: MutableMapping[str, PreparedStatement],
    preparer: Preparer,
    is_query_or_write: Callable[[PreparedStatement], bool],
    source: str = "",
) -> None:
    """PREPARE: plan the statement with the declared types under its name (42P05 if taken);
    ``source`` is the whole query string it came in, which pg_prepared_statements shows."""
    if statement.name in statements:
        raise DuplicatePreparedStatement(f'prepared statement "{statement.name}" already exists')
    declared = tuple(type_oid(t) for t in statement.types)
    prepared = preparer(statement.query, declared)
    if not is_query_or_write(prepared):
        raise SqlSyntaxError(
            f'syntax error at or near "{statement.query.split()[0] if statement.query else ""}"'
        )
    _check_all_typed(statement.query, declared)
    prepared.from_sql = True
    prepared.statement_text = source or statement.text
    statements[statement.name] = prepared


def _check_all_typed(query: str, declared: tuple[int, ...]) -> None:
    """42P18 for a ``$n`` below the highest one used that is neither declared nor used."""
    used: set[int] = set()
    for parsed in parser.parse(query):
        if isinstance(parsed.ast, exp.Expr):
            used.update(binder.parameter_number(p) for p in binder.parameters(parsed.ast))
    for number in range(1, max(used, default=0) + 1):
        if number not in used and (number > len(declared) or not declared[number - 1]):
            raise IndeterminateDatatype(f"could not determine data type of parameter ${number}")


def arguments(
    statement: ExecuteStatement,
    statements: MutableMapping[str, PreparedStatement],
    evaluate: RowEvaluator,
    type_of: Callable[[str], int],
) -> tuple[PreparedStatement, list[Any]]:
    """EXECUTE's statement and its arguments, each cast to its parameter's type (42804 for
    an argument whose type PostgreSQL would not assign to it); ``type_of`` gives the type
    OID of an expression's text.  A statement without parameters ignores arguments, as
    PostgreSQL's EXECUTE does."""
    prepared = statements.get(statement.name)
    if prepared is None:
        raise InvalidSqlStatementName(f'prepared statement "{statement.name}" does not exist')
    expected = len(prepared.param_oids)
    if not expected:
        return prepared, []
    if len(statement.arguments) != expected:
        raise SqlSyntaxError(
            f'wrong number of parameters for prepared statement "{statement.name}"',
            detail=f"Expected {expected} parameters but got {len(statement.arguments)}.",
        )
    for number, (argument, oid) in enumerate(
        zip(statement.arguments, prepared.param_oids, strict=True), start=1
    ):
        _check_assignable(number, argument, oid, type_of)
    casts = [
        f"CAST(({argument}) AS {_type_name(oid)})"
        for argument, oid in zip(statement.arguments, prepared.param_oids, strict=True)
    ]
    return prepared, list(evaluate("SELECT " + ", ".join(casts)))


def _check_assignable(number: int, argument: str, oid: int, type_of: Callable[[str], int]) -> None:
    """42804 unless the argument's type is assignable to the parameter's: the same type
    category, any type to a string, or a literal of unknown type (a quoted string, NULL)."""
    try:
        node = sqlglot.parse_one(argument, read="postgres")
    except sqlglot.errors.ParseError:
        return  # the argument's own SELECT reports it
    if (isinstance(node, exp.Literal) and node.is_string) or isinstance(node, exp.Null):
        return
    source = type_of(argument)
    wanted, given = TYPE_BY_OID.get(oid), TYPE_BY_OID.get(source)
    if wanted is None or given is None or given.category == wanted.category:
        return
    if wanted.category == "S":
        return
    raise DatatypeMismatch(
        f"parameter ${number} of type {given.display} cannot be coerced to the expected type "
        f"{wanted.display}",
        hint="You will need to rewrite or cast the expression.",
    )


def _type_name(oid: int) -> str:
    info = TYPE_BY_OID.get(oid)
    return info.display if info is not None and info.display else "text"


def listing(
    statements: MutableMapping[str, PreparedStatement],
) -> tuple[tuple[str, str, dt.datetime, tuple[str, ...], bool], ...]:
    """(name, statement, prepare_time, parameter_types, from_sql) of each named statement."""
    out = []
    for name, prepared in statements.items():
        if not name or prepared.is_empty_query:
            continue
        types = tuple(_type_name(oid) for oid in prepared.param_oids)
        when = prepared.prepare_time or dt.datetime.now(dt.UTC)
        out.append((name, prepared.statement_text or prepared.sql, when, types, prepared.from_sql))
    return tuple(sorted(out))


def single_row(batches: Iterator[pa.RecordBatch]) -> tuple[Any, ...]:
    """The one row a SELECT of constants gives."""
    table = pa.Table.from_batches(list(batches))
    assert table.num_rows == 1, "a SELECT of constants has one row"
    return tuple(column[0].as_py() for column in table.columns)
