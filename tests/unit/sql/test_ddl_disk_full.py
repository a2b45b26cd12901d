"""DDL on a full disk: the statement fails with 53100, the catalog stays as it was, DDL resumes.

Every write the process makes fails with ENOSPC (``os.write`` injected), so
whichever file a statement writes first (a new tablet's metadata, an altered
one, the WAL record that carries the catalog document, the privileges file) is
refused.  Afterwards the data directory holds the same catalog, the session
and the database carry on, and once space returns the same statements succeed
and survive a restart.  When only the catalog file is refused after its WAL
record was written, the DDL is committed: the WAL keeps the record until the
file can be written, so a checkpoint cannot lose it.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import storage.fs
from sql.session.database import Database
from storage.errors import DiskFull

STATEMENTS = [
    "create table b (k int primary key, v text)",
    "alter table a add column w text",
    "drop table a",
    "create view v as select k from a",
    "comment on table a is 'about a'",
    "create table p (k int primary key) partition by hash (k) partitions 2",
]


def run(session, sql):
    return [list(r.batches) for r in session.execute(sql)]


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, bool]]:
    """``disk["full"]``: every os.write fails with ENOSPC (after writing half of its bytes)."""
    state = {"full": False}
    real = os.write

    def write(fd: int, data) -> int:
        if state["full"]:
            real(fd, bytes(data)[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    yield state


def _catalog_state(data_dir: Path) -> tuple[bytes, list[str], list[str]]:
    return (
        (data_dir / "catalog.json").read_bytes(),
        sorted(p.name for p in (data_dir / "tablets").iterdir()),
        sorted(p.name for p in data_dir.iterdir() if p.name.endswith(".tmp")),
    )


def _file_tables(data_dir: Path) -> list[str]:
    return sorted(t["name"] for t in json.loads((data_dir / "catalog.json").read_text())["tables"])


def _table_names(db: Database) -> list[str]:
    return sorted(t.name for t in db.catalog.tables())


@pytest.mark.parametrize("sql", STATEMENTS)
def test_ddl_on_a_full_disk_is_53100_and_leaves_the_catalog_as_it_was(
    tmp_path: Path, disk: dict[str, bool], sql: str
) -> None:
    db = Database.open(tmp_path, fsync=False)
    session = db.session("nyala", "nyala", {})
    run(session, "create table a (k int primary key, v text)")
    run(session, "insert into a values (1, 'one')")
    before = _catalog_state(tmp_path)
    disk["full"] = True
    with pytest.raises(DiskFull) as info:
        run(session, sql)
    assert info.value.sqlstate == "53100"
    disk["full"] = False
    assert _catalog_state(tmp_path) == before
    assert _table_names(db) == ["a"]
    assert run(session, "select k, v from a")[0][0].to_pylist() == [{"k": 1, "v": "one"}]
    run(session, sql)  # space is back: the same DDL succeeds
    after = _table_names(db)
    session.close()
    db.close()
    reopened = Database.open(tmp_path, fsync=False)
    assert _table_names(reopened) == after
    reopened.close()


def test_ddl_in_a_transaction_on_a_full_disk_fails_at_commit_and_nothing_is_kept(
    tmp_path: Path, disk: dict[str, bool]
) -> None:
    db = Database.open(tmp_path, fsync=False)
    session = db.session("nyala", "nyala", {})
    run(session, "create table a (k int primary key)")
    run(session, "begin")
    run(session, "alter table a add column w text")
    run(session, "insert into a values (1, 'x')")
    before = (tmp_path / "catalog.json").read_bytes()
    disk["full"] = True
    with pytest.raises(DiskFull):
        run(session, "commit")
    disk["full"] = False
    assert (tmp_path / "catalog.json").read_bytes() == before
    assert [c.name for c in db.catalog.get_table("a").columns] == ["k"]
    assert run(session, "select count(*) as n from a")[0][0].to_pylist() == [{"n": 0}]
    session.close()
    db.close()


def test_a_catalog_file_refused_after_its_wal_record_keeps_the_wal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refuse = {"on": False}
    real = storage.fs.write_file

    def write_file(path: Path, data: bytes | bytearray, *, fsync: bool = True) -> None:
        if refuse["on"] and Path(path).name == "catalog.json.tmp":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, data, fsync=fsync)

    monkeypatch.setattr(storage.fs, "write_file", write_file)
    db = Database.open(tmp_path, fsync=False)
    session = db.session("nyala", "nyala", {})
    run(session, "create table z (k int primary key)")
    refuse["on"] = True
    run(session, "create table a (k int primary key)")  # committed once its WAL record is
    run(session, "insert into a values (1)")
    run(session, "checkpoint")
    assert _file_tables(tmp_path) == ["z"]
    assert list((tmp_path / "wal").iterdir()), "the WAL keeps the catalog's record"
    session.close()
    db.close()
    refuse["on"] = False
    db = Database.open(tmp_path, fsync=False)  # replay restores the catalog from the WAL
    session = db.session("nyala", "nyala", {})
    assert run(session, "select k from a")[0][0].to_pylist() == [{"k": 1}]
    run(session, "checkpoint")
    assert _file_tables(tmp_path) == ["a", "z"]
    session.close()
    db.close()
