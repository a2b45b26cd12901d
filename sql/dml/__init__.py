"""INSERT, UPDATE and DELETE: plan the rows with DuckDB, apply them by primary key.

- ``writes``: ``plan_insert``/``plan_update``/``plan_delete`` build a ``WritePlan``
  (``write_plan``); ``execute_write`` runs it in a storage Transaction.
- ``key_writes``: the DuckDB-free path for VALUES and writes by the whole key.
- ``conflict``: ON CONFLICT and UPSERT; ``recheck``: READ COMMITTED's re-check of rows
  a concurrent transaction changed; ``write_batches``: constraints and casts per batch.
"""
