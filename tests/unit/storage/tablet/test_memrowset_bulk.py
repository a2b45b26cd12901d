"""Bulk inserts into the MemRowSet: the sorted key list a large batch is merged into must stay
the one sortedcontainers would build, whatever the batch sizes and their interleaving."""

import random
import threading

import pytest

from storage.data_type import INT32, INT64, STRING, ColumnId
from storage.key_encoding import encode_key
from storage.mvcc import TxnState
from storage.predicate import ScanSpec
from storage.schema import ColumnSchema, Schema
from storage.tablet.memrowset import MemRowSet

K, V, S = ColumnId(1), ColumnId(2), ColumnId(3)
SCHEMA = Schema(
    (
        ColumnSchema(K, "k", INT32, nullable=False),
        ColumnSchema(V, "v", INT64),
        ColumnSchema(S, "s", STRING),
    ),
    num_key_columns=1,
)


def _key(k: int) -> bytes:
    return encode_key([k], [INT32])


def _insert(mrs: MemRowSet, ks: list[int], txn: TxnState) -> None:
    mrs.insert_new([_key(k) for k in ks], [(k, k * 10, f"r{k}") for k in ks], txn)


@pytest.mark.parametrize("sizes", [[5000, 300, 70_000, 1, 255, 256, 9000], [100_000], [300] * 40])
def test_batches_of_any_size_leave_a_consistent_sorted_map(sizes):
    rng = random.Random(sum(sizes))
    ks = rng.sample(range(-(10**6), 10**6), sum(sizes))
    mrs = MemRowSet(SCHEMA, threading.Lock())
    txn = TxnState.committed_at(5)
    start = 0
    for size in sizes:
        _insert(mrs, ks[start : start + size], txn)
        start += size
    entries = mrs._rows
    entries._check()  # sortedcontainers' own invariant check: lists, maxes, index, length
    assert len(mrs) == len(ks)
    assert list(entries.keys()) == sorted(_key(k) for k in ks)
    # Positional access and bisection go through the rebuilt index.
    middle = sorted(ks)[len(ks) // 2]
    assert entries.bisect_left(_key(middle)) == len(ks) // 2
    assert entries.peekitem(len(ks) // 2)[1].values[0] == middle
    scanned = [
        row["1"] for batch in mrs.scan(ScanSpec((K,)), 10, None, 4096) for row in batch.to_pylist()
    ]
    assert scanned == sorted(ks)


def test_a_bulk_merged_row_is_updated_deleted_and_rolled_back_like_any_other():
    mrs = MemRowSet(SCHEMA, threading.Lock())
    loader = TxnState.committed_at(5)
    _insert(mrs, list(range(0, 20_000, 2)), loader)
    writer = TxnState()
    assert mrs.update(_key(10), ((1, 99),), writer)
    assert mrs.delete(_key(12), writer)
    mrs.insert(_key(11), (11, 0, "new"), writer)  # a key between two merged ones
    rows = {
        row["1"]: row["2"]
        for batch in mrs.scan(ScanSpec((K, V)), 10, writer, 4096)
        for row in batch.to_pylist()
    }
    assert rows[10] == 99 and 12 not in rows and rows[11] == 0
    for key in (10, 11, 12):
        mrs.remove_provisional(_key(key), writer)
    mrs._rows._check()
    after = [
        (row["1"], row["2"])
        for batch in mrs.scan(ScanSpec((K, V)), 10, None, 4096)
        for row in batch.to_pylist()
    ]
    assert after == [(k, k * 10) for k in range(0, 20_000, 2)]
