"""Partition DDL: PARTITION BY in CREATE TABLE, PARTITION OF, ADD/DROP RANGE PARTITION, DETACH.

Turns the ``nyala`` dialect's partition expressions into a catalog
``PartitionSchema`` and ``RangeBounds``.  Bound values are evaluated as
constants of the range columns' types and key-encoded, so a range is a pair
of byte strings: lower inclusive, upper exclusive (``<=`` upper and ``<``
lower bounds are turned into that form with the key's successor).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from catalog.catalog import Catalog
from catalog.partition import HashLevel, PartitionSchema, RangeBounds
from sql.common.names import identifier_name, table_name
from sql.common.result import Result
from sql.frontend.dialect import (
    AlterRangePartitions,
    DetachPartition,
    HashPartitionLevel,
    NyalaPartitionBy,
    PgPartitionBy,
    RangePartition,
    RangePartitionLevel,
)
from storage.data_type import DataType
from storage.errors import (
    DuplicateTable,
    FeatureNotSupported,
    InvalidObjectDefinition,
    InvalidTableDefinition,
    UndefinedColumn,
    UndefinedTable,
)
from storage.schema import Schema

# Evaluates a constant expression as a value of a column type (raises the conversion's DbError).
Evaluator = Callable[[exp.Expr, DataType], object]

_MAX_BUCKETS = 1024


def partitioning_of(ast: exp.Create) -> exp.Expr | None:
    properties = ast.args.get("properties")
    for prop in properties.expressions if properties is not None else []:
        if isinstance(prop, exp.PartitionedByProperty):
            if not isinstance(prop.this, NyalaPartitionBy | PgPartitionBy):
                raise FeatureNotSupported(
                    f"PARTITION BY {prop.this.sql(dialect='postgres')} is not supported",
                    hint="Use PARTITION BY HASH (...) PARTITIONS n and/or RANGE (...).",
                )
            return prop.this
    return None


def build_partitioning(
    clause: exp.Expr, evaluate: Evaluator
) -> Callable[[Schema], tuple[PartitionSchema, list[RangeBounds]]]:
    """A function from the new table's schema to its PartitionSchema and initial ranges."""

    def build(schema: Schema) -> tuple[PartitionSchema, list[RangeBounds]]:
        key_ids = schema.key_column_ids
        levels: list[HashLevel] = []
        range_ids = None
        range_nodes: list[RangePartition] = []
        hashed: set[int] = set()
        for level in clause.expressions:
            if isinstance(level, HashPartitionLevel):
                if range_ids is not None:
                    raise InvalidTableDefinition("hash levels must come before the range level")
                ids = (
                    _key_columns(schema, level.expressions, "hash")
                    if level.expressions
                    else key_ids
                )
                if hashed & set(ids):
                    raise InvalidTableDefinition("a column may be hashed by only one hash level")
                hashed.update(ids)
                buckets = int(level.args["buckets"].this)
                if not 2 <= buckets <= _MAX_BUCKETS:
                    raise InvalidTableDefinition(
                        f"a hash level needs between 2 and {_MAX_BUCKETS} partitions, not {buckets}"
                    )
                levels.append(HashLevel(tuple(ids), buckets))
            else:
                assert isinstance(level, RangePartitionLevel), (
                    "PARTITION BY has hash and range levels"
                )
                if range_ids is not None:
                    raise InvalidTableDefinition("a table has at most one range level")
                range_ids = tuple(_key_columns(schema, level.expressions, "range"))
                range_nodes = list(level.args.get("partitions") or [])
        partitioning = PartitionSchema(tuple(levels), range_ids)
        ranges = [range_bounds(partitioning, schema, node, evaluate) for node in range_nodes]
        check_no_overlap(ranges)
        return partitioning, ranges

    return build


def _key_columns(schema: Schema, names: list[exp.Expr], what: str) -> list:
    ids = []
    for node in names:
        name = identifier_name(node)
        column = schema.find(name)
        if column is None:
            raise UndefinedColumn(f'column "{name}" named in partition key does not exist')
        if column.id not in schema.key_column_ids:
            raise InvalidTableDefinition(
                f'{what} partition column "{name}" must be a primary key column'
            )
        ids.append(column.id)
    return ids


def _values(node: exp.Expr) -> list[exp.Expr]:
    while isinstance(node, exp.Paren):
        node = node.this
    return list(node.expressions) if isinstance(node, exp.Tuple) else [node]


def _encode(
    partitioning: PartitionSchema, schema: Schema, node: exp.Expr, evaluate: Evaluator
) -> tuple[bytes, str]:
    columns = partitioning.range_schema(schema).columns
    values = _values(node)
    if len(values) != len(columns):
        raise InvalidTableDefinition(
            f"a range bound needs {len(columns)} value(s), one per range column"
        )
    python = [evaluate(v, c.type) for v, c in zip(values, columns, strict=True)]
    text = ", ".join(v.sql(dialect="postgres") for v in values)
    try:
        return partitioning.encode_range_key(schema, python), text
    except (ValueError, OverflowError) as exc:
        raise InvalidTableDefinition(f"range bound {text} does not fit the range columns") from exc


