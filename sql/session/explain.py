"""EXPLAIN [ANALYZE]: the plan of a query or write as text rows, as PostgreSQL's ``QUERY PLAN``.

Per base-table reference the plan names the tablets scanned out of the
table's total, the predicates, columns and limit pushed into the scans; then
the DuckDB SQL that runs above the scans.  ANALYZE runs the statement (a
write is applied, as in PostgreSQL) and adds the rows each tablet returned
and the time taken.  ``FORMAT JSON`` gives the same plan as one JSON document,
with the ids of the tablets scanned.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

import pyarrow as pa

from catalog.table import TableInfo
from sql.common.result import Result, ResultColumn
from sql.dml import writes
from sql.dml.write_plan import WritePlan
from sql.execution import index_scan
from sql.execution.executor import ScanStats, TabletScanStats
from sql.execution.runner import QueryRunner, runs_direct
from sql.planner.compiled_query import CompiledQuery
from storage.predicate import PredicateKind, ScanSpec
from storage.transaction import Transaction
from storage.type_oids import TypeOid

COLUMNS = (ResultColumn("QUERY PLAN", TypeOid.TEXT),)
JSON_COLUMNS = (ResultColumn("QUERY PLAN", TypeOid.JSON),)


def scan_lines(compiled: CompiledQuery, params: list[Any]) -> list[str]:
    """One block per table reference: tablets scanned, pushdown, primary-key bounds."""
    lines = []
    for binding in compiled.views:
        table = binding.table
        spec = dataclasses.replace(binding.scan.spec(params), snapshot=binding.snapshot)
        scanned = binding.scan.tablet_ids(spec)
        lines.append(
            f"-> Scan {table.name} ({binding.view}): {len(scanned)} of "
            f"{len(table.tablet_ids)} tablets"
        )
        # the executor's choice, made the same way
        lookup = index_scan.choose(table, spec, binding.scan.partial_indexes)
        if lookup is not None:
            lines.append("     " + lookup.describe())
        lines.extend("     " + line for line in binding.scan.describe())
        bounded = _key_bound_columns(spec, table)
        if bounded:
            lines.append("     Primary-key bounds on: " + ", ".join(bounded))
    return lines


def _key_bound_columns(spec: ScanSpec, table: TableInfo) -> list[str]:
    """The leading key columns whose predicates bound the scan's primary-key range
    (equalities on a prefix, then at most one range), as ``ScanSpec.key_range`` uses them."""
    kinds: dict[int, set[PredicateKind]] = {}
    for predicate in spec.predicates:
        kinds.setdefault(predicate.column_id, set()).add(predicate.kind)
    names = []
    for column in table.schema.key_columns:
        found = kinds.get(column.id, set())
        if PredicateKind.EQUALITY in found:
            names.append(column.name)
            continue
        if PredicateKind.RANGE in found:
            names.append(column.name)
        break
    return names


def explain_lines(
    compiled: CompiledQuery, write: WritePlan | None, params: list[Any], direct: bool = False
) -> list[str]:
    """The plan's lines; ``direct``: the query is answered from its scan, without DuckDB."""
    lines = []
    if write is not None:
        lines.append(f"{write.kind} on {write.table.name}, applied by primary key")
    if direct:
        lines.append("Direct read: the scan answers the query, no DuckDB")
    else:
        lines.append(f"DuckDB above the scans: {compiled.sql}")
    lines.extend(scan_lines(compiled, params))
    return lines


