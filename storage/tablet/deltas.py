"""The DeltaMemStore: a DiskRowSet's in-memory REDO chains, by rowid, since its last delta flush.

A DiskRowSet's base data is each row as it stood when the rowset was
written; history lives beside it in delta stores (Kudu's vocabulary):

- **UNDO delta files**: before-images of the changes the base already holds
  (a MemRowSet flush writes one; a major delta compaction adds more);
- **REDO delta files**: after-images of changes committed after the base,
  each written when the DeltaMemStore flushed;
- the **DeltaMemStore**, here: changes not yet flushed, as ``rowid ->
  [Mutation]``, the same REDO chains (UPDATE, DELETE, REINSERT tagged with
  TxnStates) the MemRowSet keeps, so provisional writes, visibility and
  rollback work alike.  Chains sit in a sorted map, so a scan of a block of
  rowids visits only the chains inside it.

Files hold ``DeltaRecords`` (``delta_records.py``) in the format of
``delta_file.py``; ``delta_apply.py`` applies them.  This module turns chains
into records: the visible ones for a scan, the committed ones for a flush.
"""

from __future__ import annotations

from sortedcontainers import SortedDict

from storage.mvcc import TxnState
from storage.row_change import Mutation
from storage.schema import Schema
from storage.tablet.delta_records import DMS_TS_BASE, DeltaRecords, records_builder
from storage.tablet.schema_change import RowMapper
from storage.timestamp import Timestamp


class DeltaMemStore:
    """A DiskRowSet's in-memory REDO chains since its last delta flush, by rowid."""

    def __init__(self) -> None:
        self.chains: SortedDict = SortedDict()

    def __len__(self) -> int:
        return len(self.chains)

    def with_schema(self, mapper: RowMapper) -> DeltaMemStore:
        """A copy whose mutations hold another schema's positions (schema_change.py)."""
        copy = DeltaMemStore()
        copy.chains = SortedDict(
            {rowid: [mapper.mutation(m) for m in chain] for rowid, chain in self.chains.items()}
        )
        return copy

    def append(self, rowid: int, mutation: Mutation) -> None:
        self.chains.setdefault(rowid, []).append(mutation)

    def remove_provisional(self, rowid: int, txn: object) -> None:
        chain = self.chains.get(rowid)
        if not chain:
            return
        while chain and chain[-1].txn is txn:
            chain.pop()
        if not chain:
            del self.chains[rowid]

    def pop_provisional(self, rowid: int, txn: object) -> None:
        """Undo ``txn``'s newest uncommitted mutation of ``rowid`` (ROLLBACK TO SAVEPOINT)."""
        chain = self.chains.get(rowid)
        if chain and chain[-1].txn is txn:
            chain.pop()
            if not chain:
                del self.chains[rowid]

    def visible_records(
        self, schema: Schema, lo: int, hi: int, snapshot: int, reader: TxnState | None
    ) -> DeltaRecords:
        """The REDO records of rowids in [lo, hi) that ``reader`` sees at ``snapshot``, sorted by
        (rowid, order): a chain's committed prefix at or below the snapshot, or all of it when
        the reader wrote its newest entry (it wrote on top of the newest version)."""
        builder = records_builder(schema)
        order = DMS_TS_BASE
        for rowid in self.chains.irange(lo, hi, inclusive=(True, False)):
            chain: list[Mutation] = self.chains[rowid]
            if not chain:
                continue
            own = reader is not None and chain[-1].txn is reader
            for mutation in chain:
                ts = mutation.txn.commit_ts
                if not own and (ts is None or ts > snapshot):
                    break
                builder.add_mutation(rowid, order, mutation)
                order += 1
        return builder.build()

    def committed_records(self, schema: Schema, flushed: dict[int, list[Mutation]]) -> DeltaRecords:
        """REDO records, at their commit timestamps, of chains ``split_committed`` returned."""
        builder = records_builder(schema)
        for rowid, chain in flushed.items():
            for mutation in chain:
                ts = mutation.txn.commit_ts
                assert ts is not None, "split_committed hands back committed mutations only"
                builder.add_mutation(rowid, int(ts), mutation)
        return builder.build()

    def committed_prefixes(self, snapshot: Timestamp) -> dict[int, list[Mutation]]:
        """A copy of each chain's leading mutations committed at or before ``snapshot`` (what
        a flush writes while the chains stay readable)."""
        prefixes: dict[int, list[Mutation]] = {}
        for rowid, chain in self.chains.items():
            cut = 0
            while cut < len(chain):
                ts = chain[cut].txn.commit_ts
                if ts is None or ts > snapshot:
                    break
                cut += 1
            if cut:
                prefixes[rowid] = chain[:cut]
        return prefixes

    def drop_prefixes(self, prefixes: dict[int, list[Mutation]]) -> None:
        """Remove what ``committed_prefixes`` returned, now that a REDO file holds it."""
        for rowid, prefix in prefixes.items():
            chain = self.chains[rowid]
            assert chain[: len(prefix)] == prefix, "committed entries never change"
            # A new list, not the old one cut: a scan of a rowset a merging compaction
            # replaced may still hold the old list (rowset_compaction.py).
            if len(chain) > len(prefix):
                self.chains[rowid] = chain[len(prefix) :]
            else:
                del self.chains[rowid]

    def split_committed(self, snapshot: Timestamp) -> dict[int, list[Mutation]]:
        """Remove and return, per row, the leading mutations committed at or before ``snapshot``."""
        flushed: dict[int, list[Mutation]] = {}
        for rowid in list(self.chains):
            chain = self.chains[rowid]
            cut = 0
            while cut < len(chain):
                ts = chain[cut].txn.commit_ts
                if ts is None or ts > snapshot:
                    break
                cut += 1
            if cut:
                flushed[rowid] = chain[:cut]
                del chain[:cut]
                if not chain:
                    del self.chains[rowid]
        return flushed
