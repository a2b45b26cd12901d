"""Compiled queries run: DuckDB over Arrow streams from tablet scans, at a snapshot.

- ``context``: ``DatabaseContext``, what every session of a database shares.
- ``backends``: ``BackendRegistry``, every live session and what it is doing now.
- ``runner``: ``QueryRunner`` runs a CompiledQuery (or answers it from the scan alone).
- ``executor``: ``ScanSource``, the Arrow stream DuckDB reads a table reference from.
- ``system_view_rows``: the rows of nyala's system views at a snapshot.
- ``sequences``: nextval and friends as vectorised DuckDB functions.
- ``index_writes``: secondary-index entries written beside every row write (dml, ddl).
"""
