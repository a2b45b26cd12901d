"""Writers, readers and checkpoints at once: no row is lost, duplicated or torn by a flush."""

from __future__ import annotations

import threading

import pyarrow as pa

from storage.data_type import INT64, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.options import StorageOptions
from storage.predicate import ScanSpec
from storage.schema import ColumnSchema, Schema

K, V = ColumnId(1), ColumnId(2)
SCHEMA = Schema((ColumnSchema(K, "k", INT64, nullable=False), ColumnSchema(V, "v", INT64)), 1)
TID = TabletId(1)
WRITERS, ROUNDS, ROWS = 3, 30, 50


def _batch(keys, value):
    return pa.RecordBatch.from_arrays(
        [pa.array(keys, pa.int64()), pa.array([value] * len(keys), pa.int64())], names=["1", "2"]
    )


def test_concurrent_writes_and_checkpoints(tmp_path):
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False, flush_threshold_bytes=20_000))
    engine.create_tablet(TID, SCHEMA)
    errors: list[BaseException] = []
    done = threading.Event()

    def writer(w: int) -> None:
        try:
            for r in range(ROUNDS):
                keys = [w * 1_000_000 + r * ROWS + i for i in range(ROWS)]
                txn = engine.begin()
                txn.insert(TID, _batch(keys, r))
                if r % 3 == 0:
                    txn.rollback()
                    continue
                txn.commit()
                txn = engine.begin()
                txn.update(TID, _batch(keys[:10], -r))
                txn.delete(
                    TID,
                    pa.RecordBatch.from_arrays([pa.array(keys[10:15], pa.int64())], names=["1"]),
                )
                txn.commit()
        except BaseException as exc:
            errors.append(exc)

    def checkpointer() -> None:
        try:
            while not done.is_set():
                engine.checkpoint()
                txn = engine.begin(read_only=True)
                seen = [r["1"] for b in txn.scan(TID, ScanSpec((K,))) for r in b.to_pylist()]
                assert len(seen) == len(set(seen))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    flusher = threading.Thread(target=checkpointer)
    flusher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    flusher.join()
    assert not errors, errors

    def expected() -> dict[int, int]:
        out = {}
        for w in range(WRITERS):
            for r in range(ROUNDS):
                if r % 3 == 0:
                    continue
                for i in range(ROWS):
                    if 10 <= i < 15:
                        continue
                    out[w * 1_000_000 + r * ROWS + i] = -r if i < 10 else r
        return out

    def actual(e: StorageEngine) -> dict[int, int]:
        txn = e.begin(read_only=True)
        return {r["1"]: r["2"] for b in txn.scan(TID, ScanSpec((K, V))) for r in b.to_pylist()}

    assert actual(engine) == expected()
    engine.close()
    reopened = StorageEngine.open(tmp_path, StorageOptions(fsync=False))
    assert actual(reopened) == expected()
    reopened.close()
