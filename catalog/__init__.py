"""What the database holds by name: tables (IDs, schemas, partitions, tablets), sequences, roles.

It exposes no names of its own here; ``sql/`` imports them from the modules::

    catalog     Catalog: create, drop, alter and look up tables; allocate table, column, tablet IDs
    table       TableInfo: one table's identity, schema, partitions and tablets
    partition   PartitionSchema (hash levels, range bounds): routes each row to one tablet
    pruner      prune: the tablets of a table that may hold rows matching a ScanSpec
    sequences   SequenceInfo and SequenceCounters: SERIAL, IDENTITY and hidden keys
    store       CatalogStore: the versioned catalog document on disk
    roles       RoleStore: login roles and their SCRAM-SHA-256 verifiers
    privileges  PrivilegeStore: owners and ACLs of tables and the public schema; GRANT's rules

IDs are allocated here and never reused: table IDs name tables for good (a
dropped table's ID is never handed out again), column IDs live in each
table's ``Schema`` (see ``storage/schema.py``), and tablet IDs name the
storage engine's tablets, so a WAL record that names a dropped table's tablet
can never land in a new one.  A table without PARTITION BY has one tablet; a
partitioned one has a ``PartitionSchema`` and one tablet per hash-bucket
combination and range.

Three JSON files in the data directory, each replaced atomically:
``catalog.json`` (the tables, rewritten on every DDL statement),
``sequences.json`` (each sequence's durable limit) and ``roles.json``.
"""
