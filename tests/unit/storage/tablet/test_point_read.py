"""The point read (``Tablet.read_keys``, and ``read_range`` of a short key range) against a full scan: same rows at every snapshot.

Random writes, flushes, delta and rowset compactions and reopens (the flush model's
operations) put a key's versions in the MemRowSet, DeltaMemStores, REDO and UNDO files
and several rowsets (deleted in one, reinserted in a later one); after each step the
point read of every key subset must equal the scan's rows for those keys, now and at
every earlier commit.
"""

from __future__ import annotations

import random
import tempfile
import threading
from pathlib import Path

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage.data_type import BINARY, INT32, INT64, STRING, ColumnId
from storage.engine import StorageEngine
from storage.errors import SnapshotTooOld
from storage.key_encoding import encode_keys
from storage.options import StorageOptions
from storage.predicate import ColumnPredicate, KeyRange, ScanSpec
from storage.schema import ColumnSchema, Schema
from storage.transaction import Transaction
from tests.support.tablet_model import OPTIONS, SCHEMA, TID, ModelTablet, ops

K, S, N = ColumnId(1), ColumnId(2), ColumnId(3)
ALL_KEYS = list(range(13))


def _encoded(keys: list[int]) -> list[bytes]:
    return encode_keys([pa.array(keys, pa.int32())], [INT32])


def _by_scan(txn: Transaction, keys: list[int], snapshot: int | None) -> dict:
    spec = ScanSpec((K, S, N), (), snapshot=snapshot)
    rows = [r for b in txn.scan(TID, spec) for r in b.to_pylist()]
    return {r["1"]: (r["2"], r["3"]) for r in rows if r["1"] in keys}


def _by_point_read(txn: Transaction, keys: list[int], snapshot: int | None) -> dict:
    batch = txn.read_keys(TID, _encoded(keys), (K, S, N), snapshot=snapshot)
    rows = batch.to_pylist()
    out = {r["1"]: (r["2"], r["3"]) for r in rows}
    assert len(out) == len(rows), "a key appears once"
    narrow = txn.read_keys(TID, _encoded(keys), (N,), snapshot=snapshot)
    assert sorted(narrow.column(0).to_pylist(), key=repr) == sorted(
        (v[1] for v in out.values()), key=repr
    )
    assert txn.read_keys(TID, _encoded(keys), (), snapshot=snapshot).num_rows == len(out)
    return out


def _agree(engine: StorageEngine, keys: list[int], snapshots: list[int | None]) -> None:
    txn = engine.begin(read_only=True)
    for snapshot in snapshots:
        scanned = _by_scan(txn, ALL_KEYS, snapshot)
        assert _by_point_read(txn, keys, snapshot) == {k: scanned[k] for k in keys if k in scanned}
        whole = txn.keys_in_range(TID, KeyRange(), 64, snapshot=snapshot)
        assert whole is not None and sorted(whole) == _encoded(sorted(scanned))
        lower, upper = _encoded([3, 9])
        middle = txn.keys_in_range(TID, KeyRange(lower, upper), 64, snapshot=snapshot)
        assert middle is not None and sorted(middle) == _encoded(
            [k for k in sorted(scanned) if 3 <= k < 9]
        )
    txn.rollback()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops, st.lists(st.sampled_from(ALL_KEYS), max_size=5))
def test_point_read_matches_a_scan_at_every_snapshot(sequence, some_keys):
    with tempfile.TemporaryDirectory() as tmp, ModelTablet(Path(tmp)) as tablet:
        history: list[int | None] = [None]
        for op in sequence:
            commit_ts = tablet.step(op)
            if commit_ts is not None:
                history += [int(commit_ts) - 1, int(commit_ts)]
            _agree(tablet.engine, ALL_KEYS, history)
            _agree(tablet.engine, some_keys, history[:1] + history[-2:])


def _rows(keys: list[int], s: str, n: int | None = None) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [
            pa.array(keys, pa.int32()),
            pa.array([s] * len(keys), pa.string()),
            pa.array([n] * len(keys), pa.int64()),
        ],
        names=["1", "2", "3"],
    )


def test_own_uncommitted_writes_and_other_readers(tmp_path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, SCHEMA)
    try:
        setup = engine.begin()
        setup.insert(TID, _rows(list(range(10)), "old", 1))
        setup.commit()
        engine.checkpoint()  # the rows are in a DiskRowSet now
        writer = engine.begin()
        writer.update(TID, _rows([1, 2], "mine", 2))
        writer.delete(TID, _rows([3], "", None).select(["1"]))
        writer.insert(TID, _rows([20], "new", 3))
        other = engine.begin(read_only=True)
        keys = [1, 2, 3, 4, 20, 99]
        for txn in (writer, other):
            assert _by_point_read(txn, keys, None) == _by_scan(txn, keys, None)
        assert _by_point_read(writer, keys, None) == {
            1: ("mine", 2), 2: ("mine", 2), 4: ("old", 1), 20: ("new", 3)
        }  # fmt: skip
        assert _by_point_read(other, keys, None) == {k: ("old", 1) for k in (1, 2, 3, 4)}
        writer.commit()
        other.rollback()
    finally:
        engine.close()


