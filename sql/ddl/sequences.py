"""CREATE, ALTER and DROP SEQUENCE, ADD GENERATED ... AS IDENTITY, and nextval defaults.

Options are checked as PostgreSQL's init_params checks them (22023 for a bad
type, a zero INCREMENT, bounds outside the type or crossed, a START or RESTART
outside them, a CACHE below one).  The definition is DDL like any other, so it
commits or rolls back with its transaction; RESTART moves the counter at once,
as setval does (a sequence's values are never transactional).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlglot import exp

from catalog.catalog import Catalog
from catalog.sequence_objects import SequenceRef, StandaloneSequence
from catalog.sequences import MAX_BY_TYPE, MIN_BY_TYPE, SequenceInfo
from catalog.table import TableInfo
from sql.common.result import Result
from sql.frontend.statements import IdentityStatement, SequenceStatement
from sql.planner.sequence_calls import sequence_name
from storage.data_type import ColumnId, TypeKind
from storage.errors import (
    DbError,
    DependentObjectsStillExist,
    DuplicateTable,
    FeatureNotSupported,
    InvalidParameterValue,
    Notice,
    ObjectNotInPrerequisiteState,
    UndefinedColumn,
    UndefinedTable,
    WrongObjectType,
)
from storage.schema import ColumnSchema, Schema

_TYPE_NAMES = {
    "smallint": "smallint", "int2": "smallint", "integer": "integer", "int": "integer",
    "int4": "integer", "bigint": "bigint", "int8": "bigint",
}  # fmt: skip
_COLUMN_TYPES = {TypeKind.INT16: "smallint", TypeKind.INT32: "integer", TypeKind.INT64: "bigint"}


def execute_sequence(statement: SequenceStatement, catalog: Catalog) -> tuple[Result, int | None]:
    """Run the statement; also the OID of a sequence it created (its creator owns it)."""
    if statement.action == "CREATE":
        return _create(statement, catalog)
    if statement.action == "DROP":
        return _drop(statement, catalog), None
    return _alter(statement, catalog), None


def _create(statement: SequenceStatement, catalog: Catalog) -> tuple[Result, int | None]:
    name = statement.names[0]
    tag = "CREATE SEQUENCE"
    if statement.if_not_exists and catalog.find_sequence(name) is not None:
        notice = DuplicateTable(f'relation "{name}" already exists, skipping', severity="NOTICE")
        return Result(command_tag=tag, notices=[notice]), None
    options = dict(statement.options)
    owned = options.pop("owned_by", None)
    info = sequence_info(name, options, None)
    owned_by = _owner(owned, catalog) if owned is not None else None
    sequence = catalog.create_sequence(info)
    if owned_by is not None:
        catalog.replace_sequence(sequence, dataclasses.replace(sequence, owned_by=owned_by))
    return Result(command_tag=tag), sequence.oid


def sequence_info(name: str, options: dict[str, Any], old: SequenceInfo | None) -> SequenceInfo:
    """The definition the options give, over ``old`` (ALTER) or PostgreSQL's defaults."""
    type_name = old.type_name if old is not None else "bigint"
    if "as" in options:
        given = _TYPE_NAMES.get(str(options["as"]).lower())
        if given is None:
            raise InvalidParameterValue("sequence type must be smallint, integer, or bigint")
        type_name = given
    increment = int(options.get("increment", old.increment if old is not None else 1))
    if increment == 0:
        raise InvalidParameterValue("INCREMENT must not be zero")
    low, high = MIN_BY_TYPE[type_name], MAX_BY_TYPE[type_name]
    max_value = _bound(options, "maxvalue", old, type_name, high if increment > 0 else -1)
    min_value = _bound(options, "minvalue", old, type_name, 1 if increment > 0 else low)
    for label, value in (("MAXVALUE", max_value), ("MINVALUE", min_value)):
        if not low <= value <= high:
            raise InvalidParameterValue(
                f"{label} ({value}) is out of range for sequence data type {type_name}"
            )
    if min_value >= max_value:
        raise InvalidParameterValue(
            f"MINVALUE ({min_value}) must be less than MAXVALUE ({max_value})"
        )
    if "start" in options:
        start = int(options["start"])
    elif old is not None:
        start = old.start
    else:
        start = min_value if increment > 0 else max_value
    _within("START", start, min_value, max_value)
    restart = options.get("restart", start) if "restart" in options else None
    if restart is not None:
        _within("RESTART", restart if options["restart"] is not None else start,
                min_value, max_value)  # fmt: skip
    cache = int(options.get("cache", old.cache if old is not None else 1))
    if cache <= 0:
        raise InvalidParameterValue(f"CACHE ({cache}) must be greater than zero")
    cycle = bool(options.get("cycle", old.cycle if old is not None else False))
    base = old if old is not None else SequenceInfo(name, -1)
    return dataclasses.replace(
        base, name=name, type_name=type_name, start=start, increment=increment,
        min_value=min_value, max_value=max_value, cache=cache, cycle=cycle,
    )  # fmt: skip


