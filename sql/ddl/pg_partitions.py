"""PostgreSQL's declarative partitioning: PARTITION BY LIST | RANGE | HASH and PARTITION OF.

The root table gets a ``catalog.partition_tree.PartitionTree`` and no tablets;
each ``CREATE TABLE c PARTITION OF p FOR VALUES ... | DEFAULT`` adds a node,
a leaf with a tablet of the root's or, with its own ``PARTITION BY``, a node
that is partitioned further.  Partition columns must be primary-key columns
(PostgreSQL's rule for a partitioned table's unique constraints); a table
without a primary key puts its root partition columns after the hidden key.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
from collections.abc import Callable

import pyarrow as pa
from sqlglot import exp

from catalog.catalog import Catalog
from catalog.partition import PartitionSchema, RangeBounds
from catalog.partition_tree import (
    DEFAULT,
    HASH,
    LIST,
    RANGE,
    PartitionBound,
    PartitionKey,
    PartitionNode,
    PartitionTree,
)
from catalog.partition_views import add_node
from catalog.rekey import has_hidden_key
from catalog.table import TableInfo
from sql.common.names import identifier_name, table_name
from sql.common.result import Result
from sql.ddl.partitions import Evaluator
from sql.frontend.dialect import AttachIndexPartition, AttachPartition, PgPartitionBy
from storage.data_type import ColumnId
from storage.errors import (
    CheckViolation,
    FeatureNotSupported,
    InvalidObjectDefinition,
    InvalidTableDefinition,
    UndefinedColumn,
    UndefinedTable,
)
from storage.key_encoding import encode_key
from storage.predicate import ScanSpec
from storage.schema import Schema
from storage.transaction import Transaction


def column_names(clause: PgPartitionBy) -> list[str]:
    """The partition key's column names (0A000 for an expression)."""
    names = []
    for node in clause.expressions:
        if not isinstance(node, exp.Column | exp.Identifier):
            raise FeatureNotSupported(
                f"partition key expression {node.sql(dialect='postgres')} is not supported",
                hint="Partition by columns.",
            )
        names.append(identifier_name(node if isinstance(node, exp.Identifier) else node.this))
    return names


def partition_key(clause: PgPartitionBy, schema: Schema, table: str) -> PartitionKey:
    """The key of a ``PARTITION BY``, checked as PostgreSQL checks it."""
    strategy = str(clause.args["strategy"])
    names = column_names(clause)
    if strategy == LIST and len(names) != 1:
        raise InvalidObjectDefinition(
            'cannot use "list" partition strategy with more than one column'
        )
    ids: list[ColumnId] = []
    for name in names:
        column = schema.find(name)
        if column is None:
            raise UndefinedColumn(f'column "{name}" named in partition key does not exist')
        if column.id not in schema.key_column_ids:
            raise FeatureNotSupported(
                "unique constraint on partitioned table must include all partitioning columns",
                detail=f'PRIMARY KEY constraint on table "{table}" lacks column "{name}" '
                "which is part of the partition key.",
            )
        ids.append(column.id)
    return PartitionKey(strategy, tuple(ids))


def root_partitioning(
    clause: PgPartitionBy, table: str
) -> Callable[[Schema], tuple[PartitionSchema, list[RangeBounds]]]:
    """The catalog's partitioning callback for a root: a tree with no partitions yet."""

    def build(schema: Schema) -> tuple[PartitionSchema, list[RangeBounds]]:
        return PartitionSchema(tree=PartitionTree(partition_key(clause, schema, table))), []

    return build


