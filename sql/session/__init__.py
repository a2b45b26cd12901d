"""A client's session: plans each statement, runs it in its transaction block.

- ``database``: ``Database``, the object server/ opens; it hands out sessions.
- ``session``: ``Session``, the entry point for simple and extended queries.
- ``plan``: the plans a session makes, one type per statement kind; ``plan_cache``.
- ``transaction_block``, ``transaction_modes``: BEGIN ... COMMIT, savepoints, modes.
- ``settings``, ``setting_statements``: SET, SHOW, RESET and the session's values.
- ``cursors``: DECLARE/FETCH/MOVE/CLOSE; ``explain``: EXPLAIN [ANALYZE].
- ``access``: the one privilege check every plan passes before it runs.
- ``statement_log``: log_statement, log_min_duration_statement, connection logs;
  ``lock_wait_log``: log_lock_waits.
- ``statement_tracking``: each finished statement recorded for pg_stat_statements.
"""
