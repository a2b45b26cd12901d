"""The data-directory layout, and writing files so that a crash never leaves half of one.

::

    <data_dir>/
      wal/wal-<seq:016d>.log         write-ahead log segments (storage/wal.py)
      tablets/<tablet_id>/
        metadata.json                the tablet's schema (storage/tablet/tablet.py)
      prepared/<gid hex>.txn         prepared transactions (storage/prepared.py)
      catalog.json, roles.json, privileges.json, sequences.json, comments.json
                                     the catalog's documents (catalog/)

``atomic_write`` follows the usual recipe: write a temporary file beside the
target, fsync it, rename it over the target, fsync the directory.  Readers see
the old file or the new one, never a mix, and once it returns the new one
survives a crash.  JSON documents (tablet metadata, the catalog) carry a CRC32C
of their content (``checksummed_json``), as every block and WAL record does, so
a flipped byte that still parses is caught too.  ``write_document`` and
``read_document`` are that pair for the catalog's documents (catalog, roles,
privileges, sequences, comments), failing with 53100 on a full disk (58030
otherwise) rather than an OSError.  A failed ``atomic_write`` leaves the old
file and no temporary one.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import crc32c

from storage.data_type import TabletId
from storage.errors import DataCorrupted, io_error

CHECKSUM_KEY = "crc32c"

WAL_DIR = "wal"
TABLETS_DIR = "tablets"
TABLET_METADATA_FILE = "metadata.json"
_TMP_SUFFIX = ".tmp"


@dataclass(frozen=True, slots=True)
class DataDirLayout:
    """Where each file of one database lives under its data directory."""

    root: Path

    @property
    def wal_dir(self) -> Path:
        return self.root / WAL_DIR

    @property
    def tablets_dir(self) -> Path:
        return self.root / TABLETS_DIR

    def tablet_dir(self, tablet_id: TabletId) -> Path:
        return self.tablets_dir / str(tablet_id)

    def tablet_metadata_path(self, tablet_id: TabletId) -> Path:
        return self.tablet_dir(tablet_id) / TABLET_METADATA_FILE

    def create(self, *, fsync: bool = True) -> None:
        """Create the directories that are missing, durably."""
        for path in (self.root, self.wal_dir, self.tablets_dir):
            make_dir(path, fsync=fsync)


def fsync_dir(path: Path) -> None:
    """Make the entries of directory ``path`` (creations, renames, removals) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dir(path: Path, *, fsync: bool = True) -> None:
    """Create ``path`` (and parents) if missing; fsync its parent when it was created."""
    if path.is_dir():
        return
    path.mkdir(parents=True, exist_ok=True)
    if fsync:
        fsync_dir(path.parent)


def write_file(path: Path, data: bytes | bytearray, *, fsync: bool = True) -> None:
    """Write ``data`` as the whole of ``path`` and, with ``fsync``, sync the file's contents."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, fsync: bool = True) -> None:
    """Replace ``path`` with ``data`` so a crash leaves either the old or the new file; a write
    that fails (a full disk) leaves the old file and no temporary one."""
    path = Path(path)
    tmp = path.with_name(path.name + _TMP_SUFFIX)
    try:
        write_file(tmp, data, fsync=fsync)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
    if fsync:
        fsync_dir(path.parent)


def remove_dir(path: Path, *, fsync: bool = True) -> None:
    """Remove directory ``path`` and everything under it, durably."""
    if not path.exists():
        return
    shutil.rmtree(path)
    if fsync:
        fsync_dir(path.parent)


def _content_crc(doc: Mapping[str, object]) -> int:
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return int(crc32c.crc32c(canonical.encode()))


def checksummed_json(
    doc: Mapping[str, object], *, indent: int | None = 1, sort_keys: bool = False
) -> bytes:
    """``doc`` as JSON with a ``crc32c`` member over the rest of it."""
    body = {k: v for k, v in doc.items() if k != CHECKSUM_KEY}
    return json.dumps(
        {**body, CHECKSUM_KEY: _content_crc(body)}, indent=indent, sort_keys=sort_keys
    ).encode()


def read_checksummed_json(raw: bytes, path: Path) -> dict[str, Any]:
    """Parse a document ``checksummed_json`` wrote; DataCorrupted (XX001) naming ``path`` when
    it is not JSON or its checksum does not match.  A document without one (written before
    checksums) is taken as it is."""
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise DataCorrupted(f'file "{path}" is not valid JSON: {exc}') from exc
    if not isinstance(doc, dict):
        raise DataCorrupted(f'file "{path}" does not hold a JSON object')
    stored = doc.pop(CHECKSUM_KEY, None)
    if stored is not None and stored != _content_crc(doc):
        raise DataCorrupted(f'checksum mismatch in file "{path}"')
    return doc


def write_document(
    path: Path,
    doc: Mapping[str, object],
    *,
    fsync: bool = True,
    indent: int | None = 1,
    sort_keys: bool = False,
) -> None:
    """Replace ``path`` with ``checksummed_json(doc)`` atomically; on failure the old file stays,
    the temporary one is removed and DiskFull (53100) or IoError (58030) is raised."""
    data = checksummed_json(doc, indent=indent, sort_keys=sort_keys)
    try:
        atomic_write(path, data, fsync=fsync)
    except OSError as exc:
        raise io_error(f'could not write file "{path}"', exc) from exc


def read_document(path: Path) -> dict[str, Any] | None:
    """The document ``write_document`` wrote to ``path`` (None if there is none); DataCorrupted
    (XX001) naming ``path`` when it is damaged."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    return read_checksummed_json(raw, path)