def _bound(
    options: dict[str, Any], key: str, old: SequenceInfo | None, type_name: str, default: int
) -> int:
    """MINVALUE/MAXVALUE: given, NO ... (the default), or kept, unless it was the old
    type's own bound and AS changed the type."""
    if key in options:
        value = options[key]
        return default if value is None else int(value)
    if old is None:
        return default
    kept = old.max_value if key == "maxvalue" else old.min_value
    type_bounds = (MAX_BY_TYPE[old.type_name], MIN_BY_TYPE[old.type_name])
    if old.type_name != type_name and kept in type_bounds:
        return default
    if "increment" in options and (old.increment > 0) != (int(options["increment"]) > 0):
        return default
    return kept


def _within(label: str, value: int, low: int, high: int) -> None:
    if value < low:
        raise InvalidParameterValue(f"{label} value ({value}) cannot be less than MINVALUE ({low})")
    if value > high:
        raise InvalidParameterValue(
            f"{label} value ({value}) cannot be greater than MAXVALUE ({high})"
        )


def _owner(owned: tuple[str, str], catalog: Catalog) -> tuple[int, int]:
    """OWNED BY t.c: the table's ID and the column's."""
    table_name, column_name = owned
    table = catalog.find_table(table_name)
    if table is None:
        if catalog.find_view(table_name) is not None:
            raise WrongObjectType(f'sequence cannot be owned by relation "{table_name}"')
        raise UndefinedTable(f'relation "{table_name}" does not exist')
    column = next((c for c in table.columns if c.name == column_name), None)
    if column is None:
        raise UndefinedColumn(f'column "{column_name}" of relation "{table_name}" does not exist')
    return table.table_id, column.id


def _alter(statement: SequenceStatement, catalog: Catalog) -> Result:
    name = statement.names[0]
    tag = "ALTER SEQUENCE"
    ref = catalog.find_sequence(name)
    if ref is None or ref.info.hidden:
        message = f'relation "{name}" does not exist'
        if statement.if_exists:
            notice = UndefinedTable(message + ", skipping", severity="NOTICE")
            return Result(command_tag=tag, notices=[notice])
        _not_a_sequence(name, catalog, "ALTER SEQUENCE")
        raise UndefinedTable(message)
    options = dict(statement.options)
    new_name = statement.rename_to or name
    info = sequence_info(new_name, options, ref.info)
    if "owned_by" in options:
        if ref.standalone is None:
            raise FeatureNotSupported(
                f'cannot change the owner of sequence "{name}", which a column of its own '
                "table (SERIAL or IDENTITY) uses"
            )
        owned = options["owned_by"]
        owned_by = _owner(owned, catalog) if owned is not None else None
    else:
        owned_by = ref.standalone.owned_by if ref.standalone is not None else None
    if ref.standalone is not None:
        new = StandaloneSequence(ref.standalone.sequence_id, info, owned_by)
        if new != ref.standalone:
            catalog.replace_sequence(ref.standalone, new)
    elif info != ref.info:
        if new_name != name and new_name in _relations(catalog):
            raise DuplicateTable(f'relation "{new_name}" already exists')
        _replace_column_sequence(catalog, ref, info)
    if statement.rename_to:
        _rename_in_defaults(catalog, name, statement.rename_to)
    if "restart" in options:
        catalog.setval(new_name, info.start if options["restart"] is None else options["restart"],
                       False)  # fmt: skip
    return Result(command_tag=tag)


