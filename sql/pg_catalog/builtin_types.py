"""PostgreSQL 15's built-in types as pg_type lists them: OID, name, width, category, array type.

``display`` is how ``format_type`` spells the type (``integer`` for int4,
``character varying`` for varchar); arrays get their element's spelling plus ``[]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from storage.type_oids import ARRAY_OID, TypeOid


@dataclass(frozen=True, slots=True)
class BuiltinType:
    oid: int
    name: str
    length: int
    category: str
    array_oid: int = 0
    element_oid: int = 0
    display: str = ""


def _types() -> tuple[BuiltinType, ...]:
    base = [
        (TypeOid.BOOL, "bool", 1, "B", "boolean"),
        (TypeOid.BYTEA, "bytea", -1, "U", ""),
        (TypeOid.CHAR, "char", 1, "Z", '"char"'),
        (TypeOid.NAME, "name", 64, "S", ""),
        (TypeOid.INT8, "int8", 8, "N", "bigint"),
        (TypeOid.INT2, "int2", 2, "N", "smallint"),
        (TypeOid.INT2VECTOR, "int2vector", -1, "A", ""),
        (TypeOid.INT4, "int4", 4, "N", "integer"),
        (TypeOid.REGPROC, "regproc", 4, "N", ""),
        (TypeOid.TEXT, "text", -1, "S", ""),
        (TypeOid.OID, "oid", 4, "N", ""),
        (TypeOid.OIDVECTOR, "oidvector", -1, "A", ""),
        (TypeOid.JSON, "json", -1, "U", ""),
        (TypeOid.ACLITEM, "aclitem", 12, "U", ""),
        (TypeOid.PG_NODE_TREE, "pg_node_tree", -1, "Z", ""),
        (TypeOid.FLOAT4, "float4", 4, "N", "real"),
        (TypeOid.FLOAT8, "float8", 8, "N", "double precision"),
        (TypeOid.UNKNOWN, "unknown", -2, "X", ""),
        (TypeOid.BPCHAR, "bpchar", -1, "S", "character"),
        (TypeOid.VARCHAR, "varchar", -1, "S", "character varying"),
        (TypeOid.DATE, "date", 4, "D", ""),
        (TypeOid.TIME, "time", 8, "D", "time without time zone"),
        (TypeOid.TIMESTAMP, "timestamp", 8, "D", "timestamp without time zone"),
        (TypeOid.TIMESTAMPTZ, "timestamptz", 8, "D", "timestamp with time zone"),
        (TypeOid.INTERVAL, "interval", 16, "T", ""),
        (TypeOid.TIMETZ, "timetz", 12, "D", "time with time zone"),
        (TypeOid.NUMERIC, "numeric", -1, "N", ""),
        (TypeOid.REGCLASS, "regclass", 4, "N", ""),
        (TypeOid.REGTYPE, "regtype", 4, "N", ""),
        (TypeOid.RECORD, "record", -1, "P", ""),
        (TypeOid.VOID, "void", 4, "P", ""),
        (TypeOid.UUID, "uuid", 16, "U", ""),
        (TypeOid.JSONB, "jsonb", -1, "U", ""),
        (TypeOid.REGNAMESPACE, "regnamespace", 4, "N", ""),
        # Pseudo-types PostgreSQL's own catalogs name (sqlsmith looks them up).
        (2275, "cstring", -2, "P", ""),
        (2276, "any", 4, "P", '"any"'),
        (2277, "anyarray", -1, "P", ""),
        (2281, "internal", 8, "P", ""),
        (2283, "anyelement", 4, "P", ""),
        (2279, "trigger", 4, "P", ""),
        (3838, "event_trigger", 4, "P", ""),
    ]
    arrays = {int(k): v for k, v in ARRAY_OID.items()}
    out = []
    for oid, name, length, category, display in base:
        array_oid = arrays.get(int(oid), 0)
        out.append(BuiltinType(int(oid), name, length, category, array_oid, 0, display or name))
        if array_oid:
            out.append(
                BuiltinType(array_oid, "_" + name, -1, "A", 0, int(oid), (display or name) + "[]")
            )
    return tuple(out)


BUILTIN_TYPES = _types()
TYPE_BY_OID = {t.oid: t for t in BUILTIN_TYPES}
