"""Tablet: one partition of a table; turns batches of writes into MemRowSet entries and scans it.

A tablet owns its schema and its rowsets.  For now that is one MemRowSet;
DiskRowSets (flushed MemRowSets with delta stores) come later, and with them
a rowset list that scans capture at start.  Its metadata lives in
``tablets/<id>/metadata.json``, replaced with ``atomic_write``; its rows live
in the database's WAL until flushes exist.

Writers are serialised by the tablet lock.  A write first probes every key
(a conflict check), then applies every row, both under one hold of the lock,
so a batch is applied whole or not at all.  When a key carries another live
transaction's provisional write, the tablet releases the lock, calls the
caller's ``wait_for(holder)``, and starts the batch over against the newest
versions.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import pyarrow as pa

from storage.errors import (
    DataCorrupted,
    InternalError,
    NotNullViolation,
    NumericValueOutOfRange,
    UniqueViolation,
)
from storage.fs import DataDirLayout, atomic_write, make_dir
from storage.key_encoding import encode_keys
from storage.mvcc import TxnState
from storage.options import StorageOptions
from storage.predicate import ScanSpec
from storage.schema import ColumnSchema, Schema
from storage.tablet.memrowset import MemRowSet, to_storage_values
from storage.timestamp import Timestamp
from storage.types import TabletId

METADATA_FORMAT_VERSION = 1

WaitFor = Callable[[TxnState], None]


@dataclass(frozen=True, slots=True)
class WriteResult:
    """Rows a write changed, and the encoded keys it left provisional entries at."""

    count: int
    keys: list[bytes]


class Tablet:
    """One tablet: its schema, its MemRowSet, and the lock that serialises its writers."""

    def __init__(self, tablet_id: TabletId, schema: Schema, options: StorageOptions) -> None:
        self.tablet_id = tablet_id
        self.schema = schema
        self._options = options
        self._lock = threading.Lock()
        self._memrowset = MemRowSet(schema, self._lock)
        self._key_types = [c.type for c in schema.key_columns]

    @classmethod
    def create(
        cls, layout: DataDirLayout, tablet_id: TabletId, schema: Schema, options: StorageOptions
    ) -> Tablet:
        """Create the tablet's directory and metadata, durably."""
        make_dir(layout.tablet_dir(tablet_id), fsync=options.fsync)
        doc = {
            "format_version": METADATA_FORMAT_VERSION,
            "tablet_id": tablet_id,
            "schema": schema.to_json(),
        }
        data = json.dumps(doc, indent=2).encode()
        atomic_write(layout.tablet_metadata_path(tablet_id), data, fsync=options.fsync)
        return cls(tablet_id, schema, options)

    @classmethod
    def load(cls, layout: DataDirLayout, tablet_id: TabletId, options: StorageOptions) -> Tablet:
        """Open a tablet from its metadata file."""
        path = layout.tablet_metadata_path(tablet_id)
        try:
            doc = json.loads(path.read_bytes())
            assert doc["format_version"] == METADATA_FORMAT_VERSION, "known metadata version"
            schema = Schema.from_json(doc["schema"])
        except (ValueError, KeyError, TypeError, AssertionError) as exc:
            raise DataCorrupted(f"tablet metadata {path} is unreadable: {exc}") from exc
        return cls(tablet_id, schema, options)

    @property
    def memrowset(self) -> MemRowSet:
        return self._memrowset

    def insert(
        self,
        txn: TxnState,
        batch: pa.RecordBatch,
        wait_for: WaitFor,
        constraint_name: str | None = None,
    ) -> WriteResult:
        """Insert every row of ``batch`` (all columns), or none if any key is live (23505)."""
        columns = self._columns_of(batch, self.schema.columns, require_all=True)
        keys = self._encode_keys(columns)
        if len(set(keys)) != len(keys):
            raise self._unique_violation(columns, _first_duplicate(keys), constraint_name)
        values = [to_storage_values(columns[c.id], c.type) for c in self.schema.columns]
        # Per-row Python: MemRowSet rows are stored row-shaped (an edge, like Kudu's row inserts).
        rows = list(zip(*values))
        mrs = self._memrowset
        while True:
            with self._lock:
                blocker = None
                for row_idx, key in enumerate(keys):
                    probe = mrs.probe(key, txn)
                    if probe.blocker is not None:
                        blocker = probe.blocker
                        break
                    if probe.is_live:
                        raise self._unique_violation(columns, row_idx, constraint_name)
                if blocker is None:
                    for key, row in zip(keys, rows):
                        mrs.insert(key, row, txn)
                    return WriteResult(len(keys), keys)
            wait_for(blocker)

    def update(self, txn: TxnState, batch: pa.RecordBatch, wait_for: WaitFor) -> WriteResult:
        """Set the non-key columns of ``batch`` on the rows its keys name; skip absent rows."""
        key_ids = set(self.schema.key_column_ids)
        named = [self._column_schema(name) for name in batch.schema.names]
        changed = [c for c in named if c.id not in key_ids]
        columns = self._columns_of(batch, [*self.schema.key_columns, *changed])
        keys = self._encode_keys(columns)
        indexes = [self.schema.index_of(c.id) for c in changed]
        values = [to_storage_values(columns[c.id], c.type) for c in changed]
        # Per-row Python: each row becomes one UPDATE mutation in its chain (an edge).
        changes = [tuple(zip(indexes, row)) for row in zip(*values)] if changed else None
        return self._mutate(txn, keys, wait_for, changes)

    def delete(self, txn: TxnState, batch: pa.RecordBatch, wait_for: WaitFor) -> WriteResult:
        """Delete the rows whose keys ``batch`` holds (other columns are ignored)."""
        columns = self._columns_of(batch, self.schema.key_columns)
        return self._mutate(txn, self._encode_keys(columns), wait_for, None, delete=True)

    def _mutate(
        self,
        txn: TxnState,
        keys: list[bytes],
        wait_for: WaitFor,
        changes: list[tuple[object, ...]] | None,
        *,
        delete: bool = False,
    ) -> WriteResult:
        mrs = self._memrowset
        while True:
            with self._lock:
                blocker = None
                for key in keys:
                    blocker = mrs.probe(key, txn).blocker
                    if blocker is not None:
                        break
                if blocker is None:
                    written = []
                    for row_idx, key in enumerate(keys):
                        if delete:
                            done = mrs.delete(key, txn)
                        else:
                            done = mrs.update(key, changes[row_idx] if changes else (), txn)
                        if done:
                            written.append(key)
                    return WriteResult(len(written), written)
            wait_for(blocker)

    def remove_provisional(self, txn: TxnState, keys: Iterable[bytes]) -> None:
        """Undo ``txn``'s uncommitted writes at ``keys`` (rollback)."""
        with self._lock:
            for key in keys:
                self._memrowset.remove_provisional(key, txn)

    def scan(
        self, spec: ScanSpec, snapshot: Timestamp, reader: TxnState | None
    ) -> Iterator[pa.RecordBatch]:
        """Yield the rows visible at ``snapshot`` to ``reader`` matching ``spec``, in key order."""
        for column_id in (*spec.projection, *(p.column_id for p in spec.predicates)):
            self._column_schema(column_id)
        return self._memrowset.scan(spec, snapshot, reader, self._options.scan_batch_rows)

    def _column_schema(self, column_id: int | str) -> ColumnSchema:
        """The column a batch field or ScanSpec names (InternalError if the tablet has none)."""
        try:
            return self.schema.column(int(column_id))
        except (KeyError, ValueError):
            raise InternalError(f"tablet {self.tablet_id} has no column {column_id!r}") from None

    def _columns_of(
        self,
        batch: pa.RecordBatch,
        wanted: tuple[ColumnSchema, ...] | list[ColumnSchema],
        *,
        require_all: bool = False,
    ) -> dict[int, pa.Array]:
        """Pick ``wanted`` columns out of ``batch``, cast to their types and checked for NULLs."""
        names = batch.schema.names
        if require_all:
            expected = {str(c.id) for c in self.schema.columns}
            if set(names) != expected or len(names) != len(expected):
                raise InternalError(
                    f"an insert into tablet {self.tablet_id} needs exactly the columns "
                    f"{sorted(expected)}, got {names}"
                )
        out: dict[int, pa.Array] = {}
        for column in wanted:
            name = str(column.id)
            if name not in names:
                raise InternalError(f"the batch for tablet {self.tablet_id} lacks column {name}")
            array = batch.column(names.index(name))
            if array.type != column.type.arrow_type:
                try:
                    array = array.cast(column.type.arrow_type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise NumericValueOutOfRange(
                        f'value out of range for column "{column.name}"', detail=str(exc)
                    ) from exc
            if array.null_count and not column.nullable:
                raise NotNullViolation(
                    f'null value in column "{column.name}" violates not-null constraint'
                )
            out[column.id] = array
        return out

    def _encode_keys(self, columns: dict[int, pa.Array]) -> list[bytes]:
        return encode_keys([columns[c.id] for c in self.schema.key_columns], self._key_types)

    def _unique_violation(
        self, columns: dict[int, pa.Array], row_idx: int, constraint_name: str | None
    ) -> UniqueViolation:
        key_columns = self.schema.key_columns
        names = ", ".join(c.name for c in key_columns)
        values = ", ".join(_pg_text(columns[c.id][row_idx].as_py()) for c in key_columns)
        name = constraint_name or "primary key"
        return UniqueViolation(
            f'duplicate key value violates unique constraint "{name}"',
            detail=f"Key ({names})=({values}) already exists.",
        )


def _first_duplicate(keys: list[bytes]) -> int:
    seen: set[bytes] = set()
    for row_idx, key in enumerate(keys):
        if key in seen:
            return row_idx
        seen.add(key)
    raise AssertionError("called only when keys repeat")


def _pg_text(value: object) -> str:
    """Render a key value roughly as PostgreSQL's output function would, for error details."""
    if isinstance(value, bytes):
        return "\\x" + value.hex()
    if isinstance(value, dt.datetime):
        text = value.isoformat(sep=" ")
        return text.removesuffix(":00") if value.tzinfo is not None else text
    return str(value)


def never_wait(holder: TxnState) -> None:
    """A ``wait_for`` for WAL replay, where every write is already committed."""
    raise DataCorrupted(f"replayed write found an uncommitted row version of {holder}")