def create_partition(
    ast: exp.Create,
    catalog: Catalog,
    evaluate: Evaluator,
    txn: Transaction,
    parent_name: str,
) -> Result:
    """``CREATE TABLE c PARTITION OF p FOR VALUES ... | DEFAULT [PARTITION BY ...]``."""
    properties = ast.args["properties"].expressions
    prop = next(p for p in properties if isinstance(p, exp.PartitionedOfProperty))
    sub = next((p.this for p in properties if isinstance(p, exp.PartitionedByProperty)), None)
    if sub is not None and not isinstance(sub, PgPartitionBy):
        raise FeatureNotSupported(
            "a partition is partitioned further with PARTITION BY LIST, RANGE or HASH"
        )
    name = table_name(ast.this if not isinstance(ast.this, exp.Schema) else ast.this.this)
    if isinstance(ast.this, exp.Schema) and ast.this.expressions:
        raise FeatureNotSupported(
            "column definitions in CREATE TABLE ... PARTITION OF are not supported"
        )
    root = catalog.find_table(parent_name) or catalog.partition_owner(parent_name)
    assert root is not None and root.partition_schema is not None, "a partitioned parent"
    tree = root.partition_schema.tree
    assert tree is not None, "a parent with a partition tree"
    parent = None if root.name == parent_name else parent_name
    key = tree.key_of(parent)
    if key is None:
        raise InvalidObjectDefinition(f'"{parent_name}" is not partitioned')
    bound = _bound(prop.expression, key, root.schema, evaluate, name)
    sub_key = None
    if sub is not None:
        sub_key = partition_key(sub, root.schema, root.name)

    node = PartitionNode(name, 0, parent, bound, sub_key)
    _check_default_rows(root, tree, node, txn)
    catalog.add_partition(root.name, node)
    return Result(command_tag="CREATE TABLE")


def _check_default_rows(
    root: TableInfo, tree: PartitionTree, node: PartitionNode, txn: Transaction
) -> None:
    """23514 when the sibling DEFAULT partition holds rows the new partition would take."""
    default = next((c for c in tree.children(node.parent) if c.bound.is_default), None)
    key = tree.key_of(node.parent)
    if default is None or key is None or node.bound.is_default:
        return
    spec = ScanSpec(projection=key.column_ids)
    for tablet_id in tree.leaf_tablets(default.name):
        for batch in txn.scan(tablet_id, spec):
            if not batch.num_rows:
                continue
            columns: dict[ColumnId, pa.Array] = {
                c: batch.column(batch.schema.get_field_index(str(c))) for c in key.column_ids
            }
            if PartitionTree.holds(root.schema, key, node.bound, columns).any():
                raise CheckViolation(
                    f'updated partition constraint for default partition "{default.name}" '
                    "would be violated by some row"
                )


def _bound(
    spec: exp.Expr, key: PartitionKey, schema: Schema, evaluate: Evaluator, name: str
) -> PartitionBound:
    if isinstance(spec, exp.Var) and spec.name.upper() == "DEFAULT":
        if key.strategy == HASH:
            raise InvalidTableDefinition(
                "a hash-partitioned table may not have a default partition"
            )
        return PartitionBound(DEFAULT, "DEFAULT")
    assert isinstance(spec, exp.PartitionBoundSpec), "FOR VALUES ..."
    columns = [schema.column(c) for c in key.column_ids]
    types = [c.type for c in columns]
    if spec.args.get("from_expressions") is not None:
        if key.strategy != RANGE:
            raise InvalidTableDefinition(
                f"invalid bound specification for a {key.strategy} partition"
            )
        lower, lower_text = _range_end(spec.args["from_expressions"], key, types, evaluate)
        upper, upper_text = _range_end(spec.args["to_expressions"], key, types, evaluate)
        if lower is not None and upper is not None and lower >= upper:
            raise InvalidObjectDefinition(f'empty range bound specified for partition "{name}"')
        text = f"FOR VALUES FROM ({lower_text}) TO ({upper_text})"
        return PartitionBound(RANGE, text, lower=lower, upper=upper)
    if isinstance(spec.this, list):
        if key.strategy != LIST:
            raise InvalidTableDefinition(
                f"invalid bound specification for a {key.strategy} partition"
            )
        values: list[bytes] = []
        texts = []
        for node in spec.this:
            if isinstance(node, exp.Null):
                texts.append("NULL")  # partition columns are key columns: never NULL
                continue
            value = evaluate(node, types[0])
            texts.append(_literal(value))
            values.append(_encoded(value, types, node))
        return PartitionBound(LIST, f"FOR VALUES IN ({', '.join(texts)})", tuple(values))
    if key.strategy != HASH:
        raise InvalidTableDefinition(f"invalid bound specification for a {key.strategy} partition")
    modulus, remainder = _integer(spec.this), _integer(spec.expression)
    if modulus <= 0:
        raise InvalidTableDefinition(
            "modulus for hash partition must be an integer value greater than zero"
        )
    if not 0 <= remainder < modulus:
        raise InvalidTableDefinition("remainder for hash partition must be less than modulus")
    text = f"FOR VALUES WITH (modulus {modulus}, remainder {remainder})"
    return PartitionBound(HASH, text, modulus=modulus, remainder=remainder)


