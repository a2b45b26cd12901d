"""COMMENT ON TABLE/COLUMN: comments kept durably in ``comments.json``, keyed by OID and attnum.

pg_description rows are built from these; ``version`` grows with every
change so sessions know to refresh their emulated catalogs.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from sqlglot import exp

from catalog.catalog import Catalog
from sql.common.names import identifier_name, table_name
from storage.errors import FeatureNotSupported, UndefinedColumn
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

    def apply(self, ast: exp.Comment, catalog: Catalog) -> None:
        """Run ``COMMENT ON TABLE t IS '...'`` or ``COMMENT ON COLUMN t.c IS '...'``."""
        kind = (ast.args.get("kind") or "").upper()
        literal = ast.expression
        text = None if isinstance(literal, exp.Null) else literal.name
        target = ast.this
        if kind == "TABLE" and isinstance(target, exp.Table):
            table = catalog.get_table(table_name(target))
            self.set(table.oid, 0, text)
            return
        if kind == "COLUMN" and isinstance(target, exp.Column) and target.table:
            parts = [p for p in target.parts]
            schema = exp.to_identifier(parts[-3].name) if len(parts) >= 3 else None
            table_node = exp.Table(this=parts[-2].copy(), db=schema)
            table = catalog.get_table(table_name(table_node))
            name = identifier_name(target)
            column = table.schema.find(name)
            if column is None:
                raise UndefinedColumn(f'column "{name}" of relation "{table.name}" does not exist')
            self.set(table.oid, table.attnum(column.id), text)
            return
        raise FeatureNotSupported(f"COMMENT ON {kind} is not supported; only TABLE and COLUMN")
