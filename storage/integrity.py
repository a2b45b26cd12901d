"""The offline integrity check of a data directory (Kudu's ``ksck``): every checksum, read-only.

``check_data_dir`` reads every file a stopped server would read: each WAL
segment record by record, the catalog documents (catalog, roles,
privileges, sequences, comments), prepared-transaction files, and per tablet its
metadata and every file its live rowsets name (column and key-index cfiles
block by block, the bloom filter, UNDO and REDO delta files).  It verifies
the checksums and a few structural invariants (each column file holds the
rowset's row count, the key index is strictly ascending and within the
rowset's recorded bounds) and never changes a byte: unlike opening the
database, it truncates no torn WAL tail and removes no unnamed file.  A
problem names the file and the tablet it belongs to, and the walk goes on.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storage.cfile.reader import CFileReader
from storage.errors import DataCorrupted
from storage.fs import DataDirLayout, read_checksummed_json
from storage.prepared import PREPARED_DIR, prepared_files, verify_file
from storage.schema import Schema
from storage.tablet.bloom import BloomFilter
from storage.tablet.delta_file import DeltaFile
from storage.tablet.rowset_files import BLOOM_FILE, KEY_FILE, known_files, rowset_dir_name
from storage.wal import segment_is_sound

_CATALOG_DOCUMENTS = (
    "catalog.json",
    "roles.json",
    "privileges.json",
    "sequences.json",
    "comments.json",
)


@dataclass(frozen=True, slots=True)
class Problem:
    """One damaged or inconsistent file."""

    path: Path
    tablet: str | None
    message: str

    def __str__(self) -> str:
        where = f"tablet {self.tablet}: " if self.tablet is not None else ""
        return f"{where}{self.path}: {self.message}"


@dataclass(slots=True)
class Report:
    """What the check read, by file kind, and every problem it found."""

    checked: Counter[str] = field(default_factory=Counter)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def is_clean(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(self.checked.items()))
        out = [f"checked {kinds or 'nothing'}"]
        out += [f"note: {note}" for note in self.notes]
        out += [f"CORRUPT {problem}" for problem in self.problems]
        out.append("OK" if self.is_clean else f"{len(self.problems)} problem(s) found")
        return out


def check_data_dir(data_dir: Path) -> Report:
    """Verify every checksum and structural invariant under ``data_dir``; change nothing."""
    report = Report()
    layout = DataDirLayout(Path(data_dir))
    _check_wal(layout.wal_dir, report)
    for name in _CATALOG_DOCUMENTS:
        path = Path(data_dir) / name
        if path.exists():
            _guard(report, path, None, "catalog document", lambda p=path: _read_json(p))
    for path in prepared_files(Path(data_dir) / PREPARED_DIR):
        _guard(report, path, None, "prepared transaction", lambda p=path: verify_file(p))
    tablets = layout.tablets_dir
    if tablets.is_dir():
        for tablet_dir in sorted(tablets.iterdir(), key=lambda p: (len(p.name), p.name)):
            if tablet_dir.is_dir():
                _check_tablet(tablet_dir, report)
    return report


def _check_wal(wal_dir: Path, report: Report) -> None:
    if not wal_dir.is_dir():
        return
    segments = sorted(p for p in wal_dir.iterdir() if p.name.startswith("wal-"))
    for idx, path in enumerate(segments):
        is_last = idx == len(segments) - 1

        def verify(path: Path = path, is_last: bool = is_last) -> None:
            torn = segment_is_sound(path, is_last=is_last)
            if torn:
                report.notes.append(
                    f"{path}: a torn tail of {torn} bytes (a write cut short by a crash, never "
                    "acknowledged) will be dropped at the next start"
                )

        _guard(report, path, None, "WAL segment", verify)


def _check_tablet(tablet_dir: Path, report: Report) -> None:
    tablet = tablet_dir.name
    metadata = tablet_dir / "metadata.json"
    doc = _guard(report, metadata, tablet, "tablet metadata", lambda: _read_json(metadata))
    if doc is None:
        return
    try:
        schema = Schema.from_json(doc["schema"])
        rowsets: list[dict[str, Any]] = list(doc.get("rowsets", []))
    except (KeyError, TypeError, ValueError) as exc:
        report.problems.append(Problem(metadata, tablet, f"unreadable schema or rowsets: {exc}"))
        return
    for meta in rowsets:
        _check_rowset(tablet_dir / rowset_dir_name(meta["id"]), tablet, schema, meta, report)


def _check_rowset(
    directory: Path, tablet: str, schema: Schema, meta: dict[str, Any], report: Report
) -> None:
    rows = int(meta["rows"])
    for name in sorted(known_files(meta)):
        path = directory / name
        if name == BLOOM_FILE:
            _guard(report, path, tablet, "bloom filter", lambda p=path: _check_bloom(p))
        elif name.endswith(".delta"):
            _guard(report, path, tablet, "delta file", lambda p=path: _check_delta(p, schema))
        elif name == KEY_FILE:
            _guard(report, path, tablet, "key index", lambda p=path: _check_keys(p, rows, meta))
        else:
            _guard(report, path, tablet, "column file", lambda p=path: _check_column(p, rows))


def _check_column(path: Path, rows: int) -> None:
    reader = CFileReader(path)
    try:
        found = sum(reader.read_block(i).rows for i in range(len(reader.blocks)))
    finally:
        reader.close()
    if found != rows:
        raise DataCorrupted(f"holds {found} values for a rowset of {rows} rows")


def _check_keys(path: Path, rows: int, meta: dict[str, Any]) -> None:
    reader = CFileReader(path)
    try:
        keys: list[bytes] = []
        for i in range(len(reader.blocks)):
            keys += reader.read_block(i).to_arrow().to_pylist()
    finally:
        reader.close()
    if len(keys) != rows:
        raise DataCorrupted(f"holds {len(keys)} keys for a rowset of {rows} rows")
    if any(a >= b for a, b in zip(keys, keys[1:], strict=False)):
        raise DataCorrupted("keys are not strictly ascending")
    if keys and (
        keys[0] != bytes.fromhex(meta["min_key"]) or keys[-1] != bytes.fromhex(meta["max_key"])
    ):
        raise DataCorrupted("first or last key disagrees with the rowset's recorded bounds")


def _check_bloom(path: Path) -> None:
    BloomFilter.from_bytes(path.read_bytes(), path)


def _check_delta(path: Path, schema: Schema) -> None:
    DeltaFile(path, schema).all_records()


def _read_json(path: Path) -> Any:
    return read_checksummed_json(path.read_bytes(), path)


def _guard(report: Report, path: Path, tablet: str | None, kind: str, check: Any) -> Any:
    """Run one file's check, counting it and recording what is wrong with it."""
    report.checked[kind] += 1
    try:
        return check()
    except DataCorrupted as exc:
        report.problems.append(Problem(path, tablet, exc.message))
    except OSError as exc:
        report.problems.append(Problem(path, tablet, f"cannot be read: {exc.strerror or exc}"))
    except (KeyError, TypeError, ValueError) as exc:
        report.problems.append(Problem(path, tablet, f"is malformed: {exc!r}"))
    return None
