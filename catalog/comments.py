"""Comments: COMMENT ON text kept durably in ``comments.json``, keyed by table OID and attnum.

pg_description rows are built from these; ``version`` grows with every
change so sessions know to refresh their emulated catalogs.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from storage.fs import atomic_write

FILE_NAME = "comments.json"


class Comments:
    """Comments on tables (attnum 0) and columns (attnum > 0), by table OID."""

    def __init__(self, data_dir: Path | None, *, fsync: bool = True) -> None:
        self._path = data_dir / FILE_NAME if data_dir is not None else None
        self._fsync = fsync
        self._lock = threading.Lock()
        self._comments: dict[tuple[int, int], str] = {}
        if self._path is not None and self._path.exists():
            doc = json.loads(self._path.read_text(encoding="utf-8"))
            self._comments = {(int(o), int(n)): str(t) for o, n, t in doc["comments"]}
        self.version = 0

    def all(self) -> dict[tuple[int, int], str]:
        with self._lock:
            return dict(self._comments)

    def set(self, table_oid: int, attnum: int, text: str | None) -> None:
        with self._lock:
            if text is None or text == "":
                self._comments.pop((table_oid, attnum), None)
            else:
                self._comments[(table_oid, attnum)] = text
            if self._path is not None:
                rows = [[o, n, t] for (o, n), t in sorted(self._comments.items())]
                data = json.dumps({"comments": rows}).encode()
                atomic_write(self._path, data, fsync=self._fsync)
            self.version += 1
