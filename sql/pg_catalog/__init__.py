"""pg_catalog and information_schema for psql, drivers and BI tools, answered by DuckDB.

- ``catalog_rows``: the catalog relations' rows, built from the nyala catalog
  (``relations`` their columns, ``builtin_types`` pg_type, ``sequences``, ``roles``,
  ``partitioning`` helpers); ``information_schema``: its views over them.
- ``routines`` (pg_proc, pg_aggregate), ``operators`` (pg_operator), ``casts``
  (pg_cast): the built-ins nyala answers as PostgreSQL does, from the planner's
  measured ``pg_signatures`` table.
- ``functions``: PostgreSQL's catalog functions and reg* casts.
- ``activity``: pg_stat_activity, pg_locks and pg_stat_progress_copy rows, built live at
  each query, and pg_blocking_pids, pg_cancel_backend, pg_terminate_backend.
- ``statement_statistics``: pg_stat_statements and its reset function;
  ``table_statistics``: pg_stat_database, pg_stat_user_tables and their reset functions.
- ``system_query``: ``SystemCatalog`` runs a query over the catalogs on a per-session
  cursor of one shared DuckDB of those rows (``catalog_duckdb``), once
  ``catalog_rewrite`` has told it is one and ``catalog_query`` has compiled it (user
  tables it reads: ``catalog_user_tables``; reg* names' OIDs for binary: ``reg_oids``).
"""