def json_explain(query: CompiledQuery | None, write: WritePlan | None, params: list[Any]) -> Result:
    """EXPLAIN (FORMAT JSON): one document in PostgreSQL's shape (a list holding one
    ``{"Plan": ...}``), a ``Tablet Scan`` node per table reference under the DuckDB node.

    ``Tablets`` lists the ids partition pruning leaves for the pushed predicates, which
    ``FROM t PARTITION (id)`` reads one by one; ``Pushed Predicates`` are those the
    scan applies, so a client sees which of its filters reached storage.  When execution
    will look the rows up through an index (``index_scan.choose``, as the executor calls
    it), ``Index Name`` and ``Index Cond`` say which, as PostgreSQL's index scans do; the
    node type stays ``Tablet Scan``, which the PySpark reader looks for.
    """
    compiled = query if query is not None else write.source  # type: ignore[union-attr]
    scans = []
    for binding in compiled.views:
        spec = binding.scan.spec(params)
        node: dict[str, Any] = {
            "Node Type": "Tablet Scan",
            "Relation Name": binding.table.name,
            "Alias": binding.view,
            "Tablets": [int(t) for t in binding.scan.tablet_ids(spec)],
            "Tablets Total": len(binding.table.tablet_ids),
            "Pushed Predicates": [p.sql() for p in binding.scan.predicates],
            "Columns": [c.name for c in binding.scan.columns],
            "Primary-Key Bounds": _key_bound_columns(spec, binding.table),
        }  # fmt: skip
        lookup = index_scan.choose(binding.table, spec, binding.scan.partial_indexes)
        if lookup is not None:
            node["Index Name"] = lookup.index.name
            node["Index Cond"] = [
                f"{c} ({k})" for c, k in zip(lookup.columns, lookup.kinds, strict=True)
            ]
        scans.append(node)
    plan: dict[str, Any] = {"Node Type": "DuckDB", "Query": compiled.sql, "Plans": scans}
    if write is not None:
        plan = {"Node Type": write.kind.title(), "Relation Name": write.table.name,
                "Plans": [plan]}  # fmt: skip
    document = json.dumps([{"Plan": plan}], indent=2)
    batch = pa.RecordBatch.from_arrays([pa.array([document], pa.string())], names=["QUERY PLAN"])
    return Result(columns=JSON_COLUMNS, batches=iter([batch]), command_tag="EXPLAIN")


def run_explain(
    analyze: bool,
    query: CompiledQuery | None,
    write: WritePlan | None,
    runner: QueryRunner,
    txn: Transaction,
    params: list[Any],
    now: Any,
) -> Result:
    compiled = query if query is not None else write.source  # type: ignore[union-attr]  # a plan has a query or a write
    # EXPLAIN ANALYZE runs the query through DuckDB (``run_to_table``) to count its rows.
    direct = not analyze and write is None and runs_direct(compiled, params, runner.read_snapshot())
    lines = explain_lines(compiled, write, params, direct)
    if analyze:
        stats = ScanStats()
        started = time.perf_counter()
        if write is not None:
            count, _ = writes.execute_write(write, runner, txn, params, now, stats=stats)
        else:
            table = runner.run_to_table(compiled, txn, params, now, stats=stats)
            count = 0 if table is None else table.num_rows
        elapsed_ms = (time.perf_counter() - started) * 1000
        for (table_name, tablet_id), rows in stats.rows_by_tablet.items():
            line = f"Tablet {tablet_id} of {table_name}: {rows} rows read"
            storage = stats.storage_by_tablet.get((table_name, tablet_id))
            if storage is not None:
                line += "; " + _storage_line(storage)
            lines.append(line)
        lines.append(f"Rows: {count}")
        lines.append(f"Execution Time: {elapsed_ms:.3f} ms")
    batch = pa.RecordBatch.from_arrays([pa.array(lines, pa.string())], names=["QUERY PLAN"])
    return Result(columns=COLUMNS, batches=iter([batch]), command_tag="EXPLAIN")


def _storage_line(stats: TabletScanStats) -> str:
    """What a tablet's storage did for the scan: where the rows came from, what was skipped,
    and whether predicates ran on encoded data (dictionary codewords, run-length runs)."""
    return (
        f"MemRowSet rows {stats.memrowset_rows_scanned}, "
        f"rowsets {stats.rowsets_read} read / {stats.rowsets_skipped} skipped, "
        f"blocks {stats.blocks_read} read / {stats.blocks_skipped} skipped, "
        f"predicates {stats.predicates_on_encoded} on encoded data / "
        f"{stats.predicates_on_decoded} on decoded values, "
        f"delta rows {stats.delta_rows}, strings materialised {stats.strings_materialised}"
    )
