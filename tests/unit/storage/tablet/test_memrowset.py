import random
import threading

import pyarrow as pa
import pytest

from storage import row_change
from storage.data_type import INT32, INT64, STRING, ColumnId
from storage.key_encoding import encode_key
from storage.mvcc import TxnState
from storage.predicate import ColumnPredicate, ScanSpec
from storage.schema import ColumnSchema, Schema
from storage.tablet import memrowset as memrowset_module
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
ALL = ScanSpec((K, V, S))


def _key(k: int) -> bytes:
    return encode_key([k], [INT32])


def _committed(ts: int) -> TxnState:
    return TxnState.committed_at(ts)


def _rows(mrs: MemRowSet, snapshot: int, reader: TxnState | None = None, spec=ALL, batch_rows=1000):
    batches = list(mrs.scan(spec, snapshot, reader, batch_rows))
    for batch in batches:
        assert batch.schema.names == [str(c) for c in spec.projection]
    return [tuple(row.values()) for b in batches for row in b.to_pylist()]


def _mrs() -> MemRowSet:
    return MemRowSet(SCHEMA, threading.Lock())


def test_kudu_design_doc_example_chain():
    """INSERT ("row", 1) @1; UPDATE val=2 @2; DELETE @3; INSERT ("row", 3) @4."""
    mrs = _mrs()
    mrs.insert(_key(7), (7, 1, "row"), _committed(1))
    assert mrs.update(_key(7), ((1, 2),), _committed(2))
    assert mrs.delete(_key(7), _committed(3))
    assert not mrs.delete(_key(7), _committed(3))
    assert not mrs.update(_key(7), ((1, 9),), _committed(3))
    mrs.insert(_key(7), (7, 3, "row"), _committed(4))
    assert len(mrs) == 1
    assert [_rows(mrs, ts) for ts in range(6)] == [
        [],
        [(7, 1, "row")],
        [(7, 2, "row")],
        [],
        [(7, 3, "row")],
        [(7, 3, "row")],
    ]


def test_provisional_writes_are_seen_only_by_their_transaction_until_commit():
    mrs = _mrs()
    writer = TxnState()
    mrs.insert(_key(1), (1, 10, "a"), writer)
    assert _rows(mrs, 100) == []
    assert _rows(mrs, 0, writer) == [(1, 10, "a")]
    assert mrs.probe(_key(1), TxnState()).blocker is writer
    probe = mrs.probe(_key(1), writer)
    assert probe.blocker is None and probe.is_live
    writer.mark_committed(50)
    assert _rows(mrs, 49) == [] and _rows(mrs, 50) == [(1, 10, "a")]


def test_rollback_removes_provisional_rows_and_mutations():
    mrs = _mrs()
    mrs.insert(_key(1), (1, 10, "a"), _committed(1))
    loser = TxnState()
    mrs.update(_key(1), ((1, 11),), loser)
    mrs.delete(_key(1), loser)
    mrs.insert(_key(1), (1, 12, "b"), loser)
    mrs.insert(_key(2), (2, 20, "c"), loser)
    assert _rows(mrs, 5, loser) == [(1, 12, "b"), (2, 20, "c")]
    for k in (1, 2):
        mrs.remove_provisional(_key(k), loser)
    loser.mark_aborted()
    assert len(mrs) == 1
    assert _rows(mrs, 5) == [(1, 10, "a")]
    assert mrs.probe(_key(1), TxnState()).blocker is None


def test_a_writer_reads_its_update_on_top_of_a_newer_committed_version():
    mrs = _mrs()
    mrs.insert(_key(1), (1, 10, "old"), _committed(1))
    writer = TxnState()  # its snapshot is 1
    mrs.update(_key(1), ((2, "new"),), _committed(5))
    mrs.update(_key(1), ((1, 99),), writer)
    assert _rows(mrs, 1, writer) == [(1, 99, "new")]
    assert _rows(mrs, 1) == [(1, 10, "old")]


def test_scan_splits_batches_applies_predicates_and_limit():
    mrs = _mrs()
    for k in range(100):
        mrs.insert(_key(k), (k, k % 7, None if k % 2 else str(k)), _committed(1))
    batches = list(mrs.scan(ScanSpec((V, K)), 1, None, 16))
    assert [b.num_rows for b in batches] == [16] * 6 + [4]
    assert pa.Table.from_batches(batches).column("1").to_pylist() == list(range(100))
    spec = ScanSpec(
        (K,),
        (ColumnPredicate.equality(V, 3), ColumnPredicate.is_not_null(S)),
        limit=3,
    )
    assert _rows(mrs, 1, spec=spec, batch_rows=8) == [(10,), (24,), (38,)]
    assert _rows(mrs, 1, spec=ScanSpec((K,), limit=0)) == []


