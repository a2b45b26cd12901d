"""Delta records, delta files (blocks, index, CRC32C) and applying them; the DeltaMemStore."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from storage.data_type import INT64, STRING, ColumnId
from storage.errors import DataCorrupted
from storage.mvcc import TxnState
from storage.row_change import Mutation, MutationKind
from storage.schema import ColumnSchema, Schema
from storage.tablet import delta_file, deltas
from storage.tablet.delta_apply import resolve_column, resolve_live
from storage.tablet.delta_file import DeltaFile, write_delta_file
from storage.tablet.delta_records import DEAD, KEEP, LIVE, DeltaRecords, records_builder
from storage.tablet.deltas import DeltaMemStore
from storage.timestamp import Timestamp

K, V = ColumnId(1), ColumnId(2)
SCHEMA = Schema(
    (ColumnSchema(K, "k", INT64, nullable=False), ColumnSchema(V, "v", STRING)),
    1,
)


def _records() -> DeltaRecords:
    b = records_builder(SCHEMA)
    b.add(3, 30, KEEP, [(1, "b")])
    b.add_row(3, 10, None)
    b.add_row(1, 20, (1, "a"))
    b.add(3, 2**62 + 1, KEEP, [(1, None)])
    return b.build()


def test_file_round_trip_keeps_records_sorted_with_ranges(tmp_path):
    info = write_delta_file(tmp_path / "d.delta", _records(), fsync=False)
    assert (info.records, info.min_ts, info.max_ts) == (4, 10, 2**62 + 1)
    assert (info.min_rowid, info.max_rowid) == (1, 3)
    delta = DeltaFile(tmp_path / "d.delta", SCHEMA)
    assert delta.live_records == 2
    everything = delta.all_records()
    assert everything.rowid.tolist() == [1, 3, 3, 3]
    assert everything.ts.tolist() == [20, 10, 30, 2**62 + 1]
    assert everything.live.tolist() == [LIVE, DEAD, KEEP, KEEP]
    v = everything.column(SCHEMA.column(V))
    assert v.is_set.tolist() == [True, False, True, True]
    assert v.values.to_pylist() == ["a", None, "b", None]
    assert len(delta.records_in(2, 3)) == 0
    assert delta.records_in(3, 4).ts.tolist() == [10, 30, 2**62 + 1]


def test_point_lookup_decodes_only_the_blocks_holding_the_row(tmp_path, monkeypatch):
    monkeypatch.setattr(delta_file, "BLOCK_RECORDS", 100)
    b = records_builder(SCHEMA)
    for rowid in range(1000):
        b.add(rowid, 5, KEEP, [(1, str(rowid))])
    write_delta_file(tmp_path / "d.delta", b.build(), fsync=False)
    delta = DeltaFile(tmp_path / "d.delta", SCHEMA)
    decoded = []
    original = delta._decode
    monkeypatch.setattr(delta, "_decode", lambda idx: decoded.append(idx) or original(idx))
    found = delta.records_in(457, 458)
    assert found.column(SCHEMA.column(V)).values.to_pylist() == ["457"]
    assert decoded == [4]


def test_a_flipped_byte_in_a_block_is_data_corrupted(tmp_path):
    path = tmp_path / "d.delta"
    write_delta_file(path, _records(), fsync=False)
    raw = bytearray(path.read_bytes())
    raw[20] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(DataCorrupted):
        DeltaFile(path, SCHEMA).all_records()


def test_resolve_takes_newest_redo_at_snapshot_else_oldest_undo_above_it():
    rowids = np.array([0, 1, 2], np.int64)
    base = pa.array(["b0", "b1", "b2"])
    redo_b = records_builder(SCHEMA)
    redo_b.add(0, 50, KEEP, [(1, "r50")])
    redo_b.add(0, 60, KEEP, [(1, "r60")])
    redo_b.add(1, 55, DEAD, [])
    redo = redo_b.build().sorted()
    undo_b = records_builder(SCHEMA)
    undo_b.add(2, 40, KEEP, [(1, "u40")])
    undo_b.add(2, 45, KEEP, [(1, "u45")])
    undo_b.add_row(2, 30, None)
    undo = undo_b.build().sorted()
    column = SCHEMA.column(V)
    live = resolve_live(rowids, np.ones(3, bool), redo, undo.where(undo.ts > 35))
    assert live.tolist() == [True, False, True]
    values = resolve_column(rowids, base, column, redo, undo.where(undo.ts > 35))
    assert values.to_pylist() == ["r60", "b1", "u40"]
    assert not resolve_live(rowids, np.ones(3, bool), redo, undo)[2]


def test_delta_memstore_flushes_committed_prefixes_and_removes_provisional_writes():
    committed = TxnState.committed_at(Timestamp(5))
    later = TxnState.committed_at(Timestamp(50))
    open_txn = TxnState()
    dms = DeltaMemStore(SCHEMA)
    dms.append(0, Mutation(MutationKind.UPDATE, committed, ((1, "x"),)))
    dms.append(0, Mutation(MutationKind.DELETE, later, None))
    dms.append(1, Mutation(MutationKind.DELETE, open_txn, None))
    visible = dms.visible_records(0, 2, 10, None)
    assert visible.rowid.tolist() == [0]
    own = dms.visible_records(0, 2, 10, open_txn)
    assert own.rowid.tolist() == [0, 1] and own.live.tolist() == [KEEP, DEAD]
    flushed = dms.committed(Timestamp(10))
    assert flushed is not None
    assert flushed.rowids.tolist() == [0] and flushed.counts.tolist() == [1]
    assert flushed.records.ts.tolist() == [5]
    assert flushed.records.column(SCHEMA.column(V)).values.to_pylist() == ["x"]
    dms.drop_flushed(flushed)
    assert [m.txn for m in dms.chains[0]] == [later]
    assert dms.visible_records(0, 2, 60, None).live.tolist() == [DEAD]
    dms.remove_provisional(1, open_txn)
    assert 1 not in dms.chains and len(dms) == 1
    assert dms.visible_records(0, 2, 60, open_txn).rowid.tolist() == [0]


def _chain_reference(
    chains: dict[int, list[Mutation]], snapshot: int, reader: TxnState | None
) -> list[tuple[int, int, object]]:
    """What a reader sees of each chain, walked row by row: (rowid, liveness, value of V)."""
    out = []
    for rowid in sorted(chains):
        chain = chains[rowid]
        own = reader is not None and bool(chain) and chain[-1].txn is reader
        for m in chain:
            ts = m.txn.commit_ts
            if not own and (ts is None or ts > snapshot):
                break
            if m.kind is MutationKind.UPDATE:
                out.append((rowid, KEEP, dict(m.change or ()).get(1)))
            elif m.kind is MutationKind.DELETE:
                out.append((rowid, DEAD, None))
            else:
                out.append((rowid, LIVE, (m.change or (None, None))[1]))
    return out


@pytest.mark.parametrize("few_chains", [-1, 10**9])
@pytest.mark.parametrize("seed", range(6))
def test_delta_memstore_columnar_reads_match_walking_the_chains(
    seed: int, few_chains: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Visibility resolved with numpy over the columnar log (committed prefixes, a reader's
    own writes on top of newer commits, rollbacks, flushed prefixes) equals the chain walk,
    and so does the walk short reads take."""
    monkeypatch.setattr(deltas, "_FEW_CHAINS", few_chains)
    rng = np.random.default_rng(seed)
    txns = [TxnState.committed_at(Timestamp(ts)) for ts in range(10, 200, 10)]
    dms = DeltaMemStore(SCHEMA)
    model: dict[int, list[Mutation]] = {}
    open_txn = TxnState()
    for step in range(400):
        rowid = int(rng.integers(0, 50))
        chain = model.setdefault(rowid, [])
        if chain and chain[-1].txn is open_txn:
            txn = open_txn  # a row another transaction holds takes only its writes
        else:
            committed = [t for t in txns if not chain or t.commit_ts >= chain[-1].txn.commit_ts]
            txn = open_txn if rng.random() < 0.15 else committed[int(rng.integers(len(committed)))]
        roll = rng.random()
        if roll < 0.6:
            m = Mutation(MutationKind.UPDATE, txn, ((1, f"u{step}"),))
        elif roll < 0.8:
            m = Mutation(MutationKind.DELETE, txn, None)
        else:
            m = Mutation(MutationKind.REINSERT, txn, (rowid, f"r{step}"))
        chain.append(m)
        dms.append(rowid, m)
        if rng.random() < 0.05:
            dms.remove_provisional(rowid, open_txn)
            while chain and chain[-1].txn is open_txn:
                chain.pop()
        if step % 97 == 96:
            flush = dms.committed(Timestamp(int(rng.integers(0, 200))))
            if flush is not None:
                dms.drop_flushed(flush)
                for r, count in zip(flush.rowids.tolist(), flush.counts.tolist(), strict=True):
                    del model[r][:count]
        for snapshot, reader in ((int(rng.integers(0, 210)), None), (100, open_txn)):
            got = dms.visible_records(0, 50, snapshot, reader)
            values = got.column(SCHEMA.column(V)).values.to_pylist()
            seen = list(zip(got.rowid.tolist(), got.live.tolist(), values, strict=True))
            live = {r: c for r, c in model.items() if c}
            assert seen == _chain_reference(live, snapshot, reader)
            assert (np.diff(got.ts) > 0)[np.diff(got.rowid) == 0].all()


