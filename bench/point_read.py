"""``python -m bench.point_read``: storage's side of a point read and a key write, in process.

No server, no SQL: a 100,000-row tablet (``k bigint`` key, ``v bigint``, ``s text``) in
one engine, and the microseconds of ``Transaction.read_keys`` of one random key with the
rows in the MemRowSet, in DiskRowSets, with DeltaMemStore updates, with REDO files and
at an old snapshot (time travel through UNDO records); a prefix read of an index-shaped
tablet (``read_range``, and ``keys_in_range`` as an index lookup reads it); an UPDATE and a DELETE by key (``Transaction.update`` /
``delete`` and commit, WAL without fsync).  Each figure is the process's CPU time per
call of a tight loop (less moved by other work than wall time; still compare runs taken
together).  ``--profile FILE`` writes cProfile statistics of the whole run.
"""

from __future__ import annotations

import argparse
import cProfile
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from storage.data_type import BINARY, INT64, STRING, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.key_encoding import encode_keys
from storage.options import StorageOptions
from storage.predicate import ColumnPredicate, ScanSpec
from storage.schema import ColumnSchema, Schema

K, V, S = ColumnId(1), ColumnId(2), ColumnId(3)
SCHEMA = Schema(
    (
        ColumnSchema(K, "k", INT64, nullable=False),
        ColumnSchema(V, "v", INT64),
        ColumnSchema(S, "s", STRING),
    ),
    1,
)
IKEY, SUFFIX, ID = ColumnId(0), ColumnId(1), ColumnId(2)
INDEX = Schema(
    (
        ColumnSchema(IKEY, "ikey", BINARY, nullable=False),
        ColumnSchema(SUFFIX, "suffix", BINARY, nullable=False),
        ColumnSchema(ID, "id", INT64),
    ),
    2,
)
"""An index tablet as catalog.indexes makes one: the indexed value encoded, then the row's key."""
BASE, MEM, IDX = TabletId(1), TabletId(2), TabletId(3)
OPTIONS = StorageOptions(fsync=False, flush_threshold_bytes=1 << 40, maintenance_threads=0)


def _rows(keys: list[int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(keys, pa.int64()), pa.array(keys, pa.int64()), pa.array([f"x{k}" for k in keys])],
        names=["1", "2", "3"],
    )


def _load(engine: StorageEngine, rows: int) -> None:
    engine.create_tablet(BASE, SCHEMA)
    engine.create_tablet(MEM, SCHEMA)
    engine.create_tablet(IDX, INDEX)
    txn = engine.begin()
    for start in range(1, rows + 1, 20_000):
        keys = list(range(start, min(start + 20_000, rows + 1)))
        txn.insert(BASE, _rows(keys))
        ikeys = encode_keys([pa.array([_code(k) for k in keys], pa.int64())], [INT64])
        suffixes = encode_keys([pa.array(keys, pa.int64())], [INT64])
        txn.insert(IDX, pa.RecordBatch.from_arrays(
            [pa.array(ikeys, pa.binary()), pa.array(suffixes, pa.binary()),
             pa.array(keys, pa.int64())], names=["0", "1", "2"]))  # fmt: skip
    txn.commit()
    engine.checkpoint()
    txn = engine.begin()
    txn.insert(MEM, _rows(list(range(1, 10_001))))
    txn.commit()


def _code(key: int) -> int:
    return (key * 7919) % 1_000_003


def _time(name: str, count: int, step: Callable[[int], None]) -> None:
    for i in range(count, count + 200):  # warm-up on inputs the timed loop does not use
        step(i)
    start = time.process_time()
    for i in range(count):
        step(i)
    elapsed = time.process_time() - start
    print(f"{name:34s} {elapsed / count * 1e6:8.1f} us", flush=True)


def _update_some(engine: StorageEngine, keys: list[int]) -> int:
    txn = engine.begin()
    batch = pa.RecordBatch.from_arrays(
        [pa.array(keys, pa.int64()), pa.array([-k for k in keys], pa.int64())], names=["1", "2"]
    )
    txn.update(BASE, batch)
    ts = txn.commit()
    assert ts is not None, "the update wrote rows"
    return int(ts)


