"""What every stage of sql/ shares: type maps, identifier folding, DuckDB errors, results.

- ``datatypes``: SQL type spellings -> Kudu DataTypes; DuckDB result types -> PostgreSQL
  OIDs (the one such map) and wire values.
- ``names``: unquoted identifiers fold to lower case; table names and schemas.
- ``duckdb_errors``: the one place DuckDB's exceptions become SQLSTATE errors.
- ``result``: ``Result``, ``ResultColumn`` and ``PreparedStatement``, the only types
  server/ reads back from sql/.
- ``version``: the PostgreSQL version nyala answers as.
"""
