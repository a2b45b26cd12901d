"""One partition's data: the Tablet and its rowsets, Kudu's tablet storage.

The package's one job is to hold a tablet's rows under MVCC and to move them
from memory to disk.  It exposes, by module, ``tablet.Tablet`` (writes, scans,
flush, schema change) for the engine; ``memrowset.MemRowSet``,
``diskrowset.DiskRowSet``, ``deltas`` (DeltaMemStore and delta files),
``flush``, ``schema_change``, ``key_index`` and ``bloom`` are its parts.
The package itself exports nothing.
"""
