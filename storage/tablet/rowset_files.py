"""Where a DiskRowSet keeps its data: the files of one rowset directory and their names.

Directory ``tablets/<tablet>/rowset-<id>/``::

    col-<column id>.cfile    base values in rowid order (rowids are dense, in key order)
    key.cfile                the encoded primary keys (the key index: ordinal index + min/max
                             key per block, binary-searched within a block)
    deleted.cfile            rows deleted at the flush but still inside the history window
    bloom.bin                bloom filter over the encoded keys
    undo-<n>.delta           UNDO delta files (delta_file.py)
    redo-<n>.delta           REDO delta files (delta_file.py)

A major delta compaction may give a column a new base file (``column_files``
in the rowset's metadata), so readers ask ``column_file_name``.
"""

from __future__ import annotations

from typing import Any

KEY_FILE = "key.cfile"
DELETED_FILE = "deleted.cfile"
BLOOM_FILE = "bloom.bin"


def rowset_dir_name(rowset_id: int) -> str:
    return f"rowset-{rowset_id}"


def column_file_name(meta: dict[str, Any], column_id: int) -> str:
    """The cfile holding a column's base data (a major delta compaction renames it)."""
    name: str = meta.get("column_files", {}).get(str(column_id), f"col-{column_id}.cfile")
    return name


def known_files(meta: dict[str, Any]) -> set[str]:
    """Every file a rowset's metadata entry names."""
    names = {column_file_name(meta, c) for c in meta.get("columns") or []}
    names |= set(meta.get("column_files", {}).values())
    names |= {KEY_FILE, meta.get("deleted_file", DELETED_FILE), BLOOM_FILE}
    return names | {d["file"] for d in (*meta["undo"], *meta["redo"])}
