"""PostgreSQL's type OIDs: the one table every layer reads them from.

The values are PostgreSQL 15's ``pg_type.oid`` for the built-in types nyala
stores, sends or shows in its emulated catalogs.  Array types, widths and
spellings are in sql/pg_catalog/builtin_types.py, keyed by these.
"""

from __future__ import annotations

from enum import IntEnum


class TypeOid(IntEnum):
    BOOL = 16
    BYTEA = 17
    CHAR = 18
    NAME = 19
    INT8 = 20
    INT2 = 21
    INT2VECTOR = 22
    INT4 = 23
    REGPROC = 24
    TEXT = 25
    OID = 26
    OIDVECTOR = 30
    JSON = 114
    ACLITEM = 1033
    PG_NODE_TREE = 194
    FLOAT4 = 700
    FLOAT8 = 701
    UNKNOWN = 705
    BPCHAR = 1042
    VARCHAR = 1043
    DATE = 1082
    TIME = 1083
    TIMESTAMP = 1114
    TIMESTAMPTZ = 1184
    INTERVAL = 1186
    TIMETZ = 1266
    NUMERIC = 1700
    REGCLASS = 2205
    REGTYPE = 2206
    RECORD = 2249
    VOID = 2278
    UUID = 2950
    JSONB = 3802
    REGNAMESPACE = 4089


# Each type's array type (pg_type.typarray), for the types that have one.
ARRAY_OID: dict[TypeOid, int] = {
    TypeOid.BOOL: 1000,
    TypeOid.BYTEA: 1001,
    TypeOid.CHAR: 1002,
    TypeOid.NAME: 1003,
    TypeOid.INT8: 1016,
    TypeOid.INT2: 1005,
    TypeOid.INT2VECTOR: 1006,
    TypeOid.INT4: 1007,
    TypeOid.REGPROC: 1008,
    TypeOid.TEXT: 1009,
    TypeOid.OID: 1028,
    TypeOid.OIDVECTOR: 1013,
    TypeOid.JSON: 199,
    TypeOid.ACLITEM: 1034,
    TypeOid.FLOAT4: 1021,
    TypeOid.FLOAT8: 1022,
    TypeOid.BPCHAR: 1014,
    TypeOid.VARCHAR: 1015,
    TypeOid.DATE: 1182,
    TypeOid.TIME: 1183,
    TypeOid.TIMESTAMP: 1115,
    TypeOid.TIMESTAMPTZ: 1185,
    TypeOid.INTERVAL: 1187,
    TypeOid.TIMETZ: 1270,
    TypeOid.NUMERIC: 1231,
    TypeOid.REGCLASS: 2210,
    TypeOid.REGTYPE: 2211,
    TypeOid.RECORD: 2287,
    TypeOid.UUID: 2951,
    TypeOid.JSONB: 3807,
    TypeOid.REGNAMESPACE: 4090,
}
