"""PostgreSQL's declarative partitions in pg_catalog: pg_partitioned_table, pg_inherits, and
what a partition needs of pg_class (relkind, relispartition, relpartbound) and its
constraint text (``pg_get_partition_constraintdef``), as PostgreSQL 15 shows them."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from catalog.partition_tree import DEFAULT, HASH, LIST, PartitionKey, PartitionNode, PartitionTree
from catalog.partition_views import partition_view
from catalog.table import FIRST_USER_OID, TableInfo
from sql.common.names import quote_ident

_STRATEGY_CODES = {LIST: "l", "range": "r", HASH: "h"}


@dataclass(frozen=True, slots=True)
class PartitionRelation:
    """One partition as a relation: the root restricted to it, and pg_class's extra values."""

    table: TableInfo
    class_values: dict[str, Any]


def tree_of(table: TableInfo) -> PartitionTree | None:
    return table.partition_schema.tree if table.partition_schema is not None else None


def root_class_values(table: TableInfo) -> dict[str, Any]:
    """pg_class values of a root with a partition tree: a partitioned table."""
    tree = tree_of(table)
    if tree is None:
        return {}
    return {"relkind": "p", "relhassubclass": bool(tree.children(None))}


def partitions(table: TableInfo) -> Iterator[PartitionRelation]:
    """Every partition of ``table``'s tree as a relation of its own."""
    tree = tree_of(table)
    if tree is None:
        return
    for node in tree.nodes:
        view = partition_view(table, node.name)
        assert view is not None, "a node of the tree"
        yield PartitionRelation(
            dataclasses.replace(view, indexes=(), primary_key_name=None, sequences=()),
            {
                "relkind": "r" if node.key is None else "p",
                "relispartition": True,
                "relpartbound": node.bound.text,
                "relhassubclass": bool(tree.children(node.name)),
            },
        )


def node_oid(node: PartitionNode) -> int:
    return FIRST_USER_OID + node.relation_id


def rows(table: TableInfo) -> Iterator[tuple[str, dict[str, Any]]]:
    """(relation, values) rows of pg_partitioned_table and pg_inherits for ``table``'s tree."""
    tree = tree_of(table)
    if tree is None:
        return
    oids: dict[str | None, int] = {None: table.oid}
    for node in tree.nodes:
        oids[node.name] = node_oid(node)
    keyed: list[tuple[str | None, PartitionKey]] = [(None, tree.key)]
    keyed += [(n.name, n.key) for n in tree.nodes if n.key is not None]
    for name, key in keyed:
        default = next((c for c in tree.children(name) if c.bound.is_default), None)
        yield (
            "pg_partitioned_table",
            {
                "partrelid": oids[name],
                "partstrat": _STRATEGY_CODES[key.strategy],
                "partnatts": len(key.column_ids),
                "partdefid": 0 if default is None else node_oid(default),
                "partattrs": [table.attnum(c) for c in key.column_ids],
                "partclass": [0] * len(key.column_ids),
                "partcollation": [0] * len(key.column_ids),
                "partexprs": None,
            },
        )
    for node in tree.nodes:
        yield (
            "pg_inherits",
            {
                "inhrelid": oids[node.name],
                "inhparent": oids[node.parent],
                "inhseqno": 1,
                "inhdetachpending": False,
            },
        )


def partition_key_def(table: TableInfo, key: PartitionKey) -> str:
    """``pg_get_partkeydef``: ``LIST (region)``."""
    names = {c.id: quote_ident(c.name) for c in table.schema.columns}
    return f"{key.strategy.upper()} ({', '.join(names[c] for c in key.column_ids)})"


def key_defs(table: TableInfo) -> dict[int, str]:
    """pg_get_partkeydef of every partitioned relation of ``table``'s tree, by OID."""
    tree = tree_of(table)
    if tree is None:
        return {}
    out = {table.oid: partition_key_def(table, tree.key)}
    for node in tree.nodes:
        if node.key is not None:
            out[node_oid(node)] = partition_key_def(table, node.key)
    return out