def _integer(node: exp.Expr) -> int:
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        return -int(node.this.this)
    if not isinstance(node, exp.Literal) or node.is_string:
        raise InvalidTableDefinition("modulus and remainder for hash partition must be integers")
    return int(node.this)


def _range_end(
    values: list[exp.Expr], key: PartitionKey, types: list, evaluate: Evaluator
) -> tuple[bytes | None, str]:
    if len(values) != len(key.column_ids):
        raise InvalidTableDefinition("FROM must specify exactly one value per partitioning column")
    words = [v.name.upper() for v in values if isinstance(v, exp.Var)]
    if words:
        if len(words) != len(values) or len(set(words)) != 1:
            raise FeatureNotSupported(
                "MINVALUE or MAXVALUE for only some partition columns is not supported"
            )
        return None, ", ".join(words)
    python = [evaluate(v, t) for v, t in zip(values, types, strict=True)]
    return _encoded_values(python, types, values[0]), ", ".join(_literal(v) for v in python)


def _encoded(value: object, types: list, node: exp.Expr) -> bytes:
    return _encoded_values([value], types, node)


def _encoded_values(values: list[object], types: list, node: exp.Expr) -> bytes:
    try:
        return encode_key(values, types)
    except (ValueError, OverflowError) as exc:
        raise InvalidTableDefinition(
            f"partition bound {node.sql(dialect='postgres')} does not fit the partition key"
        ) from exc


