"""Sequence function calls as the planner rewrites them: to nyala's DuckDB functions, or folded.

``nextval('s')`` becomes a call of the vectorised DuckDB function named here
(sql/execution/sequences.py defines them), and ``pg_get_serial_sequence`` of
literals folds to the sequence's name.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.catalog import Catalog
from catalog.table import TableInfo
from storage.errors import UndefinedColumn, UndefinedTable

FUNCTIONS = {"nextval": "nyf_nextval", "currval": "nyf_currval", "setval": "nyf_setval",
             "lastval": "nyf_lastval"}  # fmt: skip


def sequence_name(text: str) -> str:
    """A sequence named as regclass input: optionally schema-qualified, maybe quoted."""
    name = text.strip()
    if name.startswith("public."):
        name = name[len("public.") :]
    if len(name) > 1 and name[0] == name[-1] == '"':
        return name[1:-1].replace('""', '"')
    return name.lower()


def fold_serial_sequences(ast: exp.Expr, catalog: Catalog) -> None:
    """Replace ``pg_get_serial_sequence('t', 'c')`` of literals by the sequence's name.

    ORMs reset sequences with ``SELECT setval(pg_get_serial_sequence('t', 'id'),
    max(id)) FROM t``: the catalog function would send the query to the system
    catalogs, which cannot read ``t`` or call ``setval``; folded, it is a user query.
    """
    for node in list(ast.find_all(exp.Anonymous)):
        args = node.expressions
        if node.name.lower() != "pg_get_serial_sequence" or len(args) != 2:
            continue
        if not all(isinstance(a, exp.Literal) and a.is_string for a in args):
            continue
        table_text, column_name = args[0].name, args[1].name
        if "." in sequence_name(table_text):
            continue
        table = catalog.find_table(sequence_name(table_text))
        if table is None:
            raise UndefinedTable(f'relation "{table_text}" does not exist')
        column = next((c for c in table.columns if c.name == column_name), None)
        if column is None:
            raise UndefinedColumn(
                f'column "{column_name}" of relation "{table.name}" does not exist'
            )
        info = table.sequence_of(column.id)
        name = info.name if info is not None else _owned_sequence(catalog, table, column.id)
        value: exp.Expr = exp.cast(
            exp.Literal.string(f"public.{name}") if name is not None else exp.null(), "text"
        )
        if (
            node.parent is not None
            and node.arg_key == "expressions"
            and isinstance(node.parent, exp.Select)
        ):
            value = exp.alias_(value, "pg_get_serial_sequence")
        node.replace(value)


def _owned_sequence(catalog: Catalog, table: TableInfo, column_id: int) -> str | None:
    """The standalone sequence OWNED BY the column (how pg_dump restores a SERIAL)."""
    for sequence, owner in catalog.standalone_sequences():
        if owner is table and sequence.owned_by == (table.table_id, column_id):
            return sequence.name
    return None
