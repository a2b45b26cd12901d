"""What the database holds by name: tables (IDs, schemas, partitions, tablets), sequences, roles.

It exposes no names of its own here; ``sql/`` imports them from the modules::

    catalog     Catalog: create, drop, alter and look up tables; allocate table, column, tablet IDs
    catalog_base     CatalogBase: the name maps, IDs, document, relation locks and tablet effects
    catalog_sequences, catalog_partitions, catalog_views   Catalog's methods for each
    table       TableInfo: one table's identity, schema, partitions and tablets
    partition   PartitionSchema (hash levels, range bounds): routes each row to one tablet
    pruner      prune: the tablets of a table that may hold rows matching a ScanSpec
    sequences   SequenceInfo and SequenceCounters: SERIAL, IDENTITY and hidden keys
    store       CatalogStore: the versioned catalog document on disk
    roles       RoleStore: login roles and their SCRAM-SHA-256 verifiers
    privileges  PrivilegeStore: owners and ACLs of tables and the public schema; GRANT's rules
    access_changes   AccessChanges: a transaction's own roles and ACLs until it ends
    access_journal   AccessJournal: those changes, published with the commit record
    logged_document  LoggedDocument: a file whose committed contents the WAL holds first
    overlay     Overlay: a transaction's uncommitted changes to a name map, over the shared one
    catalog_changes  CatalogChanges: a transaction's tablets created, dropped and altered
    ddl_locks   DdlLocks: relation names held by uncommitted DDL until the transaction ends
    index_merge      two CREATE INDEX on one table: the second's index put on the first's entry

IDs are allocated here and never reused: table IDs name tables for good (a
dropped table's ID is never handed out again), column IDs live in each
table's ``Schema`` (see ``storage/schema.py``), and tablet IDs name the
storage engine's tablets, so a WAL record that names a dropped table's tablet
can never land in a new one.  A table without PARTITION BY has one tablet; a
partitioned one has a ``PartitionSchema`` and one tablet per hash-bucket
combination and range.

Three JSON files in the data directory, each replaced atomically:
``catalog.json`` (the tables and views, rewritten on every committed DDL
transaction), ``sequences.json`` (each sequence's durable limit) and ``roles.json``.

Transactional DDL
-----------------
DDL runs in a transaction, as in PostgreSQL: it takes effect at COMMIT, vanishes
at ROLLBACK or ROLLBACK TO SAVEPOINT, and nobody else sees it before COMMIT.

- *Where changes live.*  The first DDL statement of a transaction gets its own
  ``Catalog`` from ``Catalog.begin``: the same methods, over ``Overlay``s of the
  shared table and view maps.  Reads see the committed catalog as it is now
  (PostgreSQL's catalog lookups also use a fresh snapshot) plus the
  transaction's own changes; writes go to the overlay only.  The session reads
  through that view for the rest of the transaction (plans, pg_catalog rows,
  nextval), so a table it created is visible to it and to nobody else, and a
  table it dropped stays readable by everyone else until COMMIT.
- *Tablets.*  A new table's tablets are created at once (nobody else names
  them); a dropped table's or range's tablets are removed only after COMMIT; an
  ALTER changes the tablet's schema in place, keeping dropped columns in the
  tablet (reads go by column ID, so nobody reads them) until COMMIT.
  ``CatalogChanges`` records all three, so ROLLBACK drops what the transaction
  created and puts altered schemas back, and a savepoint marks how far to undo.
- *Commit.*  ``Catalog.commit(txn)`` builds the whole new catalog document
  (numbered by ``ddl_sequence``) and hands it to the storage transaction as a
  CATALOG marker in its one WAL commit record: the DDL and the rows written
  beside it become durable together.  Once the record is durable (and before
  the commit is visible) the overlay is applied to the shared maps and
  ``catalog.json`` is rewritten; then dropped tablets are removed.  Commits that
  change the catalog are serialised (``_commit_lock``) so the numbers follow
  WAL order.
- *Crash.*  On open, a CATALOG marker replayed from the WAL with a higher
  ``ddl_sequence`` than ``catalog.json`` replaces it (a crash after the WAL
  write, before the file); tablets no committed table names are removed (a
  crash inside an open transaction, or before dropped tablets went); tablet
  schemas are aligned with the committed catalog (a crash after an ALTER that
  never committed).  ``tests/e2e/test_ddl_crash.py`` kills the process at each
  of these points.
- *Concurrency.*  DDL takes ``DdlLocks`` on the relation names it changes,
  held to the end of the transaction, like PostgreSQL's ACCESS EXCLUSIVE lock:
  a second transaction's DDL on the same name waits (``lock_timeout`` 55P03,
  cancel 57014, a cycle of waiters 40P01), and so does a statement of another
  session that reads or writes a relation so held.  A conflict the locks did
  not prevent fails the COMMIT with 40001 rather than lose a change.

Making another catalog object transactional (indexes, foreign keys, temporary
tables): keep it in the catalog document (a map on ``CatalogBase`` beside
``_tables``/``_views``, wrapped in an ``Overlay`` by ``begin`` and applied in
``commit``), take ``lock_relations`` on the names it changes, create storage
through ``_create_tablet`` and drop it through ``_drop_tablet``, and write
through ``_save`` (which, in a transaction, writes nothing until COMMIT).
Comments, roles and privileges live in ``comments.json``, ``roles.json`` and
``privileges.json``: a transaction's comments, and the private copies of
roles and privileges it changes (``access_changes``), become new documents
that ride in its WAL commit record beside the catalog document
(``comments``, ``access_journal``, ``logged_document``), so a crash keeps
all of a transaction or none of it.
"""
