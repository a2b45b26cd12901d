"""CREATE TABLE and DROP TABLE: validate the definition, then change the catalog.

Kudu's rules apply on top of PostgreSQL's grammar: key columns are NOT NULL
and cannot be boolean, real or double precision, and defaults are constants
or a sequence (SERIAL, IDENTITY).  Key columns are stored first, in key
order, as Kudu requires.  A table declared without a primary key gets Kudu
1.17's hidden auto-incrementing key.  ``PRIMARY KEY (...)`` may also follow
the column list, before ``PARTITION BY``, so Spark's ``createTableOptions``
can key and partition the tables it creates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from catalog.catalog import HIDDEN_KEY, Catalog, SerialSpec
from catalog.foreign_keys import ForeignKey
from sql.common.datatypes import column_type
from sql.common.names import identifier_name, table_name
from sql.common.result import Result
from sql.ddl import (
    check_constraints,
    create_table_as,
    foreign_keys,
    indexes,
    partitions,
    pg_partitions,
    sequences,
)
from sql.frontend.dialect import (
    SPELT_NOW,
    ColumnCompression,
    ColumnEncoding,
    PgPartitionBy,
    TrailingPrimaryKey,
)
from storage import data_type as types
from storage.data_type import DataType, TypeKind
from storage.errors import (
    DbError,
    DependentObjectsStillExist,
    DuplicateColumn,
    DuplicateObject,
    DuplicateTable,
    FeatureNotSupported,
    GroupingError,
    InvalidObjectDefinition,
    InvalidParameterValue,
    InvalidTableDefinition,
    UndefinedColumn,
    UndefinedObject,
    UndefinedTable,
    WindowingError,
    WrongObjectType,
)
from storage.transaction import Transaction

_SERIAL_TYPES = {
    exp.DataType.Type.SMALLSERIAL: (types.INT16, "smallint"),
    exp.DataType.Type.SERIAL: (types.INT32, "integer"),
    exp.DataType.Type.BIGSERIAL: (types.INT64, "bigint"),
}
_IDENTITY_TYPES = {TypeKind.INT16: "smallint", TypeKind.INT32: "integer", TypeKind.INT64: "bigint"}

KEY_FORBIDDEN = {TypeKind.BOOL, TypeKind.FLOAT, TypeKind.DOUBLE}

# Checks that a constant default converts to the column type; raises the conversion's DbError.
DefaultChecker = Callable[[str, DataType], None]


VOLATILE_FUNCTIONS = frozenset(
    {"random", "gen_random_uuid", "uuid_generate_v4", "clock_timestamp", "timeofday", "nextval"}
)
"""Functions PostgreSQL evaluates afresh for each row a DEFAULT fills."""


def check_default_expression(node: exp.Expr) -> None:
    """PostgreSQL's rules for a DEFAULT: any expression but a column reference (0A000), a
    subquery (0A000), an aggregate (42803) or a window function (42P20)."""
    for child in node.walk():
        if isinstance(child, exp.Column):
            raise FeatureNotSupported("cannot use column reference in DEFAULT expression")
        if isinstance(child, (exp.Select, exp.Subquery)):
            raise FeatureNotSupported("cannot use subquery in DEFAULT expression")
        if isinstance(child, exp.Window):
            raise WindowingError("window functions are not allowed in DEFAULT expressions")
        if isinstance(child, exp.AggFunc):
            raise GroupingError("aggregate functions are not allowed in DEFAULT expressions")


def is_volatile(node: exp.Expr) -> bool:
    """Whether the expression calls a function that gives each row its own value."""
    for child in node.walk():
        if isinstance(child, exp.Func):
            name = child.name if isinstance(child, exp.Anonymous) else child.sql_name()
            if name.lower() in VOLATILE_FUNCTIONS or isinstance(child, (exp.Rand, exp.Uuid)):
                return True
    return False


@dataclass(frozen=True, slots=True)
class ColumnDefinition:
    """One column as a CREATE TABLE or ALTER TABLE ADD COLUMN declares it."""

    name: str
    type: DataType
    nullable: bool
    default: str | None
    is_key: bool
    attributes: dict[str, str]
    serial: SerialSpec | None = None
    checks: tuple[tuple[exp.CheckColumnConstraint, str | None], ...] = ()
    """The column's CHECK constraints and their names, if given."""
    uniques: tuple[tuple[str | None, bool], ...] = ()
    """The column's UNIQUE constraints: (name if given, NULLS NOT DISTINCT)."""
    references: tuple[tuple[exp.Reference, str | None], ...] = ()
    """The column's REFERENCES constraints and their names, if given."""