def _literal(value: object) -> str:
    """A bound value as ``pg_get_expr(relpartbound)`` spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | decimal.Decimal):
        return str(value)
    if isinstance(value, datetime.datetime):
        text = value.isoformat(sep=" ")
    elif isinstance(value, bytes):
        text = "\\x" + value.hex()
    else:
        text = str(value)
    return "'" + text.replace("'", "''") + "'"


def attach_partition(
    ast: AttachPartition, catalog: Catalog, evaluate: Evaluator, txn: Transaction
) -> Result:
    """``ALTER TABLE p ATTACH PARTITION c FOR VALUES ... | DEFAULT``: c's tablet becomes a leaf.

    c must have the root's columns and key exactly (a detached partition has), no
    indexes or sequences of its own and every row inside the bound (23514 else); other
    tables are refused with 0A000, since their tablets are keyed otherwise."""
    parent_name, name = table_name(ast.this), table_name(ast.expression)
    root = catalog.find_table(parent_name) or catalog.partition_owner(parent_name)
    if root is None:
        catalog.get_table(parent_name)  # 42P01
    assert root is not None, "get_table raised"
    tree = root.partition_schema.tree if root.partition_schema is not None else None
    if tree is None:
        raise FeatureNotSupported(
            f'ATTACH PARTITION to "{parent_name}", which is not partitioned by PARTITION BY '
            "LIST, RANGE or HASH, is not supported"
        )
    table = catalog.get_table(name)
    table_tree = table.partition_schema.tree if table.partition_schema is not None else None
    if table_tree is not None and _same_columns(table, root) and _is_empty(table, txn):
        return _graft(ast, catalog, evaluate, txn, root, tree, table, table_tree)
    if table.partition_schema is not None:
        raise FeatureNotSupported(
            "ATTACH PARTITION of a partitioned table that holds rows, or whose columns are "
            "not the root's, is not supported"
        )
    rekeyed = table.schema != root.schema or table.column_order != root.column_order
    if rekeyed and _same_columns(table, root) and _is_empty(table, txn):
        return _attach_empty(ast, catalog, evaluate, txn, root, tree, table)
    if rekeyed or table.indexes or table.sequences or len(table.tablet_ids) != 1:
        raise FeatureNotSupported(
            f'ATTACH PARTITION of "{name}", whose columns, key, indexes or sequences are not '
            f'exactly those of "{root.name}", is not supported',
            hint="Create the partition with CREATE TABLE ... PARTITION OF and copy its rows in.",
        )
    parent = None if root.name == parent_name else parent_name
    key = tree.key_of(parent)
    if key is None:
        raise InvalidObjectDefinition(f'"{parent_name}" is not partitioned')
    node = PartitionNode(
        name,
        int(table.table_id),
        parent,
        _bound(ast.args["bound"], key, root.schema, evaluate, name),
        tablet_id=table.tablet_ids[0],
    )
    _check_default_rows(root, tree, node, txn)
    attached = add_node(root, node)
    _check_rows_inside(attached, node, txn)
    catalog.attach_partition(root.name, table, node)
    return Result(command_tag="ALTER TABLE")


def _check_rows_inside(root: TableInfo, node: PartitionNode, txn: Transaction) -> None:
    """23514 unless every row of the attached tablet routes to it through ``root``'s tree."""
    assert node.tablet_id is not None and root.partition_schema is not None, "an attached leaf"
    tree = root.partition_schema.tree
    assert tree is not None, "a tree to attach to"
    ids = tuple(sorted(tree.column_ids()))
    for batch in txn.scan(node.tablet_id, ScanSpec(projection=ids)):
        if not batch.num_rows:
            continue
        columns = {c: batch.column(batch.schema.get_field_index(str(c))) for c in ids}
        if (tree.route(root.schema, [node.tablet_id], columns) < 0).any():
            raise CheckViolation(
                f'partition constraint of relation "{node.name}" is violated by some row'
            )


def _same_columns(table: TableInfo, root: TableInfo) -> bool:
    """Whether ``table`` has the root's visible columns (names, types, NOT NULL, in order)
    and nothing else of its own but a hidden key: what pg_dump's CREATE TABLE of a
    partition makes."""

    def shape(info: TableInfo) -> list[tuple[str, object, bool]]:
        return [(c.name, c.type, c.nullable) for c in info.columns]

    return (
        shape(table) == shape(root)
        and not table.indexes
        and all(sequence.hidden for sequence in table.sequences)
        and not table.checks
        and (table.partition_schema is None or table.partition_schema.tree is not None)
    )


def _is_empty(table: TableInfo, txn: Transaction) -> bool:
    spec = ScanSpec(projection=tuple(table.schema.key_column_ids), limit=1)
    return not any(
        batch.num_rows for tablet in table.tablet_ids for batch in txn.scan(tablet, spec)
    )


def _attach_empty(
    ast: AttachPartition,
    catalog: Catalog,
    evaluate: Evaluator,
    txn: Transaction,
    root: TableInfo,
    tree: PartitionTree,
    table: TableInfo,
) -> Result:
    """ATTACH PARTITION of an empty table keyed otherwise than the root (pg_dump creates each
    partition as a plain table, attaches it, then loads it and adds the keys): the leaf
    takes a new tablet of the root's schema and the table's own goes."""
    parent_name = table_name(ast.this)
    parent = None if root.name == parent_name else parent_name
    key = tree.key_of(parent)
    if key is None:
        raise InvalidObjectDefinition(f'"{parent_name}" is not partitioned')
    bound = _bound(ast.args["bound"], key, root.schema, evaluate, table.name)
    node = PartitionNode(table.name, int(table.table_id), parent, bound)
    _check_default_rows(root, tree, node, txn)
    catalog.attach_empty_partition(root.name, table, node)
    return Result(command_tag="ALTER TABLE")