def run(rows: int, count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        engine = StorageEngine.open(Path(tmp), OPTIONS)
        try:
            _load(engine, rows)
            rng = random.Random(7)
            picks = [rng.randint(1, rows) for _ in range(count + 200)]
            encoded = encode_keys([pa.array(picks, pa.int64())], [INT64])
            mem_encoded = encode_keys(
                [pa.array([p % 10_000 + 1 for p in picks], pa.int64())], [INT64]
            )
            reader = engine.begin(read_only=True)

            def read(
                tablet: TabletId, keys: list[bytes], snapshot: int | None = None
            ) -> Callable[[int], None]:
                def step(i: int) -> None:
                    batch = reader.read_keys(tablet, [keys[i]], (V, S), snapshot=snapshot)
                    assert batch.num_rows == 1

                return step

            _time("read_keys MemRowSet", count, read(MEM, mem_encoded))
            _time("read_keys DiskRowSet, no deltas", count, read(BASE, encoded))
            old = _update_some(engine, rng.sample(range(1, rows + 1), 2_000))
            reader.rollback()
            reader = engine.begin(read_only=True)
            _time("read_keys DRS, DMS holds 2% of rows", count, read(BASE, encoded))
            hot = encode_keys([pa.array(picks[:50], pa.int64())], [INT64]) * (count // 50 + 10)
            _update_some(engine, picks[:50])
            reader.rollback()
            reader = engine.begin(read_only=True)
            _time("read_keys DRS, the row in the DMS", count, read(BASE, hot))
            for rowset in engine.tablet(BASE).rowsets:
                rowset.flush_deltas(engine.mvcc.safe_time(), fsync=False)
            _time("read_keys DRS, REDO files", count, read(BASE, encoded))
            _time("read_keys DRS, time travel", count, read(BASE, encoded, snapshot=old - 1))
            reader.rollback()

            codes = encode_keys([pa.array([_code(p) for p in picks], pa.int64())], [INT64])

            def prefix(i: int) -> None:
                code = codes[i]
                spec = ScanSpec((ID,), (ColumnPredicate.range(IKEY, code, code + b"\0"),))
                batch = txn.read_range(IDX, spec, 64)
                assert batch is not None and batch.num_rows == 1

            def entries(i: int) -> None:
                code = codes[i]
                spec = ScanSpec((), (ColumnPredicate.range(IKEY, code, code + b"\0"),))
                found = txn.keys_in_range(IDX, spec.key_range(INDEX), 64)
                assert found is not None and len(found) == 1

            txn = engine.begin(read_only=True)
            _time("read_range index prefix", count, prefix)
            _time("keys_in_range index prefix", count, entries)
            txn.rollback()

            def update(i: int) -> None:
                txn = engine.begin()
                key = [picks[i]]
                before = txn.read_keys(BASE, [encoded[i]], (V,))
                batch = pa.RecordBatch.from_arrays(
                    [pa.array(key, pa.int64()), pa.array([before.column(0)[0].as_py() + 1], pa.int64())],
                    names=["1", "2"],
                )  # fmt: skip
                assert txn.update(BASE, batch) == 1
                txn.commit()

            _time("read + update by key + commit", count, update)

            def delete(i: int) -> None:
                txn = engine.begin()
                batch = pa.RecordBatch.from_arrays([pa.array([i + 1], pa.int64())], names=["1"])
                assert txn.delete(BASE, batch) == 1
                txn.commit()

            _time("delete by key + commit", min(count, rows - 201), delete)
        finally:
            engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.point_read", description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--count", type=int, default=5_000)
    parser.add_argument("--profile", type=Path, help="write cProfile statistics here")
    args = parser.parse_args()
    if args.profile is None:
        run(args.rows, args.count)
        return
    profiler = cProfile.Profile()
    profiler.runcall(run, args.rows, args.count)
    profiler.dump_stats(args.profile)


if __name__ == "__main__":
    main()
