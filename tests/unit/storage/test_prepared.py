"""Prepared transactions: durable at PREPARE, invisible and locked until COMMIT PREPARED,
restored after a restart unless their commit record made it to the WAL."""

from __future__ import annotations

import datetime as dt
import threading

import crc32c
import pytest

from storage import commit_record, prepared
from storage.data_type import TabletId
from storage.engine import StorageEngine
from storage.errors import DataCorrupted, DuplicateObject, InvalidParameterValue, UndefinedObject
from storage.integrity import check_data_dir
from storage.options import StorageOptions
from storage.prepared import PreparedTransactions
from tests.unit.storage.test_engine import SCHEMA, read, rows

OPTIONS = StorageOptions(fsync=False)
T1 = TabletId(1)


def _engine(path) -> StorageEngine:
    engine = StorageEngine.open(path, OPTIONS)
    if not engine.has_tablet(T1):
        engine.create_tablet(T1, SCHEMA)
    return engine


def _prepare(engine: StorageEngine, gid: str, ids: list[int], name: str = "p") -> None:
    txn = engine.begin()
    txn.insert(T1, rows(ids, name))
    engine.prepared.prepare(txn, gid, "nyala", "nyala")


def test_prepared_writes_are_invisible_until_committed(tmp_path):
    engine = _engine(tmp_path)
    _prepare(engine, "g", [1, 2])
    assert read(engine, T1) == []
    assert [p.gid for p in engine.prepared.listing()] == ["g"]
    engine.prepared.commit("g")
    assert read(engine, T1) == [(1, "p"), (2, "p")]
    assert engine.prepared.listing() == []
    with pytest.raises(UndefinedObject):
        engine.prepared.commit("g")


def test_rollback_prepared_leaves_nothing(tmp_path):
    engine = _engine(tmp_path)
    _prepare(engine, "g", [1])
    engine.prepared.rollback("g")
    assert read(engine, T1) == []
    engine.close()
    assert read(_engine(tmp_path), T1) == []


def test_gids_are_unique_and_short(tmp_path):
    engine = _engine(tmp_path)
    _prepare(engine, "g", [1])
    with pytest.raises(DuplicateObject):
        _prepare(engine, "g", [2])
    with pytest.raises(InvalidParameterValue):
        _prepare(engine, "x" * 200, [3])
    engine.prepared.commit("g")
    assert read(engine, T1) == [(1, "p")]  # the refused transactions were rolled back


def test_a_prepared_transaction_keeps_its_row_locks(tmp_path):
    engine = _engine(tmp_path)
    _prepare(engine, "g", [1], "prepared")
    done = threading.Event()

    def writer():
        txn = engine.begin()
        txn.update(T1, rows([1], "after"))
        txn.commit()
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    assert not done.wait(0.3)
    engine.prepared.commit("g")
    thread.join(5)
    assert read(engine, T1) == [(1, "after")]


def test_prepared_transactions_survive_a_restart_and_a_checkpoint(tmp_path):
    engine = _engine(tmp_path)
    committed = engine.begin()
    committed.insert(T1, rows([10], "before"))
    committed.commit()
    _prepare(engine, "keep", [1, 2])
    _prepare(engine, "drop", [3])
    txn = engine.begin()
    txn.update(T1, rows([10], "changed"))
    engine.prepared.prepare(txn, "upd", "nyala", "nyala")
    engine.checkpoint()
    engine.close()

    engine = _engine(tmp_path)
    assert sorted(p.gid for p in engine.prepared.listing()) == ["drop", "keep", "upd"]
    assert read(engine, T1) == [(10, "before")]
    engine.prepared.commit("keep")
    engine.prepared.rollback("drop")
    engine.close()

    engine = _engine(tmp_path)
    assert [p.gid for p in engine.prepared.listing()] == ["upd"]
    assert read(engine, T1) == [(1, "p"), (2, "p"), (10, "before")]
    engine.prepared.commit("upd")
    engine.close()
    engine = _engine(tmp_path)
    assert engine.prepared.listing() == []
    assert read(engine, T1) == [(1, "p"), (2, "p"), (10, "changed")]


def test_a_commit_whose_file_outlived_it_is_not_applied_twice(tmp_path, monkeypatch):
    """A crash after COMMIT PREPARED's WAL record, before its file is deleted."""
    engine = _engine(tmp_path)
    _prepare(engine, "g", [1, 2])

    def fail(self, path):
        raise OSError("crash before the file is removed")

    monkeypatch.setattr(PreparedTransactions, "_remove", fail)
    engine.prepared.commit("g")
    assert read(engine, T1) == [(1, "p"), (2, "p")]
    engine.close()
    monkeypatch.undo()
    assert list((tmp_path / "prepared").glob("*.txn"))
    engine = _engine(tmp_path)
    assert engine.prepared.listing() == []
    assert read(engine, T1) == [(1, "p"), (2, "p")]
    assert not list((tmp_path / "prepared").glob("*.txn"))


def test_a_damaged_prepared_file_is_xx001_naming_it_and_nyala_check_finds_it(tmp_path):
    engine = _engine(tmp_path)
    _prepare(engine, "g", [1, 2])
    engine.close()
    assert check_data_dir(tmp_path).is_clean
    (path,) = (tmp_path / "prepared").iterdir()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x5A
    path.write_bytes(bytes(data))
    assert [p.path for p in check_data_dir(tmp_path).problems] == [path]
    with pytest.raises(DataCorrupted) as info:
        StorageEngine.open(tmp_path, OPTIONS)
    assert info.value.sqlstate == "XX001" and str(path) in info.value.message


def test_the_file_is_the_documented_layout_with_one_crc_over_its_body(tmp_path):
    """The file joined from pieces (one copy of a large write set) is byte for byte the
    layout recovery reads: magic, body, then the CRC32C of the whole body."""
    engine = _engine(tmp_path)
    txn = engine.begin()
    for start in (0, 100, 200):  # several ops, each its own IPC stream
        txn.insert(T1, rows(list(range(start, start + 50)), "x"))
    entry = prepared.PreparedTransaction("g", dt.datetime.now(dt.UTC), "o", "d", txn)
    ops = txn.write_ops()
    data = prepared._encode(entry, ops)
    micros = int(entry.prepared_at.timestamp() * 1_000_000)
    body = (
        prepared._HEAD.pack(micros, 1, 1, 1)
        + b"god"
        + len(ops).to_bytes(4, "little")
        + commit_record.encode_ops(ops)
    )
    assert data == prepared._MAGIC + body + crc32c.crc32c(body).to_bytes(4, "little")
    path = tmp_path / "g.txn"
    path.write_bytes(data)
    gid, _, owner, database, decoded = prepared._decode(data, path)
    assert (gid, owner, database) == ("g", "o", "d")
    assert [op.batch for op in decoded] == [op.batch for op in ops]
    txn.rollback()
