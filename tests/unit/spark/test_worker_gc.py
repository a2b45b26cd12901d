"""spark.worker_gc: a reused Spark worker freezes what it holds once; any other process never."""

from __future__ import annotations

import gc

import pytest

from spark import worker_gc


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(worker_gc, "_state", {"frozen": False})
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_a_reused_worker_freezes_its_objects_once(fresh, monkeypatch):
    monkeypatch.setenv("SPARK_REUSE_WORKER", "1")
    worker_gc.freeze_imports()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    garbage = [[] for _ in range(1000)]
    worker_gc.freeze_imports()
    assert gc.get_freeze_count() == frozen  # the second call froze nothing more
    del garbage


def test_a_process_that_is_not_a_reused_worker_freezes_nothing(fresh, monkeypatch):
    monkeypatch.delenv("SPARK_REUSE_WORKER", raising=False)
    worker_gc.freeze_imports()
    assert gc.get_freeze_count() == 0
