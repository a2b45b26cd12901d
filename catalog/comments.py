"""Comments: COMMENT ON text kept durably in ``comments.json``, keyed by table OID and attnum.

pg_description rows are built from these; ``version`` grows with every
change so sessions know to refresh their emulated catalogs.  A transaction's
comments change at its COMMIT: the new document rides in the commit's WAL
record (``Catalog.commit``, ``logged_document``), so a crash keeps them with
the rest of the transaction or drops them with it.  The file carries a
CRC32C; a change the disk refuses (53100, 58030) is not kept.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from catalog.logged_document import LoggedDocument, newer_than_file, sequence_of
from storage.fs import read_document

FILE_NAME = "comments.json"

Key = tuple[int, int]


class Comments:
    """Comments on tables (attnum 0) and columns (attnum > 0), by table OID."""

    def __init__(
        self, data_dir: Path | None, *, fsync: bool = True, logged: bytes | None = None
    ) -> None:
        """``logged`` is the last copy of the file the WAL's commit records carried: taken
        instead of the file when newer (a crash came between the two)."""
        path = data_dir / FILE_NAME if data_dir is not None else None
        self._file = LoggedDocument(path, fsync=fsync) if path is not None else None
        self.lock = threading.Lock()
        """Held by every change; a COMMIT holds it from ``document_with`` to ``install``."""
        self._comments: dict[Key, str] = {}
        """Replaced, never mutated, so readers take no lock."""
        self.sequence = 0
        """How many changes the file has had: orders it and the WAL's copies."""
        saved = None if path is None else read_document(path)
        if saved is not None:
            self._apply(saved)
        newer = newer_than_file(FILE_NAME, logged, saved)
        if newer is not None and self._file is not None:
            self._apply(newer)
            self._file.write_after_wal(newer)
        self.version = 0

    def all(self) -> dict[Key, str]:
        return dict(self._comments)

    def keeps_wal(self) -> bool:
        """Whether a committed document is still to be written (the WAL must keep it)."""
        return self._file is not None and self._file.keeps_wal()

    def set(self, table_oid: int, attnum: int, text: str | None) -> None:
        """Set one comment now, outside any transaction."""
        with self.lock:
            doc = self.document_with({(table_oid, attnum): text})
            if self._file is not None:
                self._file.write(doc)
            self._apply(doc)
            self.version += 1

    def document_with(self, changes: dict[Key, str | None]) -> dict[str, Any]:
        """The document the file holds once ``changes`` are made (None or "" removes); the
        caller holds ``lock`` until it installs it."""
        comments = dict(self._comments)
        for key, text in changes.items():
            if text:
                comments[key] = text
            else:
                comments.pop(key, None)
        rows = [[o, n, t] for (o, n), t in sorted(comments.items())]
        return {"comments": rows, "sequence": self.sequence + 1}

    def install(self, doc: dict[str, Any]) -> None:
        """Take ``doc``, already durable in the WAL, and write it to the file."""
        self._apply(doc)
        self.version += 1
        if self._file is not None:
            self._file.write_after_wal(doc)

    def _apply(self, doc: dict[str, Any]) -> None:
        self._comments = {(int(o), int(n)): str(t) for o, n, t in doc["comments"]}
        self.sequence = sequence_of(doc)