def test_columns_added_later_read_their_default(tmp_path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, SCHEMA)
    try:
        txn = engine.begin()
        txn.insert(TID, _rows([1, 2], "a", 1))
        txn.commit()
        engine.checkpoint()
        wider = Schema((*SCHEMA.columns, ColumnSchema(ColumnId(4), "d", INT64)), 1)
        engine.tablet(TID).alter_schema(wider)
        reader = engine.begin(read_only=True)
        batch = reader.read_keys(TID, _encoded([2]), (ColumnId(4), K))
        scanned = [b for b in reader.scan(TID, ScanSpec((ColumnId(4), K), ())) if b.num_rows]
        assert batch.to_pylist() == [r for b in scanned for r in b.to_pylist() if r["1"] == 2]
        reader.rollback()
    finally:
        engine.close()


def test_a_refused_time_travel_is_snapshot_too_old(tmp_path):
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False, history_max_age_s=0))
    engine.create_tablet(TID, SCHEMA)
    try:
        txn = engine.begin()
        txn.insert(TID, _rows([1], "a", 1))
        txn.commit()
        reader = engine.begin(read_only=True)
        try:
            reader.read_keys(TID, _encoded([1]), (K,), snapshot=1)
        except SnapshotTooOld as exc:
            assert exc.sqlstate == "72000"
        else:
            raise AssertionError("a refused snapshot must raise SnapshotTooOld")
        reader.rollback()
    finally:
        engine.close()


B, V = ColumnId(1), ColumnId(2)
BYTES = Schema(
    (ColumnSchema(B, "b", BINARY, nullable=False), ColumnSchema(V, "v", INT64)), 1
)  # a binary first key column, as a secondary index's tablet has


def _bytes_rows(keys: list[bytes], v: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(keys, pa.binary()), pa.array([v] * len(keys), pa.int64())], names=["1", "2"]
    )


def _range_both_ways(txn: Transaction, lower: bytes, upper: bytes, snapshot: int | None):
    spec = ScanSpec((V, B), (ColumnPredicate.range(B, lower, upper),), snapshot=snapshot)
    short = txn.read_range(TID, spec, 64)
    scanned = [r for b in txn.scan(TID, spec) for r in b.to_pylist()]
    keys = txn.keys_in_range(TID, KeyRange(lower, upper), 64, snapshot=snapshot)
    assert (keys is None) == (short is None)
    if keys is not None:
        assert sorted(keys) == sorted(r["1"] for r in scanned), "a binary last key is stored raw"
    return (None if short is None else sorted(short.to_pylist(), key=repr)), sorted(
        scanned, key=repr
    )


def test_short_key_range_reads_as_a_scan(tmp_path):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, BYTES)
    keys = [bytes([a, b]) for a in range(1, 6) for b in (0, 1, 7)]
    stamps: list[int | None] = [None]
    try:
        txn = engine.begin()
        txn.insert(TID, _bytes_rows(keys, 1))
        stamps.append(int(txn.commit()))
        engine.checkpoint()
        txn = engine.begin()
        txn.update(TID, _bytes_rows(keys[2:6], 2))
        txn.delete(TID, _bytes_rows(keys[6:8], 0).select(["1"]))
        stamps.append(int(txn.commit()))
        engine.checkpoint()  # the update and delete now in REDO files
        txn = engine.begin()
        txn.insert(TID, _bytes_rows(keys[6:7] + [b"\x03\x05"], 3))  # a reinsert, and new
        stamps.append(int(txn.commit()))
        writer = engine.begin()
        writer.update(TID, _bytes_rows(keys[:1], 9))
        writer.delete(TID, _bytes_rows(keys[3:4], 0).select(["1"]))
        ranges = [(b"\x01", b"\x02"), (b"\x02\x01", b"\x03\x06"), (b"\x00", b"\x09"),
                  (b"\x07", b"\x08")]  # fmt: skip
        for reader in (writer, engine.begin(read_only=True)):
            for lower, upper in ranges:
                for snapshot in stamps:
                    short, scanned = _range_both_ways(reader, lower, upper, snapshot)
                    assert short == scanned
        short, _ = _range_both_ways(writer, b"\x00", b"\x09", None)
        assert short is not None and len(short) == len(keys) - 2 + 2 - 1  # own delete seen
        writer.rollback()
        assert (
            engine.begin(read_only=True).read_range(
                TID, ScanSpec((V,), (ColumnPredicate.range(B, b"\x00", b"\x09"),)), 4
            )
            is None
        )  # more rows than asked for: the caller scans
    finally:
        engine.close()


