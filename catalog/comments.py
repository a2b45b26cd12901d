"""Comments: COMMENT ON text kept durably in ``comments.json``, keyed by table OID and attnum.

pg_description rows are built from these; ``version`` grows with every
change so sessions know to refresh their emulated catalogs.  The file carries
a CRC32C; a change the disk refuses (53100, 58030) is not kept.
"""

from __future__ import annotations

import threading
from pathlib import Path

from storage.errors import DbError
from storage.fs import read_document, write_document

FILE_NAME = "comments.json"


class Comments:
    """Comments on tables (attnum 0) and columns (attnum > 0), by table OID."""

    def __init__(self, data_dir: Path | None, *, fsync: bool = True) -> None:
        self._path = data_dir / FILE_NAME if data_dir is not None else None
        self._fsync = fsync
        self._lock = threading.Lock()
        self._comments: dict[tuple[int, int], str] = {}
        doc = None if self._path is None else read_document(self._path)
        if doc is not None:
            self._comments = {(int(o), int(n)): str(t) for o, n, t in doc["comments"]}
        self.version = 0

    def all(self) -> dict[tuple[int, int], str]:
        with self._lock:
            return dict(self._comments)

    def set(self, table_oid: int, attnum: int, text: str | None) -> None:
        with self._lock:
            before = dict(self._comments)
            if text is None or text == "":
                self._comments.pop((table_oid, attnum), None)
            else:
                self._comments[(table_oid, attnum)] = text
            if self._path is not None:
                rows = [[o, n, t] for (o, n), t in sorted(self._comments.items())]
                try:
                    write_document(self._path, {"comments": rows}, indent=None, fsync=self._fsync)
                except DbError:
                    self._comments = before
                    raise
            self.version += 1