SYSTEM_COLUMNS = frozenset(("tableoid", "xmin", "cmin", "xmax", "cmax", "ctid"))


def check_not_system_column(name: str) -> None:
    """42701 for a column named as a system column (``tableoid`` reads the table's OID)."""
    if name in SYSTEM_COLUMNS:
        raise DuplicateColumn(f'column name "{name}" conflicts with a system column name')


def column_definition(item: exp.ColumnDef, check_default: DefaultChecker) -> ColumnDefinition:
    """Read a column definition: type, NOT NULL, constant DEFAULT, PRIMARY KEY, SERIAL types
    and GENERATED ... AS IDENTITY, and Impala's ENCODING / COMPRESSION words (checked later,
    with the type, by check_storage_attributes)."""
    col_name = identifier_name(item.this)
    check_not_system_column(col_name)
    kind_node = item.args.get("kind")
    if kind_node is None:
        raise InvalidTableDefinition(f'column "{col_name}" has no type')
    serial = None
    if kind_node.this in _SERIAL_TYPES:
        dtype, type_name = _SERIAL_TYPES[kind_node.this]
        serial = SerialSpec(col_name, type_name)
    else:
        dtype = column_type(kind_node)
    nullable, default, is_key = serial is None, None, False
    attributes: dict[str, str] = {}
    checks: list[tuple[exp.CheckColumnConstraint, str | None]] = []
    uniques: list[tuple[str | None, bool]] = []
    references: list[tuple[exp.Reference, str | None]] = []
    for constraint in item.constraints:
        kind = constraint.kind
        if isinstance(kind, exp.NotNullColumnConstraint):
            nullable = bool(kind.args.get("allow_null"))
        elif isinstance(kind, exp.PrimaryKeyColumnConstraint):
            is_key = True
        elif isinstance(kind, (ColumnEncoding, ColumnCompression)):
            word = "encoding" if isinstance(kind, ColumnEncoding) else "compression"
            attributes[word] = kind.name.upper()
        elif isinstance(kind, exp.DefaultColumnConstraint):
            if serial is not None:
                raise InvalidTableDefinition(
                    f'multiple default values specified for column "{col_name}" of table'
                )
            default = column_default(kind.this, col_name, dtype, check_default)
        elif isinstance(kind, exp.GeneratedAsIdentityColumnConstraint):
            serial = _identity(kind, col_name, dtype, serial, default)
            nullable = False
        elif isinstance(kind, exp.CheckColumnConstraint):
            named = identifier_name(constraint.this) if constraint.this else None
            checks.append((kind, named))
        elif isinstance(kind, exp.UniqueColumnConstraint) and kind.this is None:
            indexes.refuse_unique_options(kind)
            named = identifier_name(constraint.this) if constraint.this else None
            uniques.append((named, bool(kind.args.get("nulls"))))
        elif isinstance(kind, exp.Reference):
            references.append((kind, identifier_name(constraint.this) if constraint.this else None))
        else:
            raise FeatureNotSupported(
                f"column constraint {kind.sql(dialect='postgres')} is not supported"
            )
    if serial is not None and default is not None:
        raise InvalidTableDefinition(
            f'multiple default values specified for column "{col_name}" of table'
        )
    return ColumnDefinition(
        col_name, dtype, nullable, default, is_key, attributes, serial, tuple(checks),
        tuple(uniques), tuple(references),
    )  # fmt: skip


def _identity(
    kind: exp.GeneratedAsIdentityColumnConstraint,
    column: str,
    dtype: DataType,
    serial: SerialSpec | None,
    default: str | None,
) -> SerialSpec:
    """``GENERATED ALWAYS | BY DEFAULT AS IDENTITY [(START WITH n INCREMENT BY m)]``."""
    if serial is not None or default is not None:
        raise InvalidTableDefinition(
            f'multiple default values specified for column "{column}" of table'
        )
    type_name = _IDENTITY_TYPES.get(dtype.kind)
    if type_name is None:
        raise InvalidTableDefinition(
            f"identity column type must be smallint, integer, or bigint, not {dtype.pg_name()}"
        )
    if kind.args.get("expression") is not None:
        raise FeatureNotSupported("generated columns are not supported")
    options = {}
    for word in ("start", "increment"):
        node = kind.args.get(word)
        if node is not None:
            text = node.sql(dialect="postgres")
            if not text.lstrip("-").isdigit():
                raise InvalidParameterValue(f"{word.upper()} must be an integer")
            options[word] = int(text)
    unsupported = [w for w in ("minvalue", "maxvalue", "cycle") if kind.args.get(w)]
    if unsupported:
        raise FeatureNotSupported(f"identity option {unsupported[0].upper()} is not supported")
    if options.get("increment", 1) <= 0:
        raise FeatureNotSupported("identity columns count upwards: INCREMENT BY must be positive")
    identity = "a" if kind.this else "d"
    return SerialSpec(column, type_name, identity, **options)