@pytest.mark.parametrize("seed", range(4))
def test_delta_memstore_batch_appends_equal_appends_row_by_row(seed: int) -> None:
    """``append_batch`` leaves the chains, the columnar log and the flushed records exactly
    as appending the same mutations one by one does (rows new to the store, rows with
    chains, a rowid twice in one batch)."""
    rng = np.random.default_rng(seed)
    txns = [TxnState.committed_at(Timestamp(ts)) for ts in range(10, 100, 10)]
    one, batched = DeltaMemStore(SCHEMA), DeltaMemStore(SCHEMA)
    for step, txn in enumerate(txns):
        rowids = rng.integers(0, 40, int(rng.integers(1, 30))).tolist()
        if rng.random() < 0.5:
            kind, changes = MutationKind.DELETE, None
        else:
            kind = MutationKind.UPDATE
            changes = [((1, f"v{step}.{i}"),) for i in range(len(rowids))]
        for i, rowid in enumerate(rowids):
            one.append(rowid, Mutation(kind, txn, None if changes is None else changes[i]))
        batched.append_batch(rowids, kind, txn, changes)
    assert list(one.chains) == list(batched.chains)
    for rowid, chain in one.chains.items():
        other = batched.chains[rowid]
        assert [(m.kind, m.txn, m.change, m.seq) for m in chain] == [
            (m.kind, m.txn, m.change, m.seq) for m in other
        ]
    for snapshot in (0, 35, 1000):
        a, b = (
            one.visible_records(0, 40, snapshot, None),
            batched.visible_records(0, 40, snapshot, None),
        )
        assert a.rowid.tolist() == b.rowid.tolist() and a.live.tolist() == b.live.tolist()
        assert a.ts.tolist() == b.ts.tolist()
        assert (
            a.column(SCHEMA.column(V)).values.to_pylist()
            == b.column(SCHEMA.column(V)).values.to_pylist()
        )
    flushed_one, flushed_batched = one.committed(Timestamp(55)), batched.committed(Timestamp(55))
    assert flushed_one is not None and flushed_batched is not None
    assert flushed_one.seqs.tolist() == flushed_batched.seqs.tolist()
    assert flushed_one.records.live.tolist() == flushed_batched.records.live.tolist()