def _relations(catalog: Catalog) -> set[str]:
    names = {t.name for t in catalog.tables()} | {v.name for v in catalog.views()}
    names.update(s.name for t in catalog.tables() for s in t.sequences)
    names.update(i.name for t in catalog.tables() for i in t.indexes)
    return names | {q.name for q, _ in catalog.standalone_sequences()}


def _replace_column_sequence(catalog: Catalog, ref: SequenceRef, info: SequenceInfo) -> None:
    """A SERIAL or IDENTITY column's sequence changed (renamed, new bounds): its table's
    definition holds it, and the column's default names it."""
    table = ref.table
    assert table is not None, "a column's sequence has its table"
    sequences = tuple(info if s is ref.info else s for s in table.sequences)
    schema = table.schema
    column = schema.column(ColumnId(info.column_id))
    if column.default_sql == ref.info.default_sql:
        schema = _with_column(schema, dataclasses.replace(column, default_sql=info.default_sql))
    catalog.replace_table(table, dataclasses.replace(table, sequences=sequences, schema=schema))


def _rename_in_defaults(catalog: Catalog, old: str, new: str) -> None:
    """Defaults read ``nextval('s'::regclass)``: a regclass follows its relation's renames."""
    for table in catalog.tables():
        schema = table.schema
        for column in table.columns:
            if column.default_sql is not None and default_sequence(column.default_sql) == old:
                schema = _with_column(
                    schema, dataclasses.replace(column, default_sql=nextval_default(new))
                )
        if schema is not table.schema:
            catalog.replace_table(table, dataclasses.replace(table, schema=schema))


def _drop(statement: SequenceStatement, catalog: Catalog) -> Result:
    notices: list[DbError] = []
    for name in statement.names:
        ref = catalog.find_sequence(name)
        if ref is None or ref.info.hidden:
            if statement.if_exists:
                notices.append(
                    UndefinedTable(
                        f'sequence "{name}" does not exist, skipping', severity="NOTICE"
                    )  # fmt: skip
                )
                continue
            _not_a_sequence(name, catalog, "DROP SEQUENCE")
            raise UndefinedTable(f'sequence "{name}" does not exist')
        if ref.standalone is None:
            assert ref.table is not None, "a column's sequence has its table"
            column = ref.table.schema.column(ColumnId(ref.info.column_id))
            raise DependentObjectsStillExist(
                f"cannot drop sequence {name} because other objects depend on it",
                detail=f"default value for column {column.name} of table {ref.table.name} "
                f"depends on sequence {name}",
                hint="Use DROP ... CASCADE to drop the dependent objects too.",
            )
        users = _defaults_using(catalog, name)
        if users and not statement.cascade:
            table, column_name = users[0]
            raise DependentObjectsStillExist(
                f"cannot drop sequence {name} because other objects depend on it",
                detail=f"default value for column {column_name} of table {table.name} "
                f"depends on sequence {name}",
                hint="Use DROP ... CASCADE to drop the dependent objects too.",
            )
        for table, column_name in users:
            current = catalog.get_table(table.name)
            column = next(c for c in current.columns if c.name == column_name)
            notices.append(
                Notice(
                    f"drop cascades to default value for column {column_name} of table "
                    f"{table.name}",
                    severity="NOTICE",
                )  # fmt: skip
            )
            schema = _with_column(current.schema, dataclasses.replace(column, default_sql=None))
            catalog.replace_table(current, dataclasses.replace(current, schema=schema))
        catalog.drop_sequence(ref.standalone)
    return Result(command_tag="DROP SEQUENCE", notices=notices)


def _defaults_using(catalog: Catalog, name: str) -> list[tuple[TableInfo, str]]:
    return [
        (table, column.name)
        for table in catalog.tables()
        for column in table.columns
        if column.default_sql is not None and default_sequence(column.default_sql) == name
    ]


def _not_a_sequence(name: str, catalog: Catalog, command: str) -> None:
    """42809 when ``name`` is a table, view or index rather than a sequence."""
    if catalog.find_table(name) is not None or catalog.find_view(name) is not None:
        kind = "a table" if catalog.find_table(name) is not None else "a view"
        raise WrongObjectType(
            f'"{name}" is not a sequence',
            hint=f"Use DROP {'TABLE' if kind == 'a table' else 'VIEW'} to remove {kind}."
            if command.startswith("DROP")
            else None,
        )