def _cast_to_own_type(node: exp.Expr, dtype: DataType) -> bool:
    if not (isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal)):
        return False
    try:
        return column_type(node.to).kind is dtype.kind
    except DbError:
        return False


def column_default(
    node: exp.Expr, column: str, dtype: DataType, check_default: DefaultChecker
) -> str:
    """A DEFAULT's SQL text, once checked to be an expression of the column's type (a
    constant, ``now()``, ``gen_random_uuid()``, arithmetic...) that INSERTs evaluate, or a
    ``nextval('s')`` call (whose sequence the caller looks up)."""
    name = sequences.sequence_call(node)
    if name is not None:
        return sequences.nextval_default(name)
    check_default_expression(node)
    if _cast_to_own_type(node, dtype):  # pg_dump's 'new'::character varying: the literal
        node = node.this
    default = default_text(node)
    check_default(default, dtype)
    return default


def default_text(node: exp.Expr) -> str:
    """A default's SQL as PostgreSQL's deparser spells it: ``now()`` stays ``now()`` (not
    CURRENT_TIMESTAMP, which it also reads as) and function names are lower case."""

    def respell(child: exp.Expr) -> exp.Expr:
        if isinstance(child, exp.CurrentTimestamp) and child.meta.get(SPELT_NOW):
            return exp.Anonymous(this="now", expressions=[])
        return child

    return node.transform(respell).sql(dialect="postgres", normalize_functions="lower")