def range_bounds(
    partitioning: PartitionSchema, schema: Schema, node: RangePartition, evaluate: Evaluator
) -> RangeBounds:
    """The encoded bounds of one Impala-style range partition."""
    lower = upper = None
    lower_text = upper_text = ""
    if node.args.get("lower") is not None:
        lower, text = _encode(partitioning, schema, node.args["lower"], evaluate)
        lower_text = f"{text} <="
        if not node.args.get("lower_inclusive"):
            lower, lower_text = lower + b"\x00", f"{text} <"
    if node.args.get("upper") is not None:
        upper, text = _encode(partitioning, schema, node.args["upper"], evaluate)
        upper_text = f"< {text}"
        if node.args.get("upper_inclusive"):
            upper, upper_text = upper + b"\x00", f"<= {text}"
    return _checked(RangeBounds(lower, upper, lower_text, upper_text))


def _checked(bounds: RangeBounds) -> RangeBounds:
    if bounds.lower is not None and bounds.upper is not None and bounds.lower >= bounds.upper:
        raise InvalidObjectDefinition(
            f"empty range bound specified for partition {bounds.describe()}"
        )
    return bounds


def check_no_overlap(ranges: list[RangeBounds]) -> None:
    for index, first in enumerate(ranges):
        for second in ranges[index + 1 :]:
            if first.overlaps(second.lower, second.upper):
                raise InvalidObjectDefinition(
                    f"range partition {second.describe()} would overlap {first.describe()}"
                )


def create_partition_of(ast: exp.Create, catalog: Catalog, evaluate: Evaluator) -> Result:
    """``CREATE TABLE p PARTITION OF t FOR VALUES FROM (a) TO (b)``: a new range of t named p."""
    prop = next(
        p for p in ast.args["properties"].expressions if isinstance(p, exp.PartitionedOfProperty)
    )
    name = table_name(ast.this if not isinstance(ast.this, exp.Schema) else ast.this.this)
    if catalog.find_table(name) is not None or catalog.partition_owner(name) is not None:
        raise DuplicateTable(f'relation "{name}" already exists')
    parent = catalog.get_table(table_name(prop.this))
    spec = prop.expression
    partitioning = parent.partition_schema
    if partitioning is None or not partitioning.is_ranged or partitioning.hash_levels:
        raise FeatureNotSupported(f'table "{parent.name}" is not partitioned by range alone')
    if not isinstance(spec, exp.PartitionBoundSpec) or not spec.args.get("from_expressions"):
        raise FeatureNotSupported("only FOR VALUES FROM (...) TO (...) partitions are supported")
    bounds: list[tuple[bytes | None, str]] = []
    for key in ("from_expressions", "to_expressions"):
        values = spec.args[key]
        words = {v.name.upper() for v in values if isinstance(v, exp.Var)}
        if words:
            if len(words) != 1 or len(values) != len(words) * len(values):
                raise FeatureNotSupported("MINVALUE and MAXVALUE must fill the whole bound")
            bounds.append((None, ""))
            continue
        node = exp.Tuple(expressions=values) if len(values) > 1 else values[0]
        bounds.append(_encode(partitioning, parent.schema, node, evaluate))
    (lower, lower_text), (upper, upper_text) = bounds
    lower_text = f"{lower_text} <=" if lower is not None else ""
    upper_text = f"< {upper_text}" if upper is not None else ""
    rng = _checked(RangeBounds(lower, upper, lower_text, upper_text))
    catalog.alter_ranges(parent.name, [(rng, name)], [])
    return Result(command_tag="CREATE TABLE")


def alter_ranges(ast: AlterRangePartitions, catalog: Catalog, evaluate: Evaluator) -> Result:
    table = catalog.get_table(table_name(ast.this))
    partitioning = table.partition_schema
    if partitioning is None or not partitioning.is_ranged:
        raise FeatureNotSupported(f'table "{table.name}" is not range partitioned')
    add = [range_bounds(partitioning, table.schema, n, evaluate) for n in ast.args.get("add") or []]
    check_no_overlap(add)
    drop = [
        range_bounds(partitioning, table.schema, n, evaluate) for n in ast.args.get("drop") or []
    ]
    existing = {(p.range.lower, p.range.upper): p.range for p in table.partitions if p.range}
    dropping = []
    for bounds in drop:
        found = existing.get((bounds.lower, bounds.upper))
        if found is None:
            raise UndefinedTable(f"range partition {bounds.describe()} does not exist")
        dropping.append(found)
    catalog.alter_ranges(table.name, [(b, None) for b in add], dropping)
    return Result(command_tag="ALTER TABLE")


def detach_partition(ast: DetachPartition, catalog: Catalog) -> Result:
    catalog.detach_partition(table_name(ast.this), table_name(ast.expression))
    return Result(command_tag="ALTER TABLE")


def drop_partition_table(name: str, catalog: Catalog) -> bool:
    """DROP TABLE of a PARTITION OF child: drop that range (or tree partition) with its tablets."""
    if catalog.drop_partition(name) is not None:
        return True
    owner = catalog.partition_owner(name)
    if owner is None:
        return False
    ranges = {p.range for p in owner.partitions if p.name == name and p.range is not None}
    catalog.alter_ranges(owner.name, [], list(ranges))
    return True