def attach_index_partition(ast: AttachIndexPartition, catalog: Catalog) -> Result:
    """``ALTER INDEX root_pkey ATTACH PARTITION part_pkey``: a partition's primary key is its
    root's (one key for the tree), so attaching one to the other is already so; 42P01 for
    an index that is neither, 0A000 for another pairing."""
    parent_name, child_name = table_name(ast.this), table_name(ast.expression)
    for root in catalog.tables():
        tree = root.partition_schema.tree if root.partition_schema is not None else None
        if tree is None:
            continue
        parents = {f"{n.name}_pkey": n.name for n in tree.nodes if n.key is not None}
        parents[root.primary_key_name or f"{root.name}_pkey"] = root.name
        if parent_name not in parents:
            continue
        above = None if parents[parent_name] == root.name else parents[parent_name]
        below = {f"{n.name}_pkey" for n in tree.nodes if above is None} | {
            f"{n.name}_pkey" for n in (tree.subtree(above) if above else ()) if n.name != above
        }
        if child_name in below and not has_hidden_key(root):
            return Result(command_tag="ALTER INDEX")
        raise FeatureNotSupported(
            f'ALTER INDEX "{parent_name}" ATTACH PARTITION "{child_name}" is not supported: '
            f'only the primary key of a partition of "{root.name}" attaches to it'
        )
    raise UndefinedTable(f'relation "{parent_name}" does not exist')


def _graft(
    ast: AttachPartition,
    catalog: Catalog,
    evaluate: Evaluator,
    txn: Transaction,
    root: TableInfo,
    tree: PartitionTree,
    table: TableInfo,
    table_tree: PartitionTree,
) -> Result:
    """ATTACH PARTITION of an empty table partitioned by PARTITION BY (pg_dump's partition
    that is partitioned further): it and whatever partitions it has join the root's tree,
    their keys over the root's columns of the same names."""
    parent_name = table_name(ast.this)
    parent = None if root.name == parent_name else parent_name
    key = tree.key_of(parent)
    if key is None:
        raise InvalidObjectDefinition(f'"{parent_name}" is not partitioned')
    ids = {c.name: c.id for c in root.columns}

    extra: list[ColumnId] = []

    def mapped(sub: PartitionKey) -> PartitionKey:
        columns = tuple(ids[table.schema.column(c).name] for c in sub.column_ids)
        missing = [c for c in columns if c not in root.schema.key_column_ids]
        if missing and not (has_hidden_key(root) and _is_empty(root, txn)):
            names = ", ".join(root.schema.column(c).name for c in missing)
            raise FeatureNotSupported(
                f'ATTACH PARTITION of "{table.name}", partitioned by ({names}), to '
                f'"{root.name}", whose primary key lacks those columns, is not supported',
                hint="Create the partition with CREATE TABLE ... PARTITION OF.",
            )
        extra.extend(c for c in missing if c not in extra)
        return PartitionKey(sub.strategy, columns)

    bound = _bound(ast.args["bound"], key, root.schema, evaluate, table.name)
    top = PartitionNode(table.name, int(table.table_id), parent, bound, mapped(table_tree.key))
    _check_default_rows(root, tree, top, txn)
    below = [
        dataclasses.replace(
            node,
            parent=node.parent or table.name,
            key=None if node.key is None else mapped(node.key),
            tablet_id=None,
        )
        for node in table_tree.nodes
    ]
    catalog.graft_partitions(root.name, table, [top, *below], extra)
    return Result(command_tag="ALTER TABLE")
