"""One partition's data: the Tablet and its rowsets, Kudu's tablet storage.

The package's one job is to hold a tablet's rows under MVCC and to move them
from memory to disk.  It exposes, by module, ``tablet.Tablet`` (writes, scans,
flush, schema change) for the engine; ``memrowset.MemRowSet``,
``diskrowset.DiskRowSet`` (its files laid out by ``rowset_files`` and written
by ``rowset_writer``), ``deltas`` (the DeltaMemStore), ``delta_records``,
``delta_file`` and ``delta_apply`` (delta records, their files, applying them),
``row_locks`` (row locks that are not writes),
``flush``, ``delta_compaction``, ``rowset_compaction`` and ``compaction_policy``
(the maintenance work), ``schema_change``, ``key_index`` and ``bloom`` are its
parts.
The package itself exports nothing.
"""