def create_table(
    ast: exp.Create,
    catalog: Catalog,
    check_default: DefaultChecker,
    evaluate: partitions.Evaluator | None,
    txn: Transaction,
    source: create_table_as.QuerySource | None = None,
) -> Result:
    """CREATE TABLE in ``txn``, whose end settles the table and its UNIQUE indexes together;
    CREATE TABLE AS through ``source``, which describes its query and writes its rows."""
    if create_table_as.is_create_table_as(ast):
        assert source is not None, "CREATE TABLE AS reads its query through the session"
        return create_table_as.create_table_as(
            ast, catalog, lambda node: create_table(node, catalog, check_default, evaluate, txn),
            source,
        )  # fmt: skip
    schema_node = ast.this
    properties = ast.args.get("properties")
    if properties is not None and any(
        isinstance(p, exp.PartitionedOfProperty) for p in properties.expressions
    ):
        assert evaluate is not None, "partition DDL evaluates its bounds"
        return _create_partition_of(ast, catalog, evaluate, txn)
    clause = partitions.partitioning_of(ast)
    _refuse_unsupported_clauses(ast)
    if not isinstance(schema_node, exp.Schema):
        raise FeatureNotSupported("CREATE TABLE without a column list is not supported")
    name = table_name(schema_node.this)
    if ast.args.get("exists") and catalog.find_table(name) is not None:
        notice = DuplicateTable(f'relation "{name}" already exists, skipping', severity="NOTICE")
        return Result(command_tag="CREATE TABLE", notices=[notice])
    columns: dict[str, tuple[DataType, bool, str | None]] = {}
    attributes: dict[str, dict[str, str]] = {}
    serials: list[SerialSpec] = []
    key: list[str] = []
    key_name: str | None = None
    checks: list[tuple[exp.CheckColumnConstraint, str | None, str | None]] = []
    uniques: list[tuple[list[str], str | None, bool]] = []
    references: list[tuple[list[str], exp.Reference, str | None]] = []
    items = list(schema_node.expressions)
    trailing = _trailing_primary_key(ast)
    if trailing is not None:
        items.append(trailing)
    for item in items:
        if isinstance(item, exp.ColumnDef):
            column = column_definition(item, check_default)
            col_name = column.name
            if col_name in columns:
                raise DuplicateColumn(f'column "{col_name}" specified more than once')
            if column.is_key:
                if key:
                    raise InvalidTableDefinition(
                        f'multiple primary keys for table "{name}" are not allowed'
                    )
                key = [col_name]
            if column.attributes:
                attributes[col_name] = column.attributes
            if column.serial is not None:
                serials.append(column.serial)
            if column.default is not None and (used := sequences.default_sequence(column.default)):
                catalog.get_sequence(used)
            columns[col_name] = (column.type, column.nullable, column.default)
            checks.extend((node, named, col_name) for node, named in column.checks)
            uniques.extend(([col_name], named, distinct) for named, distinct in column.uniques)
            references.extend(([col_name], node, named) for node, named in column.references)
        elif (reference := foreign_keys.declared(item)) is not None:
            references.append(reference)
        elif (unique := indexes.unique_constraint(item)) is not None:
            uniques.append(unique)
        elif (check := check_constraints.table_constraint(item)) is not None:
            checks.append((*check, None))
        elif isinstance(item, exp.PrimaryKey) or _named_primary_key(item):
            if isinstance(item, exp.Constraint):  # CONSTRAINT name PRIMARY KEY (...)
                key_name = identifier_name(item.this)
                item = item.expressions[0]
            if key:
                raise InvalidTableDefinition(
                    f'multiple primary keys for table "{name}" are not allowed'
                )
            key = [identifier_name(e) for e in item.expressions]
        else:
            raise FeatureNotSupported(
                f"table element {item.sql(dialect='postgres')} is not supported"
            )
    if not key and HIDDEN_KEY in columns:
        raise DuplicateColumn(
            f'column "{HIDDEN_KEY}" is reserved for the hidden key of a table without a '
            "primary key",
            hint="Declare a PRIMARY KEY, or rename the column.",
        )
    if len(set(key)) != len(key):
        raise DuplicateColumn("column appears twice in primary key constraint")
    for col_name in key:
        if col_name not in columns:
            raise UndefinedColumn(f'column "{col_name}" named in key does not exist')
        dtype = columns[col_name][0]
        if dtype.text_type == "json":
            raise UndefinedObject(
                'data type json has no default operator class for access method "btree"',
                hint="You must specify an operator class for the index or define a default "
                "operator class for the data type.",
            )
        if dtype.kind in KEY_FORBIDDEN:
            raise InvalidTableDefinition(
                f'column "{col_name}" of type {dtype.pg_name()} cannot be part of a primary key'
            )
    storage = {n: check_storage_attributes(n, columns[n][0], a) for n, a in attributes.items()}
    declared = [(n, t, nullable, d) for n, (t, nullable, d) in columns.items()]
    partitioning = None
    hidden_key_with: list[str] = []
    if isinstance(clause, PgPartitionBy):
        partitioning = pg_partitions.root_partitioning(clause, name)
        if not key:
            hidden_key_with = pg_partitions.column_names(clause)
            for col_name in hidden_key_with:
                if col_name not in columns:
                    raise UndefinedColumn(
                        f'column "{col_name}" named in partition key does not exist'
                    )
    elif clause is not None:
        assert evaluate is not None, "partition DDL evaluates its bounds"
        partitioning = partitions.build_partitioning(clause, evaluate)
    taken = [key_name or f"{name}_pkey"]
    made = []
    for number, (node, named, column_name) in enumerate(checks):
        made.append(
            check_constraints.check_constraint(
                node, named, name, columns, taken, number, column=column_name
            )
        )
        taken.append(made[-1].name)
    if len(set(taken)) != len(taken):
        raise DuplicateObject(f'constraint "{made[-1].name}" for relation "{name}" already exists')
    for columns_named, _name, _distinct in uniques:
        for col_name in columns_named:
            if col_name not in columns:
                raise UndefinedColumn(f'column "{col_name}" named in key does not exist')
    named_uniques = [u[1] for u in uniques if u[1] is not None]
    for given in named_uniques:
        if given in taken or named_uniques.count(given) > 1:
            raise DuplicateTable(f'relation "{given}" already exists')
    table = catalog.create_table(
        name, declared, key, partitioning, storage, serials, made, primary_key_name=key_name,
        hidden_key_with=hidden_key_with,
    )  # fmt: skip
    for columns_named, unique_name, distinct in uniques:
        table = indexes.add_index(
            catalog, table, columns_named, unique_name, txn, unique=True,
            constraint=True, nulls_not_distinct=distinct,
        )  # fmt: skip
    if references:
        taken += [i.name for i in table.indexes]
        made_keys: list[ForeignKey] = []
        for columns_named, referenced, key_name_given in references:
            if key_name_given is not None and key_name_given in taken:
                raise DuplicateObject(
                    f'constraint "{key_name_given}" for relation "{name}" already exists'
                )
            made_keys.append(
                foreign_keys.foreign_key(
                    catalog,
                    table,
                    columns_named,
                    referenced,
                    key_name_given,
                    taken,
                    number=len(made_keys),
                )  # fmt: skip
            )
            taken.append(made_keys[-1].name)
        table = catalog.replace_table(
            table, dataclasses.replace(table, foreign_keys=tuple(made_keys))
        )
    return Result(command_tag="CREATE TABLE")


