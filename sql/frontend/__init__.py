"""SQL text in, typed statements out: the ``nyala`` sqlglot dialect and the parser.

- ``dialect``: PostgreSQL plus Kudu/Impala partition DDL, UPSERT and nyala's own nodes.
- ``parser``: tokenizes a query string once, splits it at top-level semicolons and parses
  each statement, turning sqlglot's errors into 42601 with positions into the whole string.
- ``statements``: the typed statements of nyala's own grammar (``Utility``,
  ``CursorStatement``, ``CopyStatement``, ``RoleStatement``, ``ExplainStatement``).
- grammar modules, one per statement family, each reading tokens into those nodes:
  ``utility`` (transaction control, SET/SHOW/RESET, ...), ``cursors``, ``copy_grammar``,
  ``roles``, ``comments`` (COMMENT ON), ``explain`` and ``extensions`` (CREATE/DROP
  EXTENSION).
- ``fingerprint``: a statement's pg_stat_statements query id and normalised text.

Nothing here knows the catalog: binding is the planner's job.
"""
