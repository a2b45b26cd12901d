"""Column files: one column of a DiskRowSet as encoded, compressed, checksummed blocks.

The package's one job is to write and read such files; it exposes, by module,
``writer.write_cfile``, ``reader.CFileReader`` (with its decoded ``Block``s and
the process-wide ``BLOCK_CACHE``), ``pushdown.block_may_match`` (min/max block
skipping), and the ``EncodingType`` and ``CompressionType`` choices.  It knows
nothing of rowsets or tablets; the package itself exports nothing.

A cfile holds the values of one column in rowid order, cut into blocks of
about 256 KiB or 64K rows.  Each block carries a null bitmap, its null count,
the min and max of its non-null values, and a CRC32C; the footer holds the
ordinal index (first rowid, row count and file offset of every block), so a
scan can skip blocks whose min/max rule its predicates out and seek to the
block holding a rowid.  Layout and encodings: ``writer.py``, ``encoding.py``.
"""
