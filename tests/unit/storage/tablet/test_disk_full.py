"""A full disk (ENOSPC) part-way through a flush or a compaction fails the op and nothing else.

Each op is run with the disk "filling up" after a growing number of bytes, so the failure
lands in each of its files in turn (column files, key index, delta files, the metadata).
After each failure the tablet reads as before (current and historical reads), takes
writes, runs the op again once space is back, and reopens with the same rows.
"""

from __future__ import annotations

import errno
import os

import pytest

from storage.engine import StorageEngine
from tests.unit.storage.tablet.test_delta_compaction import OPTIONS, SCHEMA, TID, _read, _write


class _Disk:
    """``os.write`` that fails with ENOSPC once ``budget`` bytes have been written."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.budget: int | None = None
        self.written = 0
        real = os.write

        def write(fd: int, data: object) -> int:
            if self.budget is not None:
                if self.written >= self.budget:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                view = memoryview(data)[: max(1, self.budget - self.written)]  # type: ignore[arg-type]
                done = real(fd, view)
                self.written += done
                return done
            return real(fd, data)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "write", write)

    def fill_after(self, budget: int | None) -> None:
        self.budget, self.written = budget, 0


def _setup(engine):
    keys = list(range(3000))
    history = [_write(engine, "insert", keys, keys, [f"s{k}" for k in keys])]
    engine.checkpoint()
    history.append(_write(engine, "insert", list(range(3000, 3500)), [1] * 500, ["b"] * 500))
    engine.checkpoint()
    history.append(_write(engine, "update_v", list(range(0, 3000, 3)), [-1] * 1000))
    engine.checkpoint()
    history.append(_write(engine, "delete", list(range(0, 3000, 7))))
    engine.checkpoint()
    history.append(_write(engine, "update_v", list(range(1, 3500, 5)), [-2] * 700))
    history.append(_write(engine, "insert", list(range(5000, 5100)), [5] * 100, ["m"] * 100))
    return history


def _ops(engine):
    tablet = engine.tablet(TID)

    def flush():
        engine.checkpoint()

    def minor():
        assert tablet.compact_deltas(tablet.rowsets[0].rowset_id, major=False, history_cutoff=0)

    def major():
        assert tablet.compact_deltas(tablet.rowsets[0].rowset_id, major=True, history_cutoff=0)

    def merge():
        snapshot = engine.mvcc.safe_time()
        ids = [r.rowset_id for r in tablet.rowsets]
        assert tablet.compact_rowsets(ids, snapshot, 0)

    return {"flush": flush, "minor": minor, "major": major, "merge": merge}


@pytest.mark.parametrize("op", ["flush", "minor", "major", "merge"])
def test_enospc_during_an_op_fails_it_cleanly_and_the_tablet_stays_readable(
    tmp_path, monkeypatch, op
):
    engine = StorageEngine.open(tmp_path, OPTIONS)
    engine.create_tablet(TID, SCHEMA)
    history = _setup(engine)
    if op != "flush":
        engine.checkpoint()  # the rowsets' REDO files are what the op reads
    disk = _Disk(monkeypatch)
    failures = 0
    for budget in [0, 100, 2_000, 10_000, 30_000, 60_000, 120_000, 250_000, None]:
        expected = _read(engine)
        past = [(ts, _read(engine, ts)) for ts in history]
        disk.fill_after(budget)
        try:
            _ops(engine)[op]()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
            failures += 1
        else:
            break
        finally:
            disk.fill_after(None)
        assert _read(engine) == expected
        assert all(_read(engine, ts) == rows for ts, rows in past)
        # Writers carry on after a failed op; the next attempt must carry their changes too.
        history.append(_write(engine, "update_v", [budget or 1, 3001], [budget or 7, 9]))
    else:
        raise AssertionError("the op never succeeded with space back")
    assert failures >= 3
    expected = _read(engine)
    past = [(ts, _read(engine, ts)) for ts in history]
    engine.close()
    engine = StorageEngine.open(tmp_path, OPTIONS)
    assert _read(engine) == expected
    assert all(_read(engine, ts) == rows for ts, rows in past)
    assert not list((tmp_path / "tablets" / str(TID)).rglob("*.tmp"))
    engine.close()
