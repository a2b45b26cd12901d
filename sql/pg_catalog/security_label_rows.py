"""pg_seclabel rows of provider ``nyala``: a table's hash/range partitioning and its columns'
encodings, which pg_dump writes as SECURITY LABEL statements (see ``sql.ddl.security_labels``)."""

from __future__ import annotations

from typing import Protocol

from catalog.table import TableInfo
from sql.common.names import quote_ident
from sql.ddl.security_labels import PROVIDER, column_label
from sql.pg_catalog.partitioning import partitioning_clause
from sql.pg_catalog.relations import relation_oid


class _Rows(Protocol):
    def add(self, relation: str, **values: object) -> None: ...


def security_label_rows(rows: _Rows, table: TableInfo, namespace_oid: int) -> None:
    table_label = partitioning_clause(table) or table.pending_partitioning
    labels = [(0, table_label)] if table_label else []
    for column in table.columns:
        label = column_label(column.encoding, column.compression)
        if label is not None:
            labels.append((table.attnum(column.id), label))
    names = {table.attnum(c.id): c.name for c in table.columns}
    for objsubid, label in labels:
        rows.add(
            "pg_seclabel", objoid=table.oid, classoid=relation_oid("pg_class"),
            objsubid=objsubid, provider=PROVIDER, label=label,
        )  # fmt: skip
        suffix = f".{quote_ident(names[objsubid])}" if objsubid else ""
        rows.add(  # the view pg_dump reads
            "pg_seclabels", objoid=table.oid, classoid=relation_oid("pg_class"),
            objsubid=objsubid, objtype="column" if objsubid else "table",
            objnamespace=namespace_oid, objname=f"{quote_ident(table.name)}{suffix}",
            provider=PROVIDER, label=label,
        )  # fmt: skip
