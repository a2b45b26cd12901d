"""MemRowSet: a tablet's in-memory rows in key order, each with its insert and a chain of mutations.

Kudu's "MVCC Mutations in MemRowSet" (kudu-tablet-design.txt): a row is
stored once, tagged with the transaction that inserted it, followed by the
list of later mutations, each tagged with its transaction:

    key -> MemRowSetRow(insert txn, values)
             -> UPDATE(txn, {column: value})
             -> DELETE(txn)
             -> REINSERT(txn, values)        (only after a DELETE)

Tags are ``TxnState`` objects, not timestamps: a write is applied at once,
provisionally, and becomes visible to everyone at the instant its
transaction's state is stamped with the commit timestamp; a rolled-back
transaction's entries are removed.  A reader at snapshot S sees an entry iff
its transaction committed at <= S or is the reader itself.

Writers to one key are serialised (a writer waits until the transaction with
a provisional entry on the key finishes; see storage/transaction.py), so a
chain is always: committed entries in commit-timestamp order, then at most
one transaction's provisional entries.  That lets a reader stop at the first
invisible entry, and lets a transaction that wrote a row read it "through"
newer committed entries it wrote on top of (READ COMMITTED writes apply to
the newest version).

Not thread-safe by itself: the owning Tablet's lock guards every call, and
``scan`` takes that lock once per batch, so writers interleave with long scans.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter

import numpy as np
import pyarrow as pa
from sortedcontainers import SortedDict

from storage.mvcc import TxnState
from storage.predicate import ScanSpec
from storage.row_change import (
    Mutation,
    MutationKind,
    Row,
    apply_mutation,
    from_storage_values,
)
from storage.schema import Schema
from storage.tablet.insert_segment import (
    InsertSegment,
    locate_in_segments,
    predicate_mask,
    project_batch,
    scan_segments,
)
from storage.tablet.schema_change import RowMapper, conform_batch
from storage.timestamp import Timestamp

_NO_MUTATIONS: tuple[Mutation, ...] = ()

Capture = tuple[list[tuple[InsertSegment, np.ndarray]], int]
"""What a scan reads a MemRowSet's segments by: each with a copy of its moved marks, and
the length of the moved log then (``MemRowSet.capture_segments``)."""


class MemRowSetRow:
    """A row as inserted, plus its mutations in the order they were applied.

    A hot row (a counter, a balance) collects thousands of mutations before a flush;
    walking them all on every read and write would make each one cost O(chain).  So
    the row remembers its version after the longest committed prefix of its chain
    (``committed_prefix``): committed entries are never removed or reordered, so that
    version only moves forward, and a reader whose snapshot is past it starts there.
    """

    __slots__ = ("txn", "values", "mutations", "_prefix")

    def __init__(self, txn: TxnState, values: Row) -> None:
        self.txn = txn
        self.values = values
        # A shared empty tuple until the first mutation: a bulk load's million rows would
        # otherwise carry a million empty lists for the garbage collector to walk.
        self.mutations: Sequence[Mutation] = _NO_MUTATIONS
        self._prefix: tuple[Row | None, int, Timestamp] | None = None

    def add_mutation(self, mutation: Mutation) -> None:
        mutations = self.mutations
        if isinstance(mutations, list):
            mutations.append(mutation)
        else:
            self.mutations = [mutation]

    def pop_mutation(self) -> None:
        mutations = self.mutations
        assert isinstance(mutations, list), "only a row with mutations has one to pop"
        mutations.pop()

    @property
    def last_writer(self) -> TxnState:
        return self.mutations[-1].txn if self.mutations else self.txn

    def committed_prefix(self) -> tuple[Row | None, int, Timestamp | None]:
        """The row after every entry up to the first uncommitted one: (its values or None if
        deleted, how many mutations that applies, the newest of their commit timestamps).
        (None, -1, None) while the insert itself is uncommitted."""
        if not self.mutations:  # the common row: nothing to remember
            inserted = self.txn.commit_ts
            return (None, -1, None) if inserted is None else (self.values, 0, inserted)
        prefix = self._prefix
        if prefix is None:
            inserted = self.txn.commit_ts
            if inserted is None:
                return None, -1, None
            prefix = (self.values, 0, inserted)
        values, applied, ts = prefix
        mutations = self.mutations
        while applied < len(mutations):
            mutation = mutations[applied]
            committed = mutation.txn.commit_ts
            if committed is None:
                break
            values = apply_mutation(values, mutation)
            applied += 1
            ts = committed
        if self._prefix is None or applied != self._prefix[1]:
            self._prefix = (values, applied, ts)
        return values, applied, ts


@dataclass(frozen=True, slots=True)
class Probe:
    """What a writer finds at a key: a live transaction in the way, and whether the row is live
    at its newest version (the one in the way's, if there is one: a delete's or an update's)."""

    blocker: TxnState | None
    is_live: bool


_ABSENT = Probe(None, False)
_KNOWN_MIN = 8
"""Fewer keys than this are searched for one by one."""


class MemRowSet:
    """The in-memory rowset every insert goes to, keyed by encoded primary key."""

    def __init__(self, schema: Schema, lock: threading.Lock | threading.RLock) -> None:
        self._schema = schema
        self._lock = lock
        self._rows: SortedDict = SortedDict()
        self._segments: list[InsertSegment] = []
        """Bulk inserts kept as Arrow columns (insert_segment.py); each key is in the map or
        in one segment, never both."""
        self._known: dict[bytes, tuple[InsertSegment, int] | None] | None = None
        """A batch write's keys found in the segments at once (``know_segments``)."""
        self._known_rows: dict[tuple[int, int], Row] = {}
        """Their rows' values, by segment (``id``) and position, converted together."""
        self._moved_log: list[bytes] = []
        """Keys moved from a segment to the map, in order: a scan skips in the map those
        moved after it captured the segments (it reads them from its capture)."""

    def __len__(self) -> int:
        return len(self._rows) + sum(len(s) for s in self._segments)

    @property
    def map_rows(self) -> int:
        return len(self._rows)

    @property
    def segments(self) -> list[InsertSegment]:
        return self._segments

    def add_segment(self, segment: InsertSegment) -> None:
        """Take a bulk insert whose keys none of this tablet's rowsets hold (caller checked)."""
        self._segments.append(segment)

    def drop_segment(self, segment: InsertSegment) -> bool:
        """Remove ``segment`` (its transaction rolled back its insert) and the map rows its
        changed keys moved to, which hold nothing else of that transaction's by now (later
        writes are undone first); whether this MemRowSet held it."""
        held = [s for s in self._segments if s.ident is segment.ident]
        if not held:
            return False
        segment = held[0]
        self._segments.remove(segment)
        for index in np.flatnonzero(segment.moved).tolist():
            key = segment.keys[index]
            row = self._rows.get(key)
            if row is not None and row.txn is segment.txn:
                del self._rows[key]
        return True

    def holds_segment(self, segment: InsertSegment) -> bool:
        return any(s is segment for s in self._segments)

    def capture_segments(self) -> Capture:
        """Each segment with a copy of its moved marks, and the moved log's length: what a
        scan reads the segments by (caller holds the tablet lock)."""
        return [(s, s.moved.copy()) for s in self._segments if len(s)], len(self._moved_log)

    def know_segments(self, keys: list[bytes]) -> None:
        """Find a batch write's ``keys`` in the segments together (its probes and writes ask
        ``_segment_of`` of each key several times, a search per segment each); valid while
        the caller holds the tablet lock, which keeps segments from being added or dropped,
        until ``forget_segments``."""
        if len(keys) < _KNOWN_MIN or not self._segments:
            return
        self._known = known = locate_in_segments(self._segments, keys)
        by_segment: dict[int, tuple[InsertSegment, list[int]]] = {}
        for found in known.values():
            if found is not None:
                by_segment.setdefault(id(found[0]), (found[0], []))[1].append(found[1])
        rows = self._known_rows
        for segment, indexes in by_segment.values():
            rows.update(zip([(id(segment), i) for i in indexes], segment.rows(indexes)))

    def forget_segments(self) -> None:
        self._known = None
        self._known_rows.clear()

    def _segment_of(self, key: bytes) -> tuple[InsertSegment, int] | None:
        known = self._known
        if known is not None and key in known:
            found = known[key]
            if found is None or not found[0].moved[found[1]]:
                return found
        for segment in self._segments:
            index = segment.index_of(key)
            if index is not None:
                return segment, index
        return None

    def _row_for_write(self, key: bytes) -> MemRowSetRow | None:
        """The map row at ``key``, moving it out of its segment first if it is there."""
        row: MemRowSetRow | None = self._rows.get(key)
        if row is not None or not self._segments:
            return row
        found = self._segment_of(key)
        if found is None:
            return None
        segment, index = found
        values = self._known_rows.get((id(segment), index)) if self._known_rows else None
        row = MemRowSetRow(segment.txn, segment.row(index) if values is None else values)
        segment.mark_moved(index)
        self._rows[key] = row
        # An emptied segment stays until the flush: a running flush that froze it with rows
        # left finds the rows moved since in this map by it.
        self._moved_log.append(key)
        return row

    def with_schema(self, schema: Schema) -> MemRowSet:
        """A copy whose rows and chains hold ``schema``'s columns (schema_change.py); the
        caller holds the tablet lock and swaps the copy in."""
        mapper = RowMapper(self._schema, schema)
        copy = MemRowSet(schema, self._lock)
        for key, row in self._rows.items():
            moved = MemRowSetRow(row.txn, mapper.row(row.values))
            moved.mutations = [mapper.mutation(m) for m in row.mutations]
            copy._rows[key] = moved
        for segment in self._segments:
            batch = conform_batch(segment.batch, schema, fill=True)
            copy._segments.append(segment.with_batch(schema, batch))
        return copy

    def get(self, key: bytes) -> MemRowSetRow | None:
        row: MemRowSetRow | None = self._rows.get(key)
        return row

    def read(self, key: bytes, snapshot: Timestamp, reader: TxnState | None) -> Row | None:
        """The version of ``key``'s row visible at ``snapshot`` to ``reader`` (a point read),
        or None; the caller holds the tablet lock."""
        row: MemRowSetRow | None = self._rows.get(key)
        if row is not None:
            return _visible(row, snapshot, reader)
        found = self._segment_of(key) if self._segments else None
        if found is None or not found[0].is_visible(snapshot, reader):
            return None
        return found[0].row(found[1])

    def read_range(
        self,
        lower: bytes | None,
        upper: bytes | None,
        snapshot: Timestamp,
        reader: TxnState | None,
        most: int,
    ) -> list[Row] | None:
        """The rows in [lower, upper) visible at ``snapshot`` to ``reader``, or None when
        the range holds more than ``most`` entries; the caller holds the tablet lock."""
        found = self._range(lower, upper, snapshot, reader, most)
        return None if found is None else found[1]

    def keys_in_range(
        self,
        lower: bytes | None,
        upper: bytes | None,
        snapshot: Timestamp,
        reader: TxnState | None,
        most: int,
    ) -> list[bytes] | None:
        """``read_range``'s rows' encoded keys, in the same order."""
        found = self._range(lower, upper, snapshot, reader, most)
        return None if found is None else found[0]

    def _range(
        self,
        lower: bytes | None,
        upper: bytes | None,
        snapshot: Timestamp,
        reader: TxnState | None,
        most: int,
    ) -> tuple[list[bytes], list[Row]] | None:
        rows = self._rows
        start = 0 if lower is None else rows.bisect_left(lower)
        end = len(rows) if upper is None else rows.bisect_left(upper)
        keys: list[bytes] = []
        out: list[Row] = []
        spans: list[tuple[InsertSegment, int, int]] = []
        if not self._segments:
            if end == start:  # an index lookup's usual MemRowSet: nothing in the range
                return keys, out
            if end - start > most:
                return None
        else:
            for segment in self._segments:
                lo, hi = segment.span(lower, upper)
                if hi > lo:
                    spans.append((segment, lo, hi))
            if end - start + sum(hi - lo for _, lo, hi in spans) > most:
                return None
        if end > start:
            for key, row in rows.items()[start:end]:
                visible = _visible(row, snapshot, reader)
                if visible is not None:
                    keys.append(key)
                    out.append(visible)
        for segment, lo, hi in spans:
            if segment.is_visible(snapshot, reader):
                kept = (lo + np.flatnonzero(~segment.moved[lo:hi])).tolist()
                keys += segment.keys[kept].tolist()
                out += segment.rows(kept)
        return keys, out

    def adopt(self, key: bytes, row: MemRowSetRow, *, moved: bool = False) -> None:
        """Take ``row`` over from a frozen MemRowSet (a flush keeps it in memory); ``moved``:
        a scan that began before this reads the row elsewhere (in the segment it left, or
        in the frozen MemRowSet it also captured), so it skips the row here."""
        self._rows[key] = row
        if moved:
            self._moved_log.append(key)

    def adopt_many(self, entries: list[tuple[bytes, MemRowSetRow]]) -> None:
        """``adopt(key, row, moved=True)`` for every entry, as one bulk update of the sorted
        map (a long transaction's kept rows: one sort rather than a tree insert each)."""
        self._rows.update(entries)
        self._moved_log.extend(key for key, _ in entries)

    def snapshot_entries(self) -> list[tuple[bytes, MemRowSetRow]]:
        """Every (key, row), in key order, as a list a flush can walk without the lock."""
        return list(self._rows.items())

    def contains(self, key: bytes) -> bool:
        return key in self._rows or (bool(self._segments) and self._segment_of(key) is not None)

    def probe(self, key: bytes, txn: TxnState) -> Probe:
        """Classify ``key`` for a write by ``txn`` (caller holds the tablet lock)."""
        row = self._rows.get(key)
        if row is None:
            found = self._segment_of(key) if self._segments else None
            if found is None:
                return _ABSENT
            inserter = found[0].txn
            if inserter is not txn and not inserter.is_done:
                return Probe(inserter, True)
            return Probe(None, True)
        last = row.last_writer
        if last is not txn and not last.is_done:
            return Probe(last, _latest(row) is not None)
        return Probe(None, _latest(row) is not None)

    def changed_after(self, key: bytes, ts: Timestamp) -> bool:
        """Whether another transaction committed a change to ``key`` after ``ts`` (a write
        conflict for a writer whose snapshot is ``ts``)."""
        row = self._rows.get(key)
        if row is None:
            found = self._segment_of(key) if self._segments else None
            inserted = None if found is None else found[0].txn.commit_ts
            return inserted is not None and bool(inserted > ts)
        # Committed entries come in commit order, so the newest committed one decides.
        for mutation in reversed(row.mutations):
            committed = mutation.txn.commit_ts
            if committed is not None:
                return bool(committed > ts)
        inserted = row.txn.commit_ts
        return inserted is not None and bool(inserted > ts)

    def pop_provisional(self, key: bytes, txn: TxnState) -> None:
        """Undo ``txn``'s newest uncommitted entry at ``key`` (ROLLBACK TO SAVEPOINT)."""
        row = self._rows.get(key)
        if row is None:
            self._remove_from_segment(key, txn)
            return
        if row.mutations:
            if row.mutations[-1].txn is txn:
                row.pop_mutation()
        elif row.txn is txn:
            del self._rows[key]

    def holds_any(self, keys: list[bytes], sorted_keys: np.ndarray | None = None) -> bool:
        """Whether any of ``keys`` has a row here (live, deleted or provisional);
        ``sorted_keys``, if given, holds them ascending as an object array."""
        if not dict.keys(self._rows).isdisjoint(keys):
            return True
        if not self._segments:
            return False
        if sorted_keys is None:
            sorted_keys = np.empty(len(keys), dtype=object)
            sorted_keys[:] = sorted(keys)
        return any(segment.holds_any(sorted_keys) for segment in self._segments)

    def _remove_from_segment(self, key: bytes, txn: TxnState) -> None:
        """Undo ``txn``'s insert of ``key`` if a segment of ``txn`` holds it (a per-key
        rollback; a whole rolled-back segment is dropped with ``drop_segment``)."""
        found = self._segment_of(key) if self._segments else None
        if found is not None and found[0].txn is txn:
            found[0].mark_moved(found[1])

    def insert_new(self, keys: list[bytes], rows: list[Row], txn: TxnState) -> None:
        """Insert rows at distinct keys none of which is here (``holds_any`` was False).

        SortedDict.update re-sorts every key in insertion order once a batch is a tenth of
        the map, and adds a smaller one key by key; both made a bulk load's cost grow with
        the rows already in memory.  So a large batch is sorted alone and merged into the
        key list as a second run (merge_sorted_keys)."""
        entries = self._rows
        new_rows = [MemRowSetRow(txn, row) for row in rows]
        if len(keys) < _BULK_MERGE_MIN_ROWS:
            entries.update(zip(keys, new_rows, strict=True))
            return
        dict.update(entries, zip(keys, new_rows, strict=True))
        merge_sorted_keys(entries, sorted(keys))

    def insert(self, key: bytes, values: Row, txn: TxnState) -> None:
        """Insert a row whose key is absent or deleted at the newest version (probe first)."""
        row = self._row_for_write(key)
        if row is None:
            self._rows[key] = MemRowSetRow(txn, values)
        else:
            row.add_mutation(Mutation(MutationKind.REINSERT, txn, values))

    def update(self, key: bytes, change: Row, txn: TxnState) -> bool:
        """Apply ((column index, value), ...) to a live row; False if it is absent or deleted."""
        row = self._row_for_write(key)
        if row is None or _latest(row) is None:
            return False
        row.add_mutation(Mutation(MutationKind.UPDATE, txn, change))
        return True

    def delete(self, key: bytes, txn: TxnState) -> bool:
        """Delete a live row; False if it is absent or already deleted."""
        row = self._row_for_write(key)
        if row is None or _latest(row) is None:
            return False
        row.add_mutation(Mutation(MutationKind.DELETE, txn, None))
        return True

    def remove_provisional(self, key: bytes, txn: TxnState) -> None:
        """Undo ``txn``'s uncommitted entries at ``key`` (rollback)."""
        row = self._rows.get(key)
        if row is None:
            self._remove_from_segment(key, txn)
            return
        if row.txn is txn:
            del self._rows[key]
            return
        while row.mutations and row.mutations[-1].txn is txn:
            row.pop_mutation()

    def scan(
        self,
        spec: ScanSpec,
        snapshot: Timestamp,
        reader: TxnState | None,
        batch_rows: int,
        captured: Capture | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Yield the rows visible at ``snapshot`` to ``reader`` that match ``spec``: the map's
        in key order, then each segment's in key order (nothing downstream needs one order
        across them; a flush sorts what it writes).  ``captured`` is ``capture_segments()``
        taken when the scan began (else at its first batch)."""
        if spec.limit is not None and spec.limit <= 0:
            return
        key_range = spec.key_range(self._schema)
        if key_range.is_empty:
            return
        if captured is None:
            with self._lock:
                captured = self.capture_segments()
        segments, moved_mark = captured
        remaining = spec.limit
        parts = (
            self._scan_map(spec, key_range.lower, key_range.upper, snapshot, reader, batch_rows,
                           moved_mark),
            scan_segments(segments, spec, self._schema, key_range.lower, key_range.upper,
                          snapshot, reader, batch_rows),
        )  # fmt: skip
        for part in parts:
            for batch in part:
                if remaining is not None:
                    batch = batch.slice(0, remaining)
                    remaining -= batch.num_rows
                if batch.num_rows:
                    yield batch
                if remaining == 0:
                    return

    def _scan_map(
        self,
        spec: ScanSpec,
        lower: bytes | None,
        upper: bytes | None,
        snapshot: Timestamp,
        reader: TxnState | None,
        batch_rows: int,
        moved_mark: int,
    ) -> Iterator[pa.RecordBatch]:
        schema = self._schema
        predicate_ids = [p.column_id for p in spec.predicates]
        needed = list(dict.fromkeys([*spec.projection, *predicate_ids]))
        arrow_schema = schema.arrow_schema(spec.projection)
        start, start_inclusive = lower, True
        while True:
            with self._lock:
                late = set(self._moved_log[moved_mark:])
                rows, last_key, exhausted = self._collect(
                    start, start_inclusive, upper, snapshot, reader, batch_rows, late
                )
            if rows:
                arrays = {
                    column_id: from_storage_values(
                        list(map(itemgetter(schema.index_of(column_id)), rows)),
                        schema.column(column_id).type,
                    )
                    for column_id in needed
                }
                batch = project_batch(arrays, spec, arrow_schema, len(rows))
                if spec.predicates:
                    batch = batch.filter(predicate_mask(spec, arrays))
                yield batch
            if exhausted:
                return
            start, start_inclusive = last_key, False

    def _collect(
        self,
        start: bytes | None,
        start_inclusive: bool,
        upper: bytes | None,
        snapshot: Timestamp,
        reader: TxnState | None,
        batch_rows: int,
        late: set[bytes],
    ) -> tuple[list[Row], bytes | None, bool]:
        """Resolve up to ``batch_rows`` visible rows from ``start``; return them, the last key
        looked at, and whether the range is exhausted.  Keys in ``late`` moved here from a
        segment after the scan captured it, which it reads them from."""
        rows: list[Row] = []
        append = rows.append
        last_key = None
        entries = self._rows
        if start is None:
            i = 0
        else:
            i = entries.bisect_left(start) if start_inclusive else entries.bisect_right(start)
        end = len(entries) if upper is None else entries.bisect_left(upper)
        keys, values = entries.keys(), entries.values()
        # Per-row Python: each row's mutation chain is resolved against the snapshot (an
        # edge); a row never changed since its committed insert, the common one, is taken
        # without a call.
        while i < end:
            stop = min(end, i + max(1, batch_rows - len(rows)))
            for key, row in zip(keys[i:stop], values[i:stop]):
                last_key = key
                if late and key in late:
                    continue
                txn = row.txn
                if not row.mutations and (
                    txn is reader or (txn.commit_ts is not None and txn.commit_ts <= snapshot)
                ):
                    append(row.values)
                    continue
                visible = _visible(row, snapshot, reader)
                if visible is not None:
                    append(visible)
            i = stop
            if len(rows) >= batch_rows:
                return rows, last_key, i >= end
        return rows, last_key, True


_BULK_MERGE_MIN_ROWS = 256
"""Below this, adding keys one by one into the sorted list costs less than a merge."""


def merge_sorted_keys(entries: SortedDict, new_keys: list[bytes]) -> None:
    """Merge ``new_keys`` (ascending, distinct, none in the key list, already in the dict)
    into ``entries``' sorted key list.

    This is SortedList.update's own large-batch branch (concatenate, sort, re-chunk) without
    its switch to one-by-one adds for small batches: the existing keys are one ascending run
    and the new ones another, so the sort is a linear galloping merge of the two runs, not
    an n log n sort.  It reaches into sortedcontainers' internals (pinned by
    tests/unit/storage/tablet/test_memrowset_bulk.py)."""
    key_list = entries._list
    lists: list[list[bytes]] = key_list._lists
    maxes: list[bytes] = key_list._maxes
    merged: list[bytes] = [key for sublist in lists for key in sublist]
    merged.extend(new_keys)
    merged.sort()
    load = key_list._load
    key_list._clear()
    lists.extend(merged[pos : pos + load] for pos in range(0, len(merged), load))
    maxes.extend(sublist[-1] for sublist in lists)
    key_list._len = len(merged)


def _latest(row: MemRowSetRow) -> Row | None:
    """The newest version of a row, applying every entry; None if deleted."""
    values, applied, _ = row.committed_prefix()
    if applied < 0:
        values, applied = row.values, 0
    mutations = row.mutations
    for index in range(applied, len(mutations)):
        values = apply_mutation(values, mutations[index])
    return values


def _visible(row: MemRowSetRow, snapshot: Timestamp, reader: TxnState | None) -> Row | None:
    if reader is not None and row.last_writer is reader:
        # The reader wrote on top of the newest version, so it sees everything below its write.
        return _latest(row)
    values, applied, prefix_ts = row.committed_prefix()
    if applied < 0:
        return None  # the insert is not committed
    if prefix_ts is not None and prefix_ts <= snapshot:
        return values  # every later entry is uncommitted
    # An older snapshot: walk the chain from the insert.
    txn = row.txn
    if txn.commit_ts is None or txn.commit_ts > snapshot:
        return None
    values = row.values
    for mutation in row.mutations:
        ts = mutation.txn.commit_ts
        if ts is None or ts > snapshot:
            break
        values = apply_mutation(values, mutation)
    return values