WIDE = Schema(
    (
        ColumnSchema(K, "k", INT64, nullable=False),
        ColumnSchema(S, "s", STRING),
        ColumnSchema(N, "n", INT64),
    ),
    1,
)


def _wide_rows(keys: list[int], s: str | None, n: int | None) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [
            pa.array(keys, pa.int64()),
            pa.array([s] * len(keys), pa.string()),
            pa.array([n] * len(keys), pa.int64()),
        ],
        names=["1", "2", "3"],
    )


def _wide_encoded(keys: list[int]) -> list[bytes]:
    return encode_keys([pa.array(keys, pa.int64())], [INT64])


def _wide_agree(txn: Transaction, keys: list[int], snapshot: int | None) -> dict:
    batch = txn.read_keys(TID, _wide_encoded(keys), (N, S, K), snapshot=snapshot)
    got = {r["1"]: (r["2"], r["3"]) for r in batch.to_pylist()}
    assert len(got) == batch.num_rows
    spec = ScanSpec((K, S, N), (), snapshot=snapshot)
    wanted = {r["1"]: (r["2"], r["3"]) for b in txn.scan(TID, spec) for r in b.to_pylist()}
    assert got == {k: v for k, v in wanted.items() if k in keys}
    return got


def test_row_by_row_reads_match_a_scan_across_delta_stores(tmp_path):
    """Rows read one by one (base slices, DeltaMemStore chains) and rows a delta file
    changes (the vectorised read) in one read, now and at every earlier commit: keys whose
    encodings end in zero bytes, absent keys the bloom filter lets through, deletes and
    reinserts in REDO files and in the DeltaMemStore, a reader's own writes."""
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, WIDE)
    keys = list(range(0, 6000, 2))  # 256, 512, 65536 ... encode with trailing zero bytes
    stamps: list[int | None] = [None]
    try:
        txn = engine.begin()
        txn.insert(TID, _wide_rows(keys, "base", 1))
        stamps.append(int(txn.commit()))
        engine.checkpoint()
        txn = engine.begin()
        txn.update(TID, _wide_rows([256, 1000, 4000], "redo", 2))
        txn.delete(TID, _wide_rows([512, 2048], None, None).select(["1"]))
        stamps.append(int(txn.commit()))
        engine.checkpoint()  # those changes now in REDO files
        txn = engine.begin()
        txn.insert(TID, _wide_rows([512], "reinserted", 3))
        txn.update(TID, _wide_rows([1024, 4000], None, 4))
        txn.delete(TID, _wide_rows([3000], None, None).select(["1"]))
        stamps.append(int(txn.commit()))
        txn = engine.begin()
        txn.update(TID, _wide_rows([1024], "again", None))
        stamps.append(int(txn.commit()))
        reader = engine.begin(read_only=True)
        absent = list(range(1, 6000, 2))
        # Absent keys inside the rowset's range: every one the bloom filter passes is
        # looked up in the key index and must still be absent.
        for start in range(0, len(absent), 8):
            assert _wide_agree(reader, absent[start : start + 8], None) == {}
        groups = [[0], [256], [512], [1024], [2048], [3000], [4000], [5998],
                  [0, 256, 1000, 1024, 3000], [2, 512, 2048, 4000, 4002, 65536]]  # fmt: skip
        expected_now = {0: ("base", 1), 256: ("redo", 2), 512: ("reinserted", 3),
                        1024: ("again", None), 4000: (None, 4)}  # fmt: skip
        for group in groups:
            for snapshot in stamps:
                _wide_agree(reader, group, snapshot)
            got = _wide_agree(reader, group, None)
            assert {k: v for k, v in got.items() if k in expected_now} == {
                k: v for k, v in expected_now.items() if k in group
            }
        assert _wide_agree(reader, [512], stamps[2]) == {}  # deleted then
        assert _wide_agree(reader, [256], stamps[1]) == {256: ("base", 1)}  # before the update
        reader.rollback()
        writer = engine.begin()
        writer.update(TID, _wide_rows([0, 1024], "mine", 5))
        writer.delete(TID, _wide_rows([4000], None, None).select(["1"]))
        writer.insert(TID, _wide_rows([3000], "back", 6))
        other = engine.begin(read_only=True)
        group = [0, 1024, 3000, 4000]
        assert _wide_agree(writer, group, None) == {
            0: ("mine", 5), 1024: ("mine", 5), 3000: ("back", 6)
        }  # fmt: skip
        assert _wide_agree(other, group, None) == {
            0: ("base", 1), 1024: ("again", None), 4000: (None, 4)
        }  # fmt: skip
        writer.rollback()
        other.rollback()
    finally:
        engine.close()


