"""How sequences appear in pg_catalog: pg_class rows of relkind 'S', pg_sequence, pg_depend.

Column sequences and standalone ones (CREATE SEQUENCE) alike.

A SERIAL column's sequence depends on its column automatically (deptype 'a'),
an IDENTITY column's internally ('i'), as PostgreSQL records them; psql's
``\\d`` and ``pg_get_serial_sequence`` find a column's sequence through that
pg_depend row.  The sequence of a hidden key is not shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catalog import sequences as catalog_sequences
from catalog.sequence_objects import StandaloneSequence
from catalog.sequences import SequenceInfo
from catalog.table import TableInfo
from catalog.temp_tables import is_temporary, user_name
from sql.pg_catalog.temp_namespaces import PUBLIC_OID, temp_namespace_oid
from storage.data_type import ColumnId
from storage.type_oids import TypeOid

_TYPE_OIDS = {"smallint": TypeOid.INT2, "integer": TypeOid.INT4, "bigint": TypeOid.INT8}
PG_CLASS_OID = 1259


@dataclass(frozen=True, slots=True)
class Row:
    relation: str
    values: dict[str, Any]


def sequence_oid(table: TableInfo, column_id: int) -> int:
    return catalog_sequences.sequence_oid(table.table_id, column_id)


LIVE_COLUMNS = {
    "pg_sequences": (
        "* REPLACE (nyf_sequence_last_value(CASE WHEN schemaname LIKE 'pg\\_temp\\_%' ESCAPE '\\'"
        " THEN schemaname || '.' || sequencename ELSE sequencename END) AS last_value)"
    ),
}
"""Columns read afresh at every query: a sequence's value moves without any DDL."""


def rows(table: TableInfo) -> list[Row]:
    """The catalog rows of the table's visible sequences."""
    out = []
    for info in table.sequences:
        if info.hidden:
            continue
        oid = sequence_oid(table, info.column_id)
        deptype = "i" if info.identity else "a"
        out += _rows(info, oid, (table, ColumnId(info.column_id), deptype))
    return out


def standalone_rows(sequence: StandaloneSequence, owner: TableInfo | None) -> list[Row]:
    """The catalog rows of a CREATE SEQUENCE sequence; OWNED BY makes it depend on its
    column automatically, as a SERIAL column's does."""
    owned = None
    if owner is not None and sequence.owned_by is not None:
        owned = (owner, ColumnId(sequence.owned_by[1]), "a")
    return _rows(sequence.info, sequence.oid, owned)


def _rows(info: SequenceInfo, oid: int, owned: tuple[TableInfo, ColumnId, str] | None) -> list[Row]:
    temporary = is_temporary(info.name)
    schema = info.name.split(".", 1)[0] if temporary else "public"
    out = [
        Row(
            "pg_class",
            {
                "oid": oid,
                "relname": user_name(info.name),
                "relnamespace": temp_namespace_oid(schema) if temporary else PUBLIC_OID,
                "relpersistence": "t" if temporary else "p",
                "relam": 0,
                "relkind": "S",
                "relnatts": 3,
            },
        ),
        Row(
            "pg_sequences",
            {
                "schemaname": schema,
                "sequencename": user_name(info.name),
                "sequenceowner": None,
                "data_type": info.type_name,
                "start_value": info.start,
                "min_value": info.min_value,
                "max_value": info.max_value,
                "increment_by": info.increment,
                "cycle": info.cycle,
                "cache_size": info.cache,
                "last_value": None,
            },
        ),
        Row(
            "pg_sequence",
            {
                "seqrelid": oid,
                "seqtypid": _TYPE_OIDS[info.type_name],
                "seqstart": info.start,
                "seqincrement": info.increment,
                "seqmax": info.max_value,
                "seqmin": info.min_value,
                "seqcache": info.cache,
                "seqcycle": info.cycle,
            },
        ),
    ]
    if owned is not None:
        table, column_id, deptype = owned
        out.append(
            Row(
                "pg_depend",
                {
                    "classid": PG_CLASS_OID,
                    "objid": oid,
                    "objsubid": 0,
                    "refclassid": PG_CLASS_OID,
                    "refobjid": table.oid,
                    "refobjsubid": table.attnum(column_id),
                    "deptype": deptype,
                },
            )
        )
    return out
