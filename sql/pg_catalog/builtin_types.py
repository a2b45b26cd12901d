"""PostgreSQL 15's built-in types as pg_type lists them: OID, name, width, category, array type.

``display`` is how ``format_type`` spells the type (``integer`` for int4,
``character varying`` for varchar); arrays get their element's spelling plus ``[]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from storage.types import PG_TIMESTAMPTZ_OID


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
        (16, "bool", 1, "B", 1000, "boolean"),
        (17, "bytea", -1, "U", 1001, ""),
        (18, "char", 1, "Z", 1002, '"char"'),
        (19, "name", 64, "S", 1003, ""),
        (20, "int8", 8, "N", 1016, "bigint"),
        (21, "int2", 2, "N", 1005, "smallint"),
        (22, "int2vector", -1, "A", 1006, ""),
        (23, "int4", 4, "N", 1007, "integer"),
        (24, "regproc", 4, "N", 1008, ""),
        (25, "text", -1, "S", 1009, ""),
        (26, "oid", 4, "N", 1028, ""),
        (30, "oidvector", -1, "A", 1013, ""),
        (114, "json", -1, "U", 199, ""),
        (194, "pg_node_tree", -1, "Z", 0, ""),
        (700, "float4", 4, "N", 1021, "real"),
        (701, "float8", 8, "N", 1022, "double precision"),
        (705, "unknown", -2, "X", 0, ""),
        (1042, "bpchar", -1, "S", 1014, "character"),
        (1043, "varchar", -1, "S", 1015, "character varying"),
        (1082, "date", 4, "D", 1182, ""),
        (1083, "time", 8, "D", 1183, "time without time zone"),
        (1114, "timestamp", 8, "D", 1115, "timestamp without time zone"),
        (PG_TIMESTAMPTZ_OID, "timestamptz", 8, "D", 1185, "timestamp with time zone"),
        (1186, "interval", 16, "T", 1187, ""),
        (1266, "timetz", 12, "D", 1270, "time with time zone"),
        (1700, "numeric", -1, "N", 1231, ""),
        (2205, "regclass", 4, "N", 2210, ""),
        (2206, "regtype", 4, "N", 2211, ""),
        (2249, "record", -1, "P", 2287, ""),
        (2278, "void", 4, "P", 0, ""),
        (2950, "uuid", 16, "U", 2951, ""),
        (3802, "jsonb", -1, "U", 3807, ""),
        (4089, "regnamespace", 4, "N", 4090, ""),
    ]
    out = []
    for oid, name, length, category, array_oid, display in base:
        out.append(BuiltinType(oid, name, length, category, array_oid, 0, display or name))
        if array_oid:
            out.append(
                BuiltinType(array_oid, "_" + name, -1, "A", 0, oid, (display or name) + "[]")
            )
    return tuple(out)


BUILTIN_TYPES = _types()
TYPE_BY_OID = {t.oid: t for t in BUILTIN_TYPES}
