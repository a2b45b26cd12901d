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
from storage.tablet import delta_file
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


def test_delta_memstore_splits_committed_prefixes_and_removes_provisional_writes():
    committed = TxnState.committed_at(Timestamp(5))
    later = TxnState.committed_at(Timestamp(50))
    open_txn = TxnState()
    dms = DeltaMemStore()
    dms.append(0, Mutation(MutationKind.UPDATE, committed, ((1, "x"),)))
    dms.append(0, Mutation(MutationKind.DELETE, later, None))
    dms.append(1, Mutation(MutationKind.DELETE, open_txn, None))
    visible = dms.visible_records(SCHEMA, 0, 2, 10, None)
    assert visible.rowid.tolist() == [0]
    own = dms.visible_records(SCHEMA, 0, 2, 10, open_txn)
    assert own.rowid.tolist() == [0, 1] and own.live.tolist() == [KEEP, DEAD]
    flushed = dms.split_committed(Timestamp(10))
    assert list(flushed) == [0] and len(flushed[0]) == 1
    records = dms.committed_records(SCHEMA, flushed)
    assert records.ts.tolist() == [5]
    assert records.column(SCHEMA.column(V)).values.to_pylist() == ["x"]
    assert [m.txn for m in dms.chains[0]] == [later]
    dms.remove_provisional(1, open_txn)
    assert 1 not in dms.chains and len(dms) == 1
