"""SQL text in, typed statements out: the ``nyala`` sqlglot dialect and the parser.

- ``dialect``: PostgreSQL plus Kudu/Impala partition DDL, UPSERT and nyala's own nodes.
- ``parser``: tokenizes a query string once, splits it at top-level semicolons and parses
  each statement, turning sqlglot's errors into 42601 with positions into the whole string.
- ``utility``: transaction control, SET/SHOW/RESET and the other utility statements.

Nothing here knows the catalog: binding is the planner's job.
"""
