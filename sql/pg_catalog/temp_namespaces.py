"""The schema a user relation's catalog rows name: ``public``, or its session's ``pg_temp_<n>``.

A temporary table is a catalog table named ``pg_temp_<n>.<name>`` (catalog/temp_tables.py);
PostgreSQL's clients expect it as ``<name>`` in a schema of its own, as psql's ``\\d`` and
``'name'::regclass`` find it there.
"""

from __future__ import annotations

from catalog.table import TableInfo
from catalog.temp_tables import SCHEMA_PREFIX, is_temporary

PUBLIC_OID = 2200
_TEMP_NAMESPACE_OID_BASE = 1_400_000_000


def temp_namespace_oid(schema: str) -> int:
    """OID of a session's ``pg_temp_<n>`` schema (its ``pg_toast_temp_<n>`` is the next one)."""
    return _TEMP_NAMESPACE_OID_BASE + 2 * int(schema[len(SCHEMA_PREFIX) :])


def namespace_oid(table: TableInfo) -> int:
    """The schema a table's rows name: its session's ``pg_temp_<n>`` for a temporary one."""
    if is_temporary(table.name):
        return temp_namespace_oid(table.name.split(".", 1)[0])
    return PUBLIC_OID
