"""A parsed query becomes a CompiledQuery: bound, rewritten for DuckDB, its scans planned.

- ``binder``: resolves tables and columns against the catalog, annotates types,
  infers untyped parameters (``BoundQuery``).
- ``transpile``: rewrites the bound tree so DuckDB computes what PostgreSQL would.
- ``pushdown``: one ``ScanPlan`` per table reference (predicates, projection, limit,
  the tablets left after ``catalog.pruner``).
- ``partial_index``: which partial indexes a scan may use (its WHERE implies theirs).
- ``time_travel``: the snapshot of ``FOR SYSTEM_TIME AS OF``.
- ``compiled_query``: ``compile_query`` ties the three together once per statement.
- ``sequence_calls``, ``system_views``: how sequence functions and nyala's system views
  look to the planner.
- ``pg_signatures``: the PostgreSQL functions, aggregates, operators and casts the
  planner answers as PostgreSQL does (measured; pg_catalog lists them).
"""
