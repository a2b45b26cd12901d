"""Property test: random writes, flushes, checkpoints and reopens against a plain Python model.

Every step is followed by a comparison of the current state and of every
earlier commit's snapshot (time travel through UNDO records, REDO delta files,
DeltaMemStores and MemRowSet chains) with what the model recorded.  Inserts
flagged ``seg`` go through InsertSegments (the bulk path, here from one row).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from storage.engine import StorageEngine
from storage.predicate import ColumnPredicate, ScanSpec
from tests.support.tablet_model import TID, K, ModelTablet, N, S, ops


def _read(engine: StorageEngine, snapshot: int | None = None, predicates=()) -> dict:
    txn = engine.begin(read_only=True)
    spec = ScanSpec((K, S, N), tuple(predicates), snapshot=snapshot)
    out = {}
    for batch in txn.scan(TID, spec):
        for row in batch.to_pylist():
            assert row["1"] not in out, "a key appears once"
            out[row["1"]] = (row["2"], row["3"])
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_every_snapshot_matches_the_model(sequence):
    with tempfile.TemporaryDirectory() as tmp, ModelTablet(Path(tmp)) as tablet:
        history: list[tuple[int, dict]] = []
        for op in sequence:
            before = dict(tablet.rows)
            commit_ts = tablet.step(op)
            model, engine = tablet.rows, tablet.engine
            if commit_ts is not None:
                history.append((int(commit_ts) - 1, before))
                history.append((int(commit_ts), dict(model)))
            assert _read(engine) == model
            for ts, expected in history:
                assert _read(engine, ts) == expected
            red = ColumnPredicate.equality(S, "red")
            assert _read(engine, None, [red]) == {k: v for k, v in model.items() if v[0] == "red"}
            small = ColumnPredicate.range(N, -1, 2)
            assert _read(engine, None, [small]) == {
                k: v for k, v in model.items() if v[1] is not None and -1 <= v[1] < 2
            }
