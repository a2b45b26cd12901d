"""LoggedDocument: a JSON file whose committed contents are durable in the WAL before the file.

``roles.json`` and ``privileges.json`` change at COMMIT with the transaction's
rows and DDL.  The new document rides in the transaction's WAL commit record
(a DOCUMENTS marker), numbered by ``sequence``; the file is written once the
record is durable.  A crash in between leaves a file older than the WAL's
copy, which ``newer_than_file`` finds on open (the store then takes the
WAL's copy and writes it).  A write the disk refuses keeps the document
*pending*: ``keeps_wal`` writes it again and, while it cannot, keeps the WAL
segments that hold it, so a checkpoint folds it into the file before the WAL
may forget it.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

from storage.errors import DbError
from storage.fs import write_document

log = logging.getLogger(__name__)


def sequence_of(doc: dict[str, Any]) -> int:
    """How many logged changes ``doc`` includes (0 for a file written before they were)."""
    return int(doc.get("sequence", 0))


def encode(doc: dict[str, Any]) -> bytes:
    """The bytes of ``doc`` a DOCUMENTS marker carries."""
    return json.dumps(doc, sort_keys=True).encode()


def newer_than_file(
    name: str, logged: bytes | None, file_doc: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The WAL's copy when it is newer than the file's (a crash between the two), else None."""
    if logged is None:
        return None
    doc: dict[str, Any] = json.loads(logged)
    if file_doc is not None and sequence_of(file_doc) >= sequence_of(doc):
        return None
    log.warning("%s predates the last committed change; taking the WAL's copy", name)
    return doc


class LoggedDocument:
    """The file of one store, written after the WAL holds its contents (also ``catalog.json``:
    ``CatalogStore`` writes through one)."""

    def __init__(self, path: Path, *, fsync: bool, sort_keys: bool = False) -> None:
        self.path = path
        self._fsync = fsync
        self._sort_keys = sort_keys
        self._lock = threading.Lock()
        self._pending: dict[str, Any] | None = None

    def write(self, doc: dict[str, Any]) -> None:
        """Write ``doc`` now (a change the WAL does not hold); 53100 or 58030 if refused."""
        with self._lock:
            write_document(self.path, doc, sort_keys=self._sort_keys, fsync=self._fsync)
            self._pending = None

    def write_after_wal(self, doc: dict[str, Any]) -> None:
        """Write ``doc``, already durable in the WAL; if the disk refuses, keep it pending."""
        with self._lock:
            self._pending = doc
        self.keeps_wal()

    def keeps_wal(self) -> bool:
        """Write a pending document; True while one still is (the WAL must keep its record)."""
        with self._lock:
            if self._pending is None:
                return False
            try:
                write_document(
                    self.path, self._pending, sort_keys=self._sort_keys, fsync=self._fsync
                )
            except DbError as exc:
                log.warning("%s; the WAL keeps %s until it can be written", exc, self.path.name)
                return True
            self._pending = None
            return False