def constraint_defs(table: TableInfo) -> dict[int, str]:
    """``pg_get_partition_constraintdef`` of every partition of ``table``'s tree, by OID:
    its ancestors' conditions and its own, as PostgreSQL 15 deparses them."""
    tree = tree_of(table)
    if tree is None:
        return {}
    out = {}
    for node in tree.nodes:
        parts: list[str] = []
        for step in tree.path(node):
            key = tree.key_of(step.parent)
            assert key is not None, "a partition's parent is partitioned"
            parts.extend(_conditions(table, tree, key, step))
        if len(parts) == 1:
            out[node_oid(node)] = parts[0]
        elif parts:
            out[node_oid(node)] = "(" + " AND ".join(parts) + ")"
    return out


def _conditions(
    table: TableInfo, tree: PartitionTree, key: PartitionKey, node: PartitionNode
) -> list[str]:
    columns = [table.schema.column(c) for c in key.column_ids]
    names = [quote_ident(c.name) for c in columns]
    bound = node.bound
    if bound.strategy == HASH:
        args = ", ".join(names)
        parent = table.oid if node.parent is None else _oid_of(tree, node.parent)
        return [
            f"satisfies_hash_partition('{parent}'::oid, {bound.modulus}, {bound.remainder}, {args})"
        ]
    pg_type = columns[0].type
    if bound.strategy == DEFAULT:
        siblings = [c for c in tree.children(node.parent) if not c.bound.is_default]
        if key.strategy != LIST or not siblings:
            return []
        pairs = sorted(
            pair
            for s in siblings
            for pair in zip(s.bound.values, _list_literals(s.bound.text), strict=True)
        )
        membership = _membership(names[0], pg_type, [literal for _, literal in pairs])
        return [f"(NOT (({names[0]} IS NOT NULL) AND {membership}))"]
    if bound.strategy == LIST:
        membership = _membership(names[0], pg_type, _list_literals(bound.text))
        return [f"({names[0]} IS NOT NULL)", membership]
    if len(names) != 1:
        return []
    lower, upper = _range_literals(bound.text)
    out = [f"({names[0]} IS NOT NULL)"]
    if lower is not None:
        out.append(f"({names[0]} >= {_typed(lower, pg_type)})")
    if upper is not None:
        out.append(f"({names[0]} < {_typed(upper, pg_type)})")
    return out


def _oid_of(tree: PartitionTree, name: str) -> int:
    node = tree.find(name)
    assert node is not None, "a partition of the tree"
    return node_oid(node)


def _membership(name: str, pg_type: Any, literals: list[str]) -> str:
    typed = [_typed(literal, pg_type) for literal in literals]
    if len(typed) == 1:
        return f"({name} = {typed[0]})"
    return f"({name} = ANY (ARRAY[{', '.join(typed)}]))"


def _list_literals(text: str) -> list[str]:
    inner = text.removeprefix("FOR VALUES IN (").removesuffix(")")
    return [v for v in _split_literals(inner) if v != "NULL"]


def _range_literals(text: str) -> tuple[str | None, str | None]:
    body = text.removeprefix("FOR VALUES FROM (")
    lower, upper = body.split(") TO (", 1)
    upper = upper.removesuffix(")")
    return (None if lower == "MINVALUE" else lower), (None if upper == "MAXVALUE" else upper)


def _split_literals(text: str) -> list[str]:
    """Split ``'a', 'b,c', 1`` at the commas outside quotes."""
    out, current, quoted = [], "", False
    for char in text:
        if char == "'":
            quoted = not quoted
        if char == "," and not quoted:
            out.append(current.strip())
            current = ""
            continue
        current += char
    if current.strip():
        out.append(current.strip())
    return out


def _typed(literal: str, data_type: Any) -> str:
    """A bound literal as PostgreSQL deparses a constant of the column's type."""
    name = data_type.pg_name()
    if name == "integer":
        return literal
    if literal.startswith("'"):
        return f"{literal}::{name}"
    return f"'{literal}'::{name}"