def test_point_reads_racing_flushes_and_compactions(tmp_path):
    """Point reads on another thread while the tablet flushes its MemRowSet and
    DeltaMemStores and compacts rowsets and deltas: every read sees every committed row
    with its committed values (rowsets swapped mid-read included)."""
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, WIDE)
    expected: dict[int, tuple[str, int]] = {}
    failures: list[BaseException] = []
    done = threading.Event()
    try:
        for round_ in range(3):
            txn = engine.begin()
            batch_keys = list(range(round_, 3000, 3))
            txn.insert(TID, _wide_rows(batch_keys, f"r{round_}", round_))
            txn.commit()
            expected.update({k: (f"r{round_}", round_) for k in batch_keys})
            engine.checkpoint()
        txn = engine.begin()
        changed = list(range(0, 3000, 7))
        txn.update(TID, _wide_rows(changed, "u", 99))
        txn.commit()
        expected.update({k: ("u", 99) for k in changed})

        def read() -> None:
            rng = random.Random(3)
            try:
                while not done.is_set():
                    group = rng.sample(range(3000), rng.choice([1, 2, 5, 20]))
                    reader = engine.begin(read_only=True)
                    batch = reader.read_keys(TID, _wide_encoded(group), (K, S, N))
                    reader.rollback()
                    got = {r["1"]: (r["2"], r["3"]) for r in batch.to_pylist()}
                    assert got == {k: expected[k] for k in group}, group
            except BaseException as exc:  # noqa: BLE001  # reported by the main thread
                failures.append(exc)

        thread = threading.Thread(target=read)
        thread.start()
        try:
            tablet = engine.tablet(TID)
            for _ in range(3):
                snapshot = engine.mvcc.safe_time()
                cutoff = engine.history_cutoff(snapshot)
                for rowset in list(tablet.rowsets):
                    tablet.compact_deltas(rowset.rowset_id, major=False, history_cutoff=cutoff)
                for rowset in list(tablet.rowsets):
                    tablet.compact_deltas(rowset.rowset_id, major=True, history_cutoff=cutoff)
                ids = [r.rowset_id for r in tablet.rowsets]
                tablet.compact_rowsets(ids, snapshot, cutoff)
                engine.checkpoint()
        finally:
            done.set()
            thread.join()
        assert not failures, failures[0]
    finally:
        engine.close()


def test_a_hot_row_long_chain_read_at_every_commit(tmp_path):
    """A row updated many times (a counter: its DeltaMemStore chain read newest first)
    reads as a scan at every commit, with columns set by different updates, a delete and
    a reinsert in the chain, and an open writer's newest entry on top."""
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, WIDE)
    stamps: list[int | None] = [None]
    try:
        txn = engine.begin()
        txn.insert(TID, _wide_rows([1, 2, 3], "base", 0))
        stamps.append(int(txn.commit()))
        engine.checkpoint()
        for i in range(1, 40):
            txn = engine.begin()
            if i == 20:
                txn.delete(TID, _wide_rows([2], None, None).select(["1"]))
            elif i == 21:
                txn.insert(TID, _wide_rows([2], "back", 21))
            elif i % 3:
                txn.update(TID, _wide_rows([2], None, i).select(["1", "3"]))
            else:
                txn.update(TID, _wide_rows([2], f"s{i}", None).select(["1", "2"]))
            stamps.append(int(txn.commit()))
        writer = engine.begin()
        writer.update(TID, _wide_rows([2], "open", None).select(["1", "2"]))
        reader = engine.begin(read_only=True)
        for snapshot in stamps:
            for txn in (reader, writer):
                _wide_agree(txn, [2], snapshot)
                _wide_agree(txn, [1, 2, 3], snapshot)
        assert _wide_agree(writer, [2], None) == {2: ("open", 38)}
        assert _wide_agree(reader, [2], None) == {2: ("s39", 38)}
        assert _wide_agree(reader, [2], stamps[20]) == {2: ("s18", 19)}
        assert _wide_agree(reader, [2], stamps[21]) == {}  # the delete (i = 20)
        assert _wide_agree(reader, [2], stamps[22]) == {2: ("back", 21)}
        writer.rollback()
        reader.rollback()
    finally:
        engine.close()
