"""What a table is: names, internal IDs and the tablets that hold its rows.

The catalog maps user-facing table names to ``TableInfo`` records.  IDs are
allocated here and never reused: table IDs name tables for good (a dropped
table's ID is never handed out again), column IDs live in each table's
``Schema`` (see ``storage/schema.py``), and tablet IDs name the storage
engine's tablets, so a WAL record that names a dropped table's tablet can
never land in a new one.  For now every table has exactly one tablet; hash
and range partitioning add more.

The whole catalog is one JSON document (``catalog.json`` in the data
directory), rewritten atomically on every DDL statement.
"""
