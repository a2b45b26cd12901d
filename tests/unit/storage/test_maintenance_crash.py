"""kill -9 during flushes and compactions: every committed round is back, and nothing else.

A child process applies numbered rounds of inserts, updates and deletes, each in one
transaction that also records the round number in key -1, and after each round runs one
maintenance op (flush, minor, major or merging compaction, UNDO GC) in a loop.  The parent
kills it at random moments, reopens the database and checks it holds exactly the model
state of the round it recorded.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa

from storage.data_type import INT64, STRING, ColumnId, TabletId
from storage.engine import StorageEngine
from storage.options import StorageOptions
from storage.predicate import ScanSpec
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
TID = TabletId(1)
OPTIONS = StorageOptions(fsync=True, maintenance_threads=0, history_max_age_s=0.5)


def apply_round(model: dict[int, tuple[int, str]], r: int) -> tuple[list, list, list]:
    """Round ``r``'s inserts, updates and deletes, applied to ``model``."""
    inserts = [k for k in range(r * 20, r * 20 + 20) if k not in model]
    updates = [k for k in model if k % 5 == r % 5]
    deletes = [k for k in model if k % 9 == r % 9 and k not in updates][:4]
    for k in inserts:
        model[k] = (r, f"r{r}")
    for k in updates:
        model[k] = (model[k][0] + 1, model[k][1])
    for k in deletes:
        del model[k]
    return inserts, [(k, model[k][0]) for k in updates], deletes


def model_at(rounds: int) -> dict[int, tuple[int, str]]:
    model: dict[int, tuple[int, str]] = {}
    for r in range(1, rounds + 1):
        apply_round(model, r)
    return model


def read(engine: StorageEngine) -> dict[int, tuple[int, str]]:
    txn = engine.begin(read_only=True)
    rows = {
        r["1"]: (r["2"], r["3"]) for b in txn.scan(TID, ScanSpec((K, V, S))) for r in b.to_pylist()
    }
    txn.rollback()
    return rows


def child(data_dir: str) -> None:
    engine = StorageEngine.open(Path(data_dir), OPTIONS)
    if not engine.has_tablet(TID):
        engine.create_tablet(TID, SCHEMA)
    rows = read(engine)
    r = rows.pop(-1, (0, ""))[0]
    model = model_at(r)
    tablet = engine.tablet(TID)
    while True:
        r += 1
        inserts, updates, deletes = apply_round(model, r)
        txn = engine.begin()
        if inserts:
            ks = pa.array(inserts, pa.int64())
            txn.insert(TID, pa.RecordBatch.from_arrays(
                [ks, pa.array([r] * len(inserts), pa.int64()), pa.array([f"r{r}"] * len(inserts))],
                names=["1", "2", "3"]))  # fmt: skip
        if updates:
            txn.update(TID, pa.RecordBatch.from_arrays(
                [pa.array([k for k, _ in updates], pa.int64()), pa.array([v for _, v in updates])],
                names=["1", "2"]))  # fmt: skip
        if deletes:
            txn.delete(
                TID, pa.RecordBatch.from_arrays([pa.array(deletes, pa.int64())], names=["1"])
            )
        marker = pa.RecordBatch.from_arrays(
            [pa.array([-1], pa.int64()), pa.array([r], pa.int64()), pa.array(["round"])],
            names=["1", "2", "3"],
        )
        if r == 1:
            txn.insert(TID, marker)
        else:
            txn.update(TID, marker)
        txn.commit()
        Path(f"{data_dir}-ready").touch()
        snapshot = engine.mvcc.safe_time()
        cutoff = engine.history_cutoff(snapshot)
        step = r % 5
        if step == 0:
            engine.checkpoint()
        elif step in (1, 2) and tablet.rowsets:
            rowset = max(tablet.rowsets, key=lambda rs: len(rs.redo))
            tablet.compact_deltas(rowset.rowset_id, major=step == 2, history_cutoff=cutoff)
        elif step == 3 and len(tablet.rowsets) > 1:
            ids = [rs.rowset_id for rs in tablet.rowsets]
            tablet.compact_rowsets(ids, snapshot, cutoff)
        else:
            tablet.gc_undo(cutoff)


def test_kill9_during_maintenance_ops_loses_no_committed_round(tmp_path):
    rng = random.Random(14)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    code = f"import sys; from tests.unit.storage.test_maintenance_crash import child; child({str(tmp_path)!r})"
    seen_rounds = []
    for _ in range(4):
        proc = subprocess.Popen([sys.executable, "-c", code], env=env)
        # Start-up (imports, replay) takes seconds on a busy machine: kill it at a random
        # moment of its rounds, not while it is still opening the database.
        started = time.monotonic()
        ready = Path(f"{tmp_path}-ready")
        ready.unlink(missing_ok=True)
        while not ready.exists() and proc.poll() is None:
            assert time.monotonic() - started < 120, "the child never committed a round"
            time.sleep(0.05)
        time.sleep(rng.uniform(1.5, 3.0))
        assert proc.poll() is None, "the child runs until killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        engine = StorageEngine.open(tmp_path, StorageOptions(fsync=True, maintenance_threads=0))
        rows = read(engine)
        engine.close()
        round_ = rows.pop(-1)[0]
        assert rows == model_at(round_)
        seen_rounds.append(round_)
    assert seen_rounds[-1] > seen_rounds[0] > 5, seen_rounds