def _create_partition_of(
    ast: exp.Create, catalog: Catalog, evaluate: partitions.Evaluator, txn: Transaction
) -> Result:
    """PARTITION OF a table with a PostgreSQL partition tree, or a named range of a Kudu one."""
    prop = next(
        p for p in ast.args["properties"].expressions if isinstance(p, exp.PartitionedOfProperty)
    )
    parent_name = table_name(prop.this)
    parent = catalog.find_table(parent_name)
    owner = parent or catalog.partition_owner(parent_name)
    if owner is None:
        catalog.get_table(parent_name)  # 42P01
    assert owner is not None, "get_table raised"
    tree = owner.partition_schema.tree if owner.partition_schema is not None else None
    if tree is not None:
        name = table_name(ast.this if not isinstance(ast.this, exp.Schema) else ast.this.this)
        if catalog.find_table(name) or catalog.find_view(name) or catalog.partition_owner(name):
            raise DuplicateTable(f'relation "{name}" already exists')
        return pg_partitions.create_partition(ast, catalog, evaluate, txn, parent_name)
    if owner.partition_schema is None or parent is None:
        raise InvalidObjectDefinition(f'"{parent_name}" is not partitioned')
    return partitions.create_partition_of(ast, catalog, evaluate)


_CLAUSE_NAMES: dict[type[exp.Expr], str] = {
    exp.InheritsProperty: "INHERITS",
    exp.TemporaryProperty: "CREATE TEMPORARY TABLE",
    exp.TableSpaceProperty: "TABLESPACE",
    exp.Property: "WITH (storage parameters)",
}
_UNDERSTOOD = (
    exp.PartitionedByProperty,
    exp.PartitionedOfProperty,
    TrailingPrimaryKey,
    # A durability hint (skip the WAL, empty after a crash): the table is logged like any
    # other, as CREATE UNLOGGED TABLE ... AS is, which only makes it safer.
    exp.UnloggedProperty,
)
# Heap storage parameters about pages and vacuum, which a tablet has neither of: accepted
# (pgbench and pg_dump write them) and checked as PostgreSQL checks them, then ignored.
_HEAP_PARAMETERS = {"fillfactor": (10, 100), "toast_tuple_target": (128, 8160)}
_VACUUM_PREFIXES = ("autovacuum_", "toast.autovacuum_")


def _check_heap_parameter(prop: exp.Property) -> bool:
    """Whether ``prop`` is a heap storage parameter nyala ignores; 22023 for a bad value."""
    name = prop.name.lower()
    value = prop.args.get("value")
    if name in _HEAP_PARAMETERS:
        low, high = _HEAP_PARAMETERS[name]
        text = value.name if isinstance(value, exp.Literal) else ""
        if not text.lstrip("-").isdigit() or not low <= int(text) <= high:
            raise InvalidParameterValue(
                f'value {text or value} out of bounds for option "{name}"',
                detail=f'Valid values are between "{low}" and "{high}".',
            )
        return True
    return name.startswith(_VACUUM_PREFIXES)


def _refuse_unsupported_clauses(ast: exp.Create) -> None:
    """0A000 naming any clause nyala would otherwise drop (INHERITS, TEMP, WITH (...) ...)."""
    properties = ast.args.get("properties")
    for prop in properties.expressions if properties is not None else ():
        if isinstance(prop, _UNDERSTOOD):
            continue
        if type(prop) is exp.Property and _check_heap_parameter(prop):
            continue
        name = _CLAUSE_NAMES.get(type(prop)) or prop.sql(dialect="postgres")
        raise FeatureNotSupported(f"{name} is not supported")


