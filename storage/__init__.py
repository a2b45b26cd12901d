"""nyala's storage engine: MVCC tablets modelled on Apache Kudu, under one WAL per database.

Its one job is to keep tables' rows durable and to read and write them
transactionally; the package itself exports nothing (import the modules).

The tablet model, in one page
-----------------------------

A table is split into *tablets* (catalog/ decides which row goes where).  A
tablet is a set of *rowsets*, each holding a disjoint set of primary keys:

- the **MemRowSet** (``tablet/memrowset.py``), an in-memory map from encoded
  primary key (``key_encoding.py``: bytes that sort like the key tuples) to
  the row as inserted plus its chain of mutations (UPDATE, DELETE,
  REINSERT; the vocabulary is ``row_change.py``).  Every insert goes here.
- **DiskRowSets** (``tablet/diskrowset.py``, written by ``rowset_writer.py``): a MemRowSet flushed
  (``tablet/flush.py``, on a size threshold or ``StorageEngine.checkpoint()``)
  to per-column files (``cfile/``), with a key index, a bloom filter, UNDO
  delta files for history and REDO delta stores (``tablet/deltas.py``,
  ``delta_file.py``) for changes that arrive after the flush.  Deltas are
  per-column records by rowid (``delta_records.py``), applied a block at a
  time as a scatter (``delta_apply.py``).

Flushes (``tablet/flush.py``), minor and major delta compactions
(``tablet/delta_compaction.py``), merging rowset compactions
(``tablet/rowset_compaction.py``, chosen by ``tablet/compaction_policy.py``)
and UNDO GC run in the background: ``maintenance_manager.py`` runs the
best-scoring of each tablet's ops (``maintenance_ops.py``).  Each writes
its files with no tablet lock held and swaps them in with one metadata write
and a brief hold of the lock.

Every change is tagged with the transaction that made it (``mvcc.TxnState``).
A transaction (``transaction.py``) writes provisionally at once; at commit it

1. appends ONE record to the write-ahead log (``wal.py``, layout in
   ``commit_record.py``) holding its commit timestamp and every write,
2. waits for that record to be fsynced (group commit: one fsync covers all
   concurrent committers),
3. stamps its TxnState with the commit timestamp, making all of its writes
   visible together, and tells the ``MvccManager`` it is applied.

Timestamps are hybrid times (``timestamp.py``): wall-clock microseconds with a
logical counter, from one clock per database.  A *snapshot* is a timestamp
S at or below the MvccManager's safe time; a reader sees exactly the changes
committed at <= S, plus its own.  Because the WAL only ever holds committed
transactions, recovery (``engine.py``) loads tablet metadata and replays
every record as committed at its timestamp.

A transaction sees the database only through the ``CommitPipeline``
(``commit_pipeline.py``: MVCC manager, WAL, commit lock, waits-for graph) and
the ``TabletRegistry`` (``tablet_registry.py``), which the engine builds.

Writers to one key are serialised: a transaction that meets another live
transaction's provisional write waits for it (``waits_for.py`` detects
deadlocks), then applies to the newest version (READ COMMITTED).  Row locks
that are not writes (a foreign-key check's FOR KEY SHARE, ``SELECT ... FOR
SHARE``) live in each tablet's lock table (``tablet/row_locks.py``), with
PostgreSQL's four modes and their conflicts (``row_lock_mode.py``).

The public surface
------------------

Shared vocabulary, used by every layer: ``data_type``, ``schema``, ``predicate``
(``ColumnPredicate``, ``ScanSpec``), ``timestamp``, ``errors``, ``row_change``
(``to_storage_values``).  The facade for catalog/ and sql/:
``engine.StorageEngine`` (open, create/drop tablets, ``begin()``) and
``transaction.Transaction`` (scan, insert, update, delete, commit, rollback).
Batches crossing the seam are ``pyarrow.RecordBatch``es whose fields are named
``str(column_id)``.  Everything else here is internal.

Inside storage, imports point down: the engine-level modules (engine,
transaction, commit_pipeline, tablet_registry, wal, commit_record, waits_for)
-> ``tablet/`` -> ``cfile/`` -> the vocabulary; import-linter keeps it so.
"""
