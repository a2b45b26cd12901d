"""What a table is: names, internal IDs and the tablets that hold its rows.

The catalog maps user-facing table names to ``TableInfo`` records.  IDs are
allocated here and never reused: table IDs name tables for good (a dropped
table's ID is never handed out again), column IDs live in each table's
``Schema`` (see ``storage/schema.py``), and tablet IDs name the storage
engine's tablets, so a WAL record that names a dropped table's tablet can
never land in a new one.  A table without PARTITION BY has one tablet; a
partitioned one has a ``PartitionSchema`` (``partition``) and one tablet per
hash-bucket combination and range, and ``pruner`` picks the tablets a scan
needs.

The whole catalog is one JSON document (``catalog.json`` in the data
directory), rewritten atomically on every DDL statement.
"""