# -- defaults that call nextval ------------------------------------------------------------


def nextval_default(name: str) -> str:
    """The default PostgreSQL shows for a column filled from sequence ``name``."""
    return f"nextval('{name}'::regclass)"


def sequence_call(node: exp.Expr) -> str | None:
    """The sequence of a ``nextval('s'[::regclass])`` default, or None for another expression."""
    if not isinstance(node, exp.Anonymous) or node.name.lower() != "nextval":
        return None
    if len(node.expressions) != 1:
        return None
    argument = node.expressions[0]
    if isinstance(argument, exp.Cast) and argument.to.sql(dialect="postgres").upper() == "REGCLASS":
        argument = argument.this
    if not (isinstance(argument, exp.Literal) and argument.is_string):
        return None
    return sequence_name(argument.name)


def default_sequence(default_sql: str) -> str | None:
    """The sequence a stored default draws from, if it is a nextval call."""
    if "nextval" not in default_sql:
        return None
    return sequence_call(exp.maybe_parse(default_sql, dialect="postgres"))


def check_sequence_default(node: exp.Expr, catalog: Catalog) -> str | None:
    """The stored text of a ``nextval('s')`` DEFAULT once ``s`` is found (42P01 if not),
    or None when ``node`` is another expression."""
    name = sequence_call(node)
    if name is None:
        return None
    catalog.get_sequence(name)
    return nextval_default(name)


# -- ADD GENERATED ... AS IDENTITY ----------------------------------------------------------


def add_identity(statement: IdentityStatement, catalog: Catalog) -> Result:
    """Make an existing integer column an identity column, on a new sequence named by
    SEQUENCE NAME or as PostgreSQL names it."""
    tag = "ALTER TABLE"
    table = catalog.find_table(statement.table)
    if table is None:
        if statement.if_exists:
            notice = UndefinedTable(
                f'relation "{statement.table}" does not exist, skipping', severity="NOTICE"
            )
            return Result(command_tag=tag, notices=[notice])
        raise UndefinedTable(f'relation "{statement.table}" does not exist')
    column = next((c for c in table.columns if c.name == statement.column), None)
    if column is None:
        raise UndefinedColumn(
            f'column "{statement.column}" of relation "{table.name}" does not exist'
        )
    type_name = _COLUMN_TYPES.get(column.type.kind)
    if type_name is None:
        raise InvalidParameterValue("identity column type must be smallint, integer, or bigint")
    existing = table.sequence_of(column.id)
    if existing is not None and existing.identity:
        raise ObjectNotInPrerequisiteState(
            f'column "{column.name}" of relation "{table.name}" is already an identity column'
        )
    if column.nullable:
        raise ObjectNotInPrerequisiteState(
            f'column "{column.name}" of relation "{table.name}" must be declared NOT NULL '
            "before identity can be added"
        )
    if column.default_sql is not None:
        raise ObjectNotInPrerequisiteState(
            f'column "{column.name}" of relation "{table.name}" already has a default value'
        )
    options = dict(statement.options)
    name = options.pop("sequence_name", None) or _identity_name(catalog, table.name, column.name)
    if catalog.find_sequence(name) is not None or catalog.find_table(name) is not None:
        raise DuplicateTable(f'relation "{name}" already exists')
    options.setdefault("as", type_name)
    info = dataclasses.replace(
        sequence_info(name, options, None), column_id=column.id,
        identity="a" if statement.always else "d",
    )  # fmt: skip
    schema = _with_column(table.schema, dataclasses.replace(column, default_sql=info.default_sql))
    catalog.replace_table(
        table, dataclasses.replace(table, schema=schema, sequences=(*table.sequences, info))
    )
    return Result(command_tag=tag)


def _identity_name(catalog: Catalog, table: str, column: str) -> str:
    base = f"{table}_{column}"[:59] + "_seq"
    name, n = base, 0
    while catalog.find_sequence(name) is not None or catalog.find_table(name) is not None:
        n += 1
        name = f"{base[: 63 - len(str(n))]}{n}"
    return name


def _with_column(schema: Schema, column: ColumnSchema) -> Schema:
    """``schema`` with ``column`` (same ID) in place of the column it replaces."""
    columns = tuple(column if c.id == column.id else c for c in schema.columns)
    return Schema(columns, schema.num_key_columns)
