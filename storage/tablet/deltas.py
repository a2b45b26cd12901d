"""The DeltaMemStore: a DiskRowSet's in-memory REDO mutations since its last delta flush, by rowid.

A DiskRowSet's base data is each row as it stood when the rowset was
written; history lives beside it in delta stores (Kudu's vocabulary):

- **UNDO delta files**: before-images of the changes the base already holds
  (a MemRowSet flush writes one; a major delta compaction adds more);
- **REDO delta files**: after-images of changes committed after the base,
  each written when the DeltaMemStore flushed;
- the **DeltaMemStore**, here: changes not yet flushed.

It keeps each mutation twice, for its two kinds of user:

- writers see ``chains``, ``rowid -> [Mutation]``, the same REDO chains
  (UPDATE, DELETE, REINSERT tagged with TxnStates) the MemRowSet keeps, so a
  probe, a write conflict check and a rollback look at one row's list;
- readers see a columnar log of the same mutations (rowid, transaction,
  liveness, and per column whether it is set and the value), appended in
  chain order.  A scan of a block of rowids picks that block's entries with
  a binary search over the log sorted by rowid, resolves visibility with
  numpy (each transaction's commit timestamp looked up once, not per
  mutation), and hands ``delta_apply`` the same ``DeltaRecords`` a REDO file
  gives: no Python runs per mutation on a scan.  A flush takes its REDO
  records from the log the same way.  A read of only a few rows (a point
  select) walks their chains instead, so it never waits for the whole log to
  be sealed and sorted.

Appends go to Python lists and are turned into arrays when a reader next
looks ("sealed"), so a write costs a few list appends and each mutation is
converted to Arrow once.  Removed entries (a rollback, a flush) are left out
at the next seal.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from sortedcontainers import SortedDict

from storage.mvcc import TxnState
from storage.row_change import ColumnChanges, Mutation, MutationKind, Row, from_storage_values
from storage.schema import Schema
from storage.tablet.delta_records import (
    DEAD,
    DMS_TS_BASE,
    KEEP,
    LIVE,
    ColumnDelta,
    DeltaRecords,
    records_builder,
)
from storage.tablet.schema_change import RowMapper
from storage.timestamp import Timestamp

_FEW_CHAINS = 64
"""Up to this many rows' chains in a read's range are walked one by one (the old way), so a
point read after a write costs no seal or sort of the whole log."""
_NEVER = np.iinfo(np.int64).max
"""The commit timestamp of a transaction not (yet) committed: above every snapshot."""


class DeltaEntry(Mutation):
    """A mutation in a DeltaMemStore chain, with its place in the columnar log."""

    __slots__ = ("seq",)

    def __init__(self, kind: MutationKind, txn: TxnState, change: Row | None, seq: int) -> None:
        # Mutation's fields set here, not through super(): a batch makes one per row.
        self.kind = kind
        self.txn = txn
        self.change = change
        self.seq = seq


@dataclass(frozen=True, slots=True)
class DeltaFlush:
    """What a flush takes from a DeltaMemStore: its REDO records (at their commit
    timestamps) and, to drop them once a file holds them, which entries they were."""

    records: DeltaRecords
    seqs: np.ndarray
    rowids: np.ndarray
    """The distinct rowids flushed, ascending, and how many leading entries of each chain."""
    counts: np.ndarray


class _Column:
    """One column of the log: whether each entry sets it, and the value it sets."""

    __slots__ = ("is_set", "values")

    def __init__(self, is_set: np.ndarray, values: pa.Array) -> None:
        self.is_set = is_set
        self.values = values


class DeltaMemStore:
    """A DiskRowSet's in-memory REDO chains since its last delta flush, by rowid."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.chains: SortedDict = SortedDict()
        self._next_seq = 0
        # The sealed log, in append (= chain) order within each rowid.
        self._seq = np.zeros(0, np.int64)
        self._rowid = np.zeros(0, np.int64)
        self._txn = np.zeros(0, np.int64)
        self._live = np.zeros(0, np.int8)
        self._columns: dict[int, _Column] = {}
        """By column position in ``schema``."""
        # Entries appended since the last seal.
        self._p_seq: list[int] = []
        self._p_rowid: list[int] = []
        self._p_txn: list[int] = []
        self._p_live: list[int] = []
        self._p_cells: dict[int, tuple[list[int], list[object]]] = {}
        self._dropped: list[np.ndarray] = []
        # Transactions, numbered in order of first appearance; commit timestamps resolved lazily.
        self._txns: list[TxnState] = []
        self._txn_number: dict[TxnState, int] = {}
        self._txn_ts = np.zeros(16, np.int64)
        self._unresolved: set[int] = set()
        # The log sorted by rowid (positions, and the rowids in that order); None when stale.
        self._order: np.ndarray | None = None
        self._sorted_rowid = np.zeros(0, np.int64)

    def __len__(self) -> int:
        return len(self.chains)

    def with_schema(self, mapper: RowMapper, schema: Schema) -> DeltaMemStore:
        """A copy whose mutations hold ``schema``'s positions (schema_change.py)."""
        copy = DeltaMemStore(schema)
        for rowid, chain in self.chains.items():
            for mutation in chain:
                copy.append(rowid, mapper.mutation(mutation))
        return copy

    # --- writers (caller holds the tablet lock) ------------------------------------------

    def append(self, rowid: int, mutation: Mutation) -> None:
        seq = self._next_seq
        self._next_seq += 1
        self.chains.setdefault(rowid, []).append(
            DeltaEntry(mutation.kind, mutation.txn, mutation.change, seq)
        )
        txn = mutation.txn
        number = self._txn_number.get(txn)
        if number is None:
            number = self._add_txn(txn)
        at = len(self._p_seq)
        self._p_seq.append(seq)
        self._p_rowid.append(rowid)
        self._p_txn.append(number)
        kind = mutation.kind
        cells: Iterable[tuple[int, object]]
        if kind is MutationKind.UPDATE:
            self._p_live.append(KEEP)
            cells = mutation.change or ()  # type: ignore[assignment]  # an UPDATE's ColumnChanges
        elif kind is MutationKind.DELETE:
            self._p_live.append(DEAD)
            cells = ()
        else:
            self._p_live.append(LIVE)
            cells = enumerate(mutation.change or ())
        for column_idx, value in cells:
            positions, values = self._p_cells.setdefault(column_idx, ([], []))
            positions.append(at)
            values.append(value)
        self._order = None

    def append_batch(
        self,
        rowids: list[int],
        kind: MutationKind,
        txn: TxnState,
        changes: list[ColumnChanges] | None = None,
    ) -> None:
        """``append`` of one ``kind`` of mutation by ``txn`` to each of ``rowids`` (an
        UPDATE's ``changes`` row by row; a DELETE has none), as list extends and one
        insert of the new chains into the sorted map, not a call per row."""
        assert kind is not MutationKind.REINSERT, "a REINSERT is appended row by row"
        n = len(rowids)
        seq = self._next_seq
        self._next_seq += n
        if changes is None:
            entries = [DeltaEntry(kind, txn, None, s) for s in range(seq, seq + n)]
        else:
            entries = [DeltaEntry(kind, txn, c, s) for c, s in zip(changes, range(seq, seq + n))]
        chains = self.chains
        new: dict[int, list[DeltaEntry]] = {}
        for rowid, entry in zip(rowids, entries, strict=True):
            chain = chains.get(rowid)
            if chain is None:
                chain = new.get(rowid)
                if chain is None:
                    new[rowid] = [entry]
                    continue
            chain.append(entry)
        if new:
            chains.update(new)
        number = self._txn_number.get(txn)
        if number is None:
            number = self._add_txn(txn)
        at = len(self._p_seq)
        self._p_seq.extend(range(seq, seq + n))
        self._p_rowid.extend(rowids)
        self._p_txn.extend([number] * n)
        self._p_live.extend([DEAD if kind is MutationKind.DELETE else KEEP] * n)
        for position, change in enumerate(changes or (), at):
            for column_idx, value in change:
                positions, values = self._p_cells.setdefault(column_idx, ([], []))
                positions.append(position)
                values.append(value)
        self._order = None

    def adopt(self, rowid: int, chain: list[Mutation]) -> None:
        """Append another store's ``chain`` (a merging compaction moves it here)."""
        for mutation in chain:
            self.append(rowid, mutation)

    def _add_txn(self, txn: TxnState) -> int:
        number = len(self._txns)
        self._txns.append(txn)
        self._txn_number[txn] = number
        if number >= len(self._txn_ts):
            self._txn_ts = np.concatenate([self._txn_ts, np.zeros(len(self._txn_ts), np.int64)])
        self._txn_ts[number] = _NEVER
        self._unresolved.add(number)
        return number

    def _drop(self, entries: list[Mutation]) -> None:
        if entries:
            self._dropped.append(np.array([e.seq for e in entries], np.int64))  # type: ignore[attr-defined]
            self._order = None

    def remove_provisional(self, rowid: int, txn: object) -> None:
        chain = self.chains.get(rowid)
        if not chain:
            return
        removed = []
        while chain and chain[-1].txn is txn:
            removed.append(chain.pop())
        self._drop(removed)
        if not chain:
            del self.chains[rowid]

    def pop_provisional(self, rowid: int, txn: object) -> None:
        """Undo ``txn``'s newest uncommitted mutation of ``rowid`` (ROLLBACK TO SAVEPOINT)."""
        chain = self.chains.get(rowid)
        if chain and chain[-1].txn is txn:
            self._drop([chain.pop()])
            if not chain:
                del self.chains[rowid]

    # --- the columnar log ------------------------------------------------------------------

    def _seal(self) -> None:
        """Turn pending appends into arrays and leave dropped entries out."""
        if self._p_seq:
            n_old, m = len(self._seq), len(self._p_seq)
            self._seq = np.concatenate([self._seq, np.array(self._p_seq, np.int64)])
            self._rowid = np.concatenate([self._rowid, np.array(self._p_rowid, np.int64)])
            self._txn = np.concatenate([self._txn, np.array(self._p_txn, np.int64)])
            self._live = np.concatenate([self._live, np.array(self._p_live, np.int8)])
            for column_idx in set(self._columns) | set(self._p_cells):
                data_type = self.schema.columns[column_idx].type
                old = self._columns.get(column_idx)
                if old is None:
                    old = _Column(np.zeros(n_old, bool), pa.nulls(n_old, data_type.arrow_type))
                positions, values = self._p_cells.get(column_idx, ([], []))
                is_set = np.zeros(m, bool)
                is_set[positions] = True
                full: list[object] = [None] * m
                for position, value in zip(positions, values, strict=True):
                    full[position] = value
                new = from_storage_values(full, data_type)
                self._columns[column_idx] = _Column(
                    np.concatenate([old.is_set, is_set]), pa.concat_arrays([old.values, new])
                )
            self._p_seq, self._p_rowid, self._p_txn, self._p_live = [], [], [], []
            self._p_cells = {}
        if self._dropped:
            keep = ~np.isin(self._seq, np.concatenate(self._dropped))
            self._dropped = []
            self._take(np.flatnonzero(keep))

    def _take(self, positions: np.ndarray) -> None:
        self._seq = self._seq[positions]
        self._rowid = self._rowid[positions]
        self._txn = self._txn[positions]
        self._live = self._live[positions]
        indices = pa.array(positions, pa.int64())
        columns = {}
        for column_idx, column in self._columns.items():
            is_set = column.is_set[positions]
            if is_set.any():
                columns[column_idx] = _Column(is_set, column.values.take(indices))
        self._columns = columns
        if len(self._txns) > 64 and len(self._txns) > 4 * len(self._seq):
            self._renumber_txns()

    def _renumber_txns(self) -> None:
        """Forget transactions no entry refers to any more (many small ones came and went)."""
        used, inverse = np.unique(self._txn, return_inverse=True)
        txns = [self._txns[int(i)] for i in used]
        ts = self._txn_ts[used]
        unresolved = {new for new, old in enumerate(used.tolist()) if old in self._unresolved}
        self._txns = txns
        self._txn_number = {t: i for i, t in enumerate(txns)}
        self._txn_ts = np.concatenate([ts, np.zeros(max(16, len(ts)), np.int64)])
        self._unresolved = unresolved
        self._txn = inverse.astype(np.int64).reshape(-1)

    def _resolve_txns(self) -> np.ndarray:
        """Each transaction's commit timestamp (``_NEVER`` until it has one).  Only the
        transactions not yet seen committed are looked at: a commit timestamp is set once."""
        for number in list(self._unresolved):
            txn = self._txns[number]
            ts = txn.commit_ts
            if ts is None and txn.is_done:
                ts = txn.commit_ts  # set before the status: read it again after
                if ts is None:
                    self._unresolved.discard(number)  # aborted, or committed without writes
                    continue
            if ts is not None:
                self._txn_ts[number] = int(ts)
                self._unresolved.discard(number)
        return self._txn_ts

    def _view(self) -> tuple[np.ndarray, np.ndarray]:
        """The log's positions sorted by (rowid, append order), and their rowids."""
        self._seal()
        if self._order is None:
            self._order = np.argsort(self._rowid, kind="stable")
            self._sorted_rowid = self._rowid[self._order]
        return self._order, self._sorted_rowid

    def _visible(
        self, positions: np.ndarray, rowids: np.ndarray, snapshot: int, reader: TxnState | None
    ) -> np.ndarray:
        """Which of the entries at ``positions`` (sorted by rowid, chain order within one)
        ``reader`` sees at ``snapshot``: a chain's committed prefix at or below the snapshot,
        or all of it when the reader wrote its newest entry (it wrote on top of the newest
        version)."""
        txns = self._txn[positions]
        visible = self._resolve_txns()[txns] <= snapshot
        starts = np.ones(len(rowids), bool)
        starts[1:] = rowids[1:] != rowids[:-1]
        run = np.cumsum(starts) - 1
        own = None if reader is None else self._txn_number.get(reader)
        if own is not None:
            ends = np.ones(len(rowids), bool)
            ends[:-1] = starts[1:]
            visible |= (txns[ends] == own)[run]
        hidden = ~visible
        if hidden.any():
            # A prefix: an entry after a hidden one of its chain is hidden too.
            seen = np.cumsum(hidden)
            before_run = (seen - hidden)[np.flatnonzero(starts)]
            visible = seen == before_run[run]
        result: np.ndarray = visible
        return result

    def _records(self, positions: np.ndarray, ts: np.ndarray) -> DeltaRecords:
        indices = pa.array(positions, pa.int64())
        columns = {}
        for column_idx, column in self._columns.items():
            is_set = column.is_set[positions]
            if is_set.any():
                columns[self.schema.columns[column_idx].id] = ColumnDelta(
                    is_set, column.values.take(indices)
                )
        return DeltaRecords(self._rowid[positions], ts, self._live[positions], columns)

    def visible_records(
        self, lo: int, hi: int, snapshot: int, reader: TxnState | None
    ) -> DeltaRecords:
        """The REDO records of rowids in [lo, hi) that ``reader`` sees at ``snapshot``, sorted
        by (rowid, chain order), ordered after every file's records (``DMS_TS_BASE``)."""
        if not self.chains:
            return DeltaRecords.empty()
        chains = self.chains
        if chains.bisect_left(hi) - chains.bisect_left(lo) <= _FEW_CHAINS:
            return self._walk(lo, hi, snapshot, reader)
        order, sorted_rowid = self._view()
        start = int(np.searchsorted(sorted_rowid, lo, "left"))
        end = int(np.searchsorted(sorted_rowid, hi, "left"))
        if start == end:
            return DeltaRecords.empty()
        positions = order[start:end]
        visible = self._visible(positions, sorted_rowid[start:end], snapshot, reader)
        positions = positions[visible]
        return self._records(positions, DMS_TS_BASE + self._seq[positions])

    def _walk(self, lo: int, hi: int, snapshot: int, reader: TxnState | None) -> DeltaRecords:
        """``visible_records`` for a few chains (a point or short range read), walked one
        by one: no seal or sort of the whole log for them."""
        builder = records_builder(self.schema)
        for rowid in self.chains.irange(lo, hi, inclusive=(True, False)):
            chain: list[DeltaEntry] = self.chains[rowid]
            own = reader is not None and chain[-1].txn is reader
            for entry in chain:
                ts = entry.txn.commit_ts
                if not own and (ts is None or ts > snapshot):
                    break
                builder.add_mutation(rowid, DMS_TS_BASE + entry.seq, entry)
        return builder.build()

    # --- flushing ---------------------------------------------------------------------------

    def committed(self, snapshot: Timestamp) -> DeltaFlush | None:
        """The leading entries of each chain committed at or before ``snapshot``, as REDO
        records at their commit timestamps (what a flush writes while the chains stay
        readable); None when there are none.  Caller holds the tablet lock."""
        if not self.chains:
            return None
        order, sorted_rowid = self._view()
        visible = self._visible(order, sorted_rowid, int(snapshot), None)
        positions = order[visible]
        if not len(positions):
            return None
        ts = self._resolve_txns()[self._txn[positions]]
        rowids, counts = np.unique(sorted_rowid[visible], return_counts=True)
        return DeltaFlush(self._records(positions, ts), self._seq[positions], rowids, counts)

    def drop_flushed(self, flush: DeltaFlush) -> None:
        """Remove what ``committed`` returned, now that a REDO file holds it."""
        for rowid, count in zip(flush.rowids.tolist(), flush.counts.tolist(), strict=True):
            chain = self.chains[rowid]
            # A new list, not the old one cut: a scan of a rowset a merging compaction
            # replaced may still hold the old list (rowset_compaction.py).
            if len(chain) > count:
                self.chains[rowid] = chain[count:]
            else:
                del self.chains[rowid]
        self._dropped.append(flush.seqs)
        self._order = None
