"""The durable catalog document: versioned JSON in the data directory, replaced atomically.

A commit's catalog document is durable once its WAL record is (``Catalog.commit``);
the file follows.  When writing the file fails (a full disk), the document is
kept as *pending* and written again before the WAL may lose the record that
holds it (``StorageEngine`` asks ``keeps_wal`` before removing segments).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeAlias

from catalog.logged_document import LoggedDocument
from storage.errors import DataCorrupted
from storage.fs import read_document

FORMAT_VERSION = 1
FILE_NAME = "catalog.json"

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object read back from disk: untyped until the ``from_json`` that reads it checks it."""


class CatalogStore:
    """Reads and atomically rewrites ``catalog.json``; a missing file is an empty catalog."""

    def __init__(self, data_dir: Path, *, fsync: bool = True) -> None:
        self._path = data_dir / FILE_NAME
        self._file = LoggedDocument(self._path, fsync=fsync, sort_keys=True)

    @property
    def path(self) -> Path:
        return self._path

    def load(self) -> JsonObject:
        doc = read_document(self._path)
        if doc is None:
            return {
                "version": FORMAT_VERSION,
                "next_table_id": 1,
                "next_tablet_id": 1,
                "tables": [],
            }
        if doc.get("version") != FORMAT_VERSION:
            raise DataCorrupted(f"catalog format version {doc.get('version')} is not supported")
        return doc

    def save(self, doc: dict[str, object]) -> None:
        """Write ``doc``; DiskFull (53100) or IoError (58030) leaves the file as it was."""
        self._file.write(doc)

    def save_after_wal(self, doc: dict[str, object]) -> None:
        """Write ``doc``, already durable in the WAL; if that fails, keep it pending."""
        self._file.write_after_wal(doc)

    def keeps_wal(self) -> bool:
        """Write a pending document; True while one still is (the WAL must keep its record)."""
        return self._file.keeps_wal()
