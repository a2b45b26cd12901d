"""How foreign keys appear in pg_catalog: pg_constraint rows of contype 'f', and pg_depend.

Each key's row carries both sides' attnums (conkey, confkey), the parent's
OID and the OID of the index the key goes through (conindid), the actions and
match type as pg_constraint spells them, and pg_get_constraintdef's text.
pg_depend ties the constraint to the child's columns ('a') and to the parent's
columns and index ('n'), as PostgreSQL records them.
"""

from __future__ import annotations

from collections.abc import Callable

from catalog.foreign_keys import ACTION_WORDS, MATCH_FULL, NO_ACTION, ForeignKey
from catalog.table import TableInfo
from catalog.temp_tables import user_name
from sql.common.names import quote_ident
from sql.pg_catalog.sequences import Row
from sql.pg_catalog.temp_namespaces import namespace_oid

FOREIGN_KEY_OID_BASE = 1_300_000_000
_KEYS_PER_TABLE = 1000
PG_CONSTRAINT_OID = 2606
PG_CLASS_OID = 1259


def foreign_key_oid(table: TableInfo, key: ForeignKey) -> int:
    return FOREIGN_KEY_OID_BASE + table.table_id * _KEYS_PER_TABLE + key.number


def definition(child: TableInfo, parent: TableInfo, key: ForeignKey) -> str:
    """pg_get_constraintdef's text for ``key``."""
    mine = ", ".join(quote_ident(child.schema.column(c).name) for c in key.columns)
    theirs = ", ".join(quote_ident(parent.schema.column(c).name) for c in key.parent_columns)
    text = f"FOREIGN KEY ({mine}) REFERENCES {quote_ident(user_name(parent.name))}({theirs})"
    if key.match == MATCH_FULL:
        text += " MATCH FULL"
    if key.on_update != NO_ACTION:
        text += f" ON UPDATE {ACTION_WORDS[key.on_update]}"
    if key.on_delete != NO_ACTION:
        text += f" ON DELETE {ACTION_WORDS[key.on_delete]}"
        if key.set_columns:
            names = ", ".join(quote_ident(child.schema.column(c).name) for c in key.set_columns)
            text += f" ({names})"
    if key.deferrable:
        text += " DEFERRABLE"
    if key.deferred:
        text += " INITIALLY DEFERRED"
    if not key.validated:
        text += " NOT VALID"
    return text


def rows(
    table: TableInfo,
    parent_of: Callable[[int], TableInfo],
    index_oid: Callable[[TableInfo, int | None], int],
) -> list[Row]:
    """The pg_constraint and pg_depend rows of ``table``'s foreign keys; ``index_oid(parent,
    index ID)`` names the index a key goes through (None: the primary key's)."""
    out: list[Row] = []
    for key in table.foreign_keys:
        parent = parent_of(key.parent_id)
        oid = foreign_key_oid(table, key)
        index = index_oid(parent, key.parent_index)
        out.append(
            Row(
                "pg_constraint",
                {
                    "oid": oid,
                    "conname": key.name,
                    "connamespace": namespace_oid(table),
                    "contype": "f",
                    "condeferrable": key.deferrable,
                    "condeferred": key.deferred,
                    "convalidated": key.validated,
                    "conrelid": table.oid,
                    "contypid": 0,
                    "conindid": index,
                    "conparentid": 0,
                    "confrelid": parent.oid,
                    "confupdtype": key.on_update,
                    "confdeltype": key.on_delete,
                    "confmatchtype": key.match,
                    "conislocal": True,
                    "coninhcount": 0,
                    "connoinherit": True,
                    "conkey": [table.attnum(c) for c in key.columns],
                    "confkey": [parent.attnum(c) for c in key.parent_columns],
                    "confdelsetcols": [table.attnum(c) for c in key.set_columns] or None,
                    "conbin": definition(table, parent, key),
                },
            )
        )
        depends = [(table.oid, table.attnum(c), "a") for c in key.columns]
        depends += [(parent.oid, parent.attnum(c), "n") for c in key.parent_columns]
        depends.append((index, 0, "n"))
        out.extend(
            Row(
                "pg_depend",
                {
                    "classid": PG_CONSTRAINT_OID,
                    "objid": oid,
                    "objsubid": 0,
                    "refclassid": PG_CLASS_OID,
                    "refobjid": ref,
                    "refobjsubid": sub,
                    "deptype": kind,
                },
            )
            for ref, sub, kind in depends
        )
    return out