def _trailing_primary_key(ast: exp.Create) -> exp.PrimaryKey | None:
    """``CREATE TABLE t (...) PRIMARY KEY (cols) ...``: the key after the column list."""
    properties = ast.args.get("properties")
    if properties is None:
        return None
    found = [p for p in properties.expressions if isinstance(p, TrailingPrimaryKey)]
    if len(found) > 1:
        raise InvalidTableDefinition("multiple primary keys are not allowed")
    return exp.PrimaryKey(expressions=found[0].expressions) if found else None


_ENCODINGS_BY_KIND = {
    "AUTO_ENCODING": None,
    "PLAIN_ENCODING": None,
    "BIT_SHUFFLE": {
        TypeKind.INT8,
        TypeKind.INT16,
        TypeKind.INT32,
        TypeKind.INT64,
        TypeKind.FLOAT,
        TypeKind.DOUBLE,
        TypeKind.DECIMAL,
        TypeKind.DATE,
        TypeKind.TIMESTAMP,
    },
    "RLE": {
        TypeKind.BOOL,
        TypeKind.INT8,
        TypeKind.INT16,
        TypeKind.INT32,
        TypeKind.INT64,
        TypeKind.DATE,
        TypeKind.TIMESTAMP,
    },
    "DICT_ENCODING": {TypeKind.STRING, TypeKind.VARCHAR, TypeKind.BINARY},
    "PREFIX_ENCODING": {TypeKind.STRING, TypeKind.VARCHAR, TypeKind.BINARY},
}
_COMPRESSIONS = {"DEFAULT_COMPRESSION", "NO_COMPRESSION", "LZ4", "SNAPPY", "ZLIB", "ZSTD"}


def check_storage_attributes(
    column: str, dtype: DataType, attributes: dict[str, str]
) -> tuple[str, str]:
    """Validate Impala's ENCODING and COMPRESSION words for a column (Kudu's per-type rules);
    return (encoding, compression), AUTO_ENCODING / DEFAULT_COMPRESSION when not given."""
    encoding = attributes.get("encoding", "AUTO_ENCODING")
    compression = attributes.get("compression", "DEFAULT_COMPRESSION")
    if encoding not in _ENCODINGS_BY_KIND:
        raise InvalidParameterValue(
            f'unknown encoding "{encoding}" for column "{column}"',
            hint="Use one of " + ", ".join(_ENCODINGS_BY_KIND) + ".",
        )
    kinds = _ENCODINGS_BY_KIND[encoding]
    if kinds is not None and dtype.kind not in kinds:
        raise InvalidTableDefinition(
            f'encoding {encoding} is not supported for column "{column}" of type {dtype.pg_name()}'
        )
    if compression not in _COMPRESSIONS:
        raise InvalidParameterValue(
            f'unknown compression "{compression}" for column "{column}"',
            hint="Use one of " + ", ".join(sorted(_COMPRESSIONS)) + ".",
        )
    return encoding, compression


def drop_table(ast: exp.Drop, catalog: Catalog) -> Result:
    if (ast.args.get("kind") or "").upper() != "TABLE":
        raise FeatureNotSupported(f"DROP {ast.args.get('kind')} is not supported")
    names = [table_name(t) for t in ast.args.get("tables") or [ast.this]]
    for name in names:
        if catalog.find_view(name) is not None:
            raise WrongObjectType(
                f'"{name}" is not a table', hint="Use DROP VIEW to remove a view."
            )
    notices: list[DbError] = []
    missing = [
        n for n in names if catalog.find_table(n) is None and catalog.partition_owner(n) is None
    ]
    if missing and not ast.args.get("exists"):
        raise UndefinedTable(f'table "{missing[0]}" does not exist')
    for name in names:
        if name in missing:
            notices.append(
                UndefinedTable(f'table "{name}" does not exist, skipping', severity="NOTICE")
            )
            continue
        if catalog.find_table(name) is None:
            partitions.drop_partition_table(name, catalog)
        else:
            cascade = bool(ast.args.get("cascade"))
            if cascade:
                table = catalog.get_table(name)
                notices.extend(
                    DependentObjectsStillExist(
                        f"drop cascades to constraint {key.name} on table {child.name}",
                        severity="NOTICE",
                    )
                    for child, key in catalog.referencing(table.table_id)
                    if child.table_id != table.table_id and child.name not in names
                )
            catalog.drop_table(name, cascade=cascade, with_tables=names)
    return Result(command_tag="DROP TABLE", notices=notices)


def _named_primary_key(item: exp.Expr) -> bool:
    return (
        isinstance(item, exp.Constraint)
        and len(item.expressions) == 1
        and isinstance(item.expressions[0], exp.PrimaryKey)
    )