def test_point_lookup_resolves_only_the_matching_row(monkeypatch):
    mrs = _mrs()
    for k in range(5_000):
        mrs.insert(_key(k), (k, k, "x"), _committed(1))
        # Changed rows: an unchanged one is taken without resolving its (empty) chain.
        mrs.update(_key(k), ((2, "y"),), _committed(2))
    calls = 0
    real_visible = memrowset_module._visible

    def counting_visible(*args):
        nonlocal calls
        calls += 1
        return real_visible(*args)

    monkeypatch.setattr(memrowset_module, "_visible", counting_visible)
    spec = ScanSpec((V,), (ColumnPredicate.equality(K, 4_321),))
    assert _rows(mrs, 1, spec=spec) == [(4_321,)]
    assert calls == 1
    ranged = ScanSpec((K,), (ColumnPredicate.range(K, 10, 13),))
    assert _rows(mrs, 1, spec=ranged) == [(10,), (11,), (12,)]
    assert calls == 4


def test_values_round_trip_for_every_column_type():
    import datetime as dt
    from decimal import Decimal

    from storage.data_type import BINARY, BOOL, DATE, DOUBLE, FLOAT, TIMESTAMP, TIMESTAMPTZ, decimal

    types = [BOOL, FLOAT, DOUBLE, BINARY, DATE, TIMESTAMP, TIMESTAMPTZ, decimal(9, 3)]
    schema = Schema(
        (ColumnSchema(ColumnId(1), "k", INT64, nullable=False),)
        + tuple(ColumnSchema(ColumnId(i + 2), f"c{i}", t) for i, t in enumerate(types)),
        1,
    )
    row = [
        True,
        1.5,
        2.25,
        b"\x00\x01",
        dt.date(2024, 2, 29),
        dt.datetime(2024, 1, 1, 1, 2, 3, 4),
        dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        Decimal("1.250"),
    ]
    columns = [pa.array([1], pa.int64())] + [
        pa.array([value], t.arrow_type) for value, t in zip(row, types)
    ]
    values = [
        row_change.to_storage_values(c, col.type)[0] for c, col in zip(columns, schema.columns)
    ]
    mrs = MemRowSet(schema, threading.Lock())
    mrs.insert(encode_key([1], [INT64]), tuple(values), _committed(1))
    [batch] = mrs.scan(ScanSpec(schema.column_ids), 1, None, 10)
    assert batch.schema == schema.arrow_schema()
    assert batch.to_pylist()[0] == {str(i + 2): v for i, v in enumerate(row)} | {"1": 1}


class _Model:
    """A plain-Python model of the MemRowSet: committed versions per key, plus each live
    transaction's own view of the keys it wrote."""

    def __init__(self) -> None:
        self.history: dict[int, list[tuple[int, tuple | None]]] = {}
        self.own: dict[TxnState, dict[int, tuple | None]] = {}

    def newest(self, k: int, txn: TxnState) -> tuple | None:
        if k in self.own.get(txn, {}):
            return self.own[txn][k]
        versions = self.history.get(k)
        return versions[-1][1] if versions else None

    def visible(self, snapshot: int, reader: TxnState | None) -> list[tuple]:
        rows = []
        for k in sorted(set(self.history) | set(self.own.get(reader, {}))):
            if reader is not None and k in self.own.get(reader, {}):
                row = self.own[reader][k]
            else:
                row = None
                for ts, version in self.history.get(k, []):
                    if ts <= snapshot:
                        row = version
            if row is not None:
                rows.append(row)
        return rows


