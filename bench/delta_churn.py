"""Issue 14's repro at the storage engine: N rows, CHECKPOINT, then R rounds of 10% updates.

``python -m bench.delta_churn ROWS ROUNDS [wait]``: each round updates the rows with
``k % 10 == round % 10`` and checkpoints; with ``wait``, it then waits for the maintenance
manager to go idle.  After each round it prints the best of 3 ``sum(v)`` scans and of 5
point selects, the same again as process CPU time (steadier than wall time on a shared
machine; after ``wait`` nothing else runs in the process), the rowsets, REDO files and
bytes on disk.  Not a bench workload (no PostgreSQL comparison): a quick check of how
changed data reads.
"""

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.data_type import INT64, STRING, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.options import StorageOptions
from storage.predicate import ColumnPredicate, ScanSpec
from storage.schema import ColumnSchema, Schema

N = int(sys.argv[1])
ROUNDS = int(sys.argv[2])
K, V, S = ColumnId(1), ColumnId(2), ColumnId(3)
schema = Schema(
    (
        ColumnSchema(K, "k", INT64, nullable=False),
        ColumnSchema(V, "v", INT64),
        ColumnSchema(S, "s", STRING),
    ),
    1,
)
TID = TabletId(1)


def best(f, n=3, clock=time.perf_counter):
    ts = []
    for _ in range(n):
        t = clock()
        r = f()
        ts.append(clock() - t)
    return min(ts), r


with tempfile.TemporaryDirectory(dir="/tmp") as d:
    eng = StorageEngine.open(
        Path(d), StorageOptions(fsync=False, maintenance_polling_interval_ms=100)
    )
    eng.create_tablet(TID, schema)
    ks = np.arange(N, dtype=np.int64)
    for lo in range(0, N, 100_000):
        tx = eng.begin()
        kk = ks[lo : lo + 100_000]
        tx.insert(
            TID,
            pa.RecordBatch.from_arrays(
                [pa.array(kk), pa.array(kk * 2), pa.array([f"s{i}" for i in kk])],
                names=["1", "2", "3"],
            ),
        )
        tx.commit()
    eng.checkpoint()

    def agg():
        tx = eng.begin(read_only=True)
        s = sum(pc.sum(b.column(0)).as_py() or 0 for b in tx.scan(TID, ScanSpec((V,), ())))
        tx.rollback()
        return s

    def point():
        tx = eng.begin(read_only=True)
        r = [
            b.to_pylist()
            for b in tx.scan(TID, ScanSpec((K, V, S), (ColumnPredicate.equality(K, N // 3),)))
        ]
        tx.rollback()
        return r

    def report(r):
        a, s = best(agg)
        p, _ = best(point, 5)
        a_cpu, _ = best(agg, 5, time.process_time)
        p_cpu, _ = best(point, 20, time.process_time)
        st = eng.tablet_stats(TID)
        print(
            f"round {r}: sum={s} agg {a * 1000:.1f} ms point {p * 1000:.2f} ms "
            f"(CPU: agg {a_cpu * 1000:.1f} ms point {p_cpu * 1000:.2f} ms) rowsets {len(st['rowsets'])} "
            f"redo {sum(x['redo_delta_files'] for x in st['rowsets'])} bytes {st['bytes_on_disk']}",
            flush=True,
        )

    report(0)
    for r in range(ROUNDS):
        kk = ks[ks % 10 == r % 10]
        tx = eng.begin()
        t = time.perf_counter()
        tx.update(
            TID,
            pa.RecordBatch.from_arrays([pa.array(kk), pa.array(kk * 2 + r + 1)], names=["1", "2"]),
        )
        tx.commit()
        eng.checkpoint()
        if len(sys.argv) > 3:
            eng.maintenance.wait_idle(120)
        print(f"  update+checkpoint {time.perf_counter() - t:.2f} s")
        report(r + 1)
    eng.close()
