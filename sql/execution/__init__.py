"""Compiled queries run: DuckDB over Arrow streams from tablet scans, at a snapshot.

- ``context``: ``DatabaseContext``, what every session of a database shares.
- ``backends``: ``BackendRegistry``, every live session and what it is doing now.
- ``statement_stats``: ``StatementStats``, pg_stat_statements' counters per statement.
- ``table_activity``: ``TableActivity``, the scan, write, transaction and session counters
  behind pg_stat_database and pg_stat_user_tables.
- ``runner``: ``QueryRunner`` runs a CompiledQuery (or answers it from the scan alone).
- ``executor``: ``ScanSource``, the Arrow stream DuckDB reads a table reference from.
- ``system_view_rows``: the rows of nyala's system views at a snapshot.
- ``sequences``: nextval and friends as vectorised DuckDB functions.
- ``index_writes``: secondary-index entries written beside every row write (dml, ddl).
"""