@pytest.mark.parametrize("seed", range(25))
def test_random_histories_match_a_plain_model(seed):
    rng = random.Random(seed)
    mrs, model = _mrs(), _Model()
    live: list[TxnState] = []
    holders: dict[int, TxnState] = {}
    next_ts = 1
    for _ in range(250):
        action = rng.random()
        if action < 0.1 or not live:
            txn = TxnState()
            live.append(txn)
            model.own[txn] = {}
        elif action < 0.2:
            txn = live.pop(rng.randrange(len(live)))
            if rng.random() < 0.6:
                next_ts += rng.randint(1, 3)
                txn.mark_committed(next_ts)
                for k, row in model.own.pop(txn).items():
                    model.history.setdefault(k, []).append((next_ts, row))
            else:
                for k in model.own.pop(txn):
                    mrs.remove_provisional(_key(k), txn)
                txn.mark_aborted()
            holders = {k: h for k, h in holders.items() if h is not txn}
        elif action < 0.8:
            txn = rng.choice(live)
            k = rng.randrange(12)
            probe = mrs.probe(_key(k), txn)
            assert probe.blocker is holders.get(k, txn) or probe.blocker is None
            if probe.blocker is not None:
                continue
            current = model.newest(k, txn)
            assert probe.is_live == (current is not None)
            op = rng.choice(["insert", "update", "delete"])
            if op == "insert" and current is None:
                row = (k, rng.randrange(100), rng.choice([None, "x", "y"]))
                mrs.insert(_key(k), row, txn)
            elif op == "update":
                new_v = rng.randrange(100)
                changed = mrs.update(_key(k), ((1, new_v),), txn)
                assert changed == (current is not None)
                if current is None:
                    continue
                row = (k, new_v, current[2])
            elif op == "delete":
                assert mrs.delete(_key(k), txn) == (current is not None)
                if current is None:
                    continue
                row = None
            else:
                continue
            model.own[txn][k] = row
            holders[k] = txn
        else:
            snapshot = rng.randint(0, next_ts + 1)
            reader = rng.choice([None, *live])
            assert _rows(mrs, snapshot, reader, batch_rows=rng.randint(1, 5)) == model.visible(
                snapshot, reader
            )
            lo, hi = sorted(rng.sample(range(14), 2))
            spec = ScanSpec((K, V, S), (ColumnPredicate.range(K, lo, hi),))
            expected = [r for r in model.visible(snapshot, reader) if lo <= r[0] < hi]
            assert _rows(mrs, snapshot, reader, spec=spec) == expected
    for ts in range(next_ts + 2):
        assert _rows(mrs, ts) == model.visible(ts, None)


def test_an_empty_projection_still_counts_rows():
    mrs = _mrs()
    for k in range(10):
        mrs.insert(_key(k), (k, k, None), _committed(1))
    spec = ScanSpec((), (ColumnPredicate.range(V, 3),))
    batches = list(mrs.scan(spec, 1, None, 4))
    assert sum(b.num_rows for b in batches) == 7
    assert all(b.num_columns == 0 for b in batches)


def test_a_hot_row_resolves_its_committed_chain_once(monkeypatch):
    """Reads and writes at the newest version of a row with a long chain start from its
    resolved committed prefix instead of replaying every mutation."""
    mrs = _mrs()
    mrs.insert(_key(1), (1, 0, "hot"), _committed(1))
    for ts in range(2, 2_002):
        assert mrs.update(_key(1), ((1, ts),), _committed(ts))
    assert _rows(mrs, 2_001) == [(1, 2_001, "hot")]
    calls = 0
    real_apply = memrowset_module.apply_mutation

    def counting_apply(*args):
        nonlocal calls
        calls += 1
        return real_apply(*args)

    monkeypatch.setattr(memrowset_module, "apply_mutation", counting_apply)
    for ts in range(2_002, 2_102):
        writer = TxnState()
        assert mrs.update(_key(1), ((1, ts),), writer)
        assert _rows(mrs, ts - 1) == [(1, ts - 1, "hot")]  # the provisional write is unseen
        assert _rows(mrs, ts - 1, writer) == [(1, ts, "hot")]
        assert mrs.changed_after(_key(1), ts - 2) and not mrs.changed_after(_key(1), ts - 1)
        writer.mark_committed(ts)
    assert calls < 1_000, calls  # replaying the chain would take over 200,000
    # Old snapshots still see their versions; a rolled-back write leaves no trace.
    assert [_rows(mrs, ts) for ts in (0, 1, 2, 1_000, 2_101)] == [
        [],
        [(1, 0, "hot")],
        [(1, 2, "hot")],
        [(1, 1_000, "hot")],
        [(1, 2_101, "hot")],
    ]
    loser = TxnState()
    assert mrs.delete(_key(1), loser)
    assert _rows(mrs, 2_101, loser) == []
    mrs.remove_provisional(_key(1), loser)
    loser.mark_aborted()
    assert _rows(mrs, 2_101) == [(1, 2_101, "hot")]
    assert mrs.update(_key(1), ((1, 7),), _committed(2_102))
    assert _rows(mrs, 2_102) == [(1, 7, "hot")]
