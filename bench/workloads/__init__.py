"""The workloads, in the order a run measures them (later ones reuse earlier data)."""

from __future__ import annotations

from collections.abc import Callable

from bench.context import Context
from bench.workloads import index_lookup, jdbc_batch, mixed, oltp, pgbench, pushdown, tpch

WORKLOADS: dict[str, Callable[[Context], None]] = {
    "bulk_load": oltp.bulk_load,
    "executemany": oltp.executemany,
    "jdbc_batch": jdbc_batch.jdbc_batch,
    "single_insert": oltp.single_insert,
    "point_select": oltp.point_select,
    "update": oltp.update,
    "delete": oltp.delete,
    "mixed": mixed.mixed,
    "pgbench": pgbench.pgbench,
    "pushdown": pushdown.pushdown,
    "index_lookup": index_lookup.index_lookup,
    "tpch": tpch.tpch,
}
