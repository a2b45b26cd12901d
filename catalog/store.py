"""The durable catalog document: versioned JSON in the data directory, replaced atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeAlias

from storage.errors import DataCorrupted
from storage.fs import atomic_write, checksummed_json, read_checksummed_json

FORMAT_VERSION = 1
FILE_NAME = "catalog.json"

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object read back from disk: untyped until the ``from_json`` that reads it checks it."""


class CatalogStore:
    """Reads and atomically rewrites ``catalog.json``; a missing file is an empty catalog."""

    def __init__(self, data_dir: Path, *, fsync: bool = True) -> None:
        self._path = data_dir / FILE_NAME
        self._fsync = fsync

    def load(self) -> JsonObject:
        try:
            raw = self._path.read_bytes()
        except FileNotFoundError:
            return {
                "version": FORMAT_VERSION,
                "next_table_id": 1,
                "next_tablet_id": 1,
                "tables": [],
            }
        doc: JsonObject = read_checksummed_json(raw, self._path)
        if doc.get("version") != FORMAT_VERSION:
            raise DataCorrupted(f"catalog format version {doc.get('version')} is not supported")
        return doc

    def save(self, doc: dict[str, object]) -> None:
        data = checksummed_json(doc, indent=1, sort_keys=True)
        atomic_write(self._path, data, fsync=self._fsync)
