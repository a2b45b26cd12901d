"""The catalog's documents (catalog, roles, privileges, sequences, comments) carry a CRC32C and
survive a full disk.

Each document is written through its store, then damaged on disk: reopening
the store fails with XX001 naming the file, and ``check_data_dir`` (``nyala
check``) names it too.  A write the disk refuses (an injected ENOSPC that
leaves half a temporary file) fails with 53100, leaves the file and the store
as they were and no temporary file, and the same change succeeds once space
returns.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import storage.fs
from catalog import logged_document
from catalog.comments import Comments
from catalog.privileges import ObjectAcl, PrivilegeStore
from catalog.roles import Membership, Role, RoleStore
from catalog.sequences import SequenceCounters, SequenceInfo
from catalog.store import CatalogStore
from storage.errors import DataCorrupted, DiskFull
from storage.integrity import check_data_dir

SEQ = SequenceInfo("t_k_seq", 1)


@dataclass(frozen=True)
class Kind:
    """How to write one document, reopen it, and see whether a change is in it."""

    file: str
    write: Callable[[Path], None]
    reopen: Callable[[Path], object]
    has_change: Callable[[object], bool]


def _write_catalog(d: Path) -> None:
    store = CatalogStore(d, fsync=False)
    doc = store.load()
    doc["next_table_id"] = 17
    store.save(doc)


def _write_roles(d: Path) -> None:
    roles = RoleStore(d, fsync=False)
    roles.put(Role("alice"))
    roles.put_membership(Membership("alice", "bob", "nyala", admin_option=True))


def _write_privileges(d: Path) -> None:
    PrivilegeStore(d, fsync=False).put("table:16384", ObjectAcl("table", "alice"))


def _write_sequences(d: Path) -> None:
    SequenceCounters(d, fsync=False).take("1.1", SEQ, 3)


def _write_comments(d: Path) -> None:
    Comments(d, fsync=False).set(16384, 0, "the table")


KINDS = {
    "catalog": Kind(
        "catalog.json",
        _write_catalog,
        lambda d: CatalogStore(d).load(),
        lambda doc: doc["next_table_id"] == 17,  # type: ignore[index]
    ),
    "roles": Kind(
        "roles.json",
        _write_roles,
        lambda d: RoleStore(d),
        lambda s: s.get("alice") is not None and bool(s.memberships()),  # type: ignore[attr-defined]
    ),
    "privileges": Kind(
        "privileges.json",
        _write_privileges,
        lambda d: PrivilegeStore(d),
        lambda s: s.find("table:16384") is not None,  # type: ignore[attr-defined]
    ),
    "sequences": Kind(
        "sequences.json",
        _write_sequences,
        lambda d: SequenceCounters(d),
        lambda s: s.take("1.1", SEQ, 1).tolist()[0] > 3,  # type: ignore[attr-defined]
    ),
    "comments": Kind(
        "comments.json",
        _write_comments,
        lambda d: Comments(d),
        lambda s: s.all() == {(16384, 0): "the table"},  # type: ignore[attr-defined]
    ),
}


def _damage_checksummed_digit(path: Path) -> None:
    """Change one digit of the content (not of the checksum): still valid JSON, now wrong."""
    text = path.read_text()
    crc = re.search(r'"crc32c": *\d+', text)
    assert crc is not None
    match = [m for m in re.finditer(r"\d", text) if not crc.start() <= m.start() < crc.end()][-1]
    digit = str((int(match.group()) + 1) % 10)
    path.write_text(text[: match.start()] + digit + text[match.end() :])


def _flip_middle_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x5A
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", sorted(KINDS))
@pytest.mark.parametrize("damage", [_damage_checksummed_digit, _flip_middle_byte])
def test_a_damaged_document_is_xx001_naming_it(
    tmp_path: Path, name: str, damage: Callable[[Path], None]
) -> None:
    kind = KINDS[name]
    kind.write(tmp_path)
    path = tmp_path / kind.file
    assert '"crc32c"' in path.read_text()
    assert kind.has_change(kind.reopen(tmp_path))
    assert check_data_dir(tmp_path).is_clean
    damage(path)
    with pytest.raises(DataCorrupted) as info:
        kind.has_change(kind.reopen(tmp_path))
    assert info.value.sqlstate == "XX001"
    assert str(path) in info.value.message
    report = check_data_dir(tmp_path)
    assert [p.path for p in report.problems] == [path]


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """While ``full[0]`` is true every file write stops half way with ENOSPC."""
    full = [False]
    real = storage.fs.write_file

    def write_file(path: Path, data: bytes | bytearray, *, fsync: bool = True) -> None:
        if full[0]:
            Path(path).write_bytes(bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data, fsync=fsync)

    monkeypatch.setattr(storage.fs, "write_file", write_file)
    yield full


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in d.iterdir()}


def test_role_changes_on_a_full_disk_are_53100_and_change_nothing(
    tmp_path: Path, full_disk: list[bool]
) -> None:
    roles = RoleStore(tmp_path, fsync=False)
    roles.put(Role("alice"))
    before = _files(tmp_path)
    full_disk[0] = True
    for change in (
        lambda: roles.put(Role("bob")),
        lambda: roles.drop("alice"),
        lambda: roles.put_membership(Membership("alice", "carol", "nyala")),
    ):
        with pytest.raises(DiskFull) as info:
            change()
        assert info.value.sqlstate == "53100"
        assert _files(tmp_path) == before
    assert [r.name for r in roles.all()] == ["alice"] and roles.memberships() == []
    full_disk[0] = False
    roles.put(Role("bob"))
    assert [r.name for r in RoleStore(tmp_path).all()] == ["alice", "bob"]


def test_privilege_changes_on_a_full_disk_are_53100_and_change_nothing(
    tmp_path: Path, full_disk: list[bool]
) -> None:
    store = PrivilegeStore(tmp_path, fsync=False)
    store.put("table:1", ObjectAcl("table", "alice"))
    before = _files(tmp_path)
    full_disk[0] = True
    with pytest.raises(DiskFull):
        store.put("table:2", ObjectAcl("table", "bob"))
    with pytest.raises(DiskFull):
        store.drop("table:1")
    assert _files(tmp_path) == before
    assert sorted(store.all()) == ["table:1"]
    full_disk[0] = False
    store.put("table:2", ObjectAcl("table", "bob"))
    assert sorted(PrivilegeStore(tmp_path).all()) == ["table:1", "table:2"]


def test_sequence_values_on_a_full_disk_are_53100_and_none_is_given_twice(
    tmp_path: Path, full_disk: list[bool]
) -> None:
    counters = SequenceCounters(tmp_path, fsync=False)
    given = counters.take("1.1", SEQ, 40).tolist()  # past the first cached block
    before = _files(tmp_path)
    full_disk[0] = True
    with pytest.raises(DiskFull):
        counters.take("1.1", SEQ, 100)
    with pytest.raises(DiskFull):
        counters.set("1.1", SEQ, 500, True)
    assert _files(tmp_path) == before
    full_disk[0] = False
    after = counters.take("1.1", SEQ, 100).tolist()
    assert after[0] == given[-1] + 1
    resumed = SequenceCounters(tmp_path).take("1.1", SEQ, 1).tolist()
    assert resumed[0] > after[-1]  # the limit was durable before the values were given


def test_a_comment_on_a_full_disk_is_53100_and_not_kept(
    tmp_path: Path, full_disk: list[bool]
) -> None:
    comments = Comments(tmp_path, fsync=False)
    comments.set(1, 0, "kept")
    full_disk[0] = True
    with pytest.raises(DiskFull):
        comments.set(1, 0, "lost")
    assert comments.all() == {(1, 0): "kept"}
    full_disk[0] = False
    assert Comments(tmp_path).all() == {(1, 0): "kept"}


def test_a_catalog_document_the_disk_refused_after_the_wal_stays_pending(
    tmp_path: Path, full_disk: list[bool]
) -> None:
    store = CatalogStore(tmp_path, fsync=False)
    doc = store.load()
    store.save(doc)
    before = _files(tmp_path)
    full_disk[0] = True
    with pytest.raises(DiskFull):
        store.save({**doc, "next_table_id": 5})
    store.save_after_wal({**doc, "next_table_id": 6})
    assert store.keeps_wal()
    assert _files(tmp_path) == before
    full_disk[0] = False
    assert not store.keeps_wal()
    assert CatalogStore(tmp_path).load()["next_table_id"] == 6


def test_a_transactions_comments_the_disk_refused_after_the_wal_stay_pending(
    tmp_path: Path, full_disk: list[bool]
) -> None:
    comments = Comments(tmp_path, fsync=False)
    comments.set(1, 0, "first")
    with comments.lock:
        doc = comments.document_with({(1, 0): None, (2, 3): "second"})
    full_disk[0] = True
    comments.install(doc)
    assert comments.all() == {(2, 3): "second"}
    assert comments.keeps_wal()
    assert Comments(tmp_path).all() == {(1, 0): "first"}
    full_disk[0] = False
    assert not comments.keeps_wal()
    assert Comments(tmp_path).all() == {(2, 3): "second"}


def test_comments_take_the_wals_copy_only_when_it_is_newer_than_the_file(tmp_path: Path) -> None:
    comments = Comments(tmp_path, fsync=False)
    comments.set(1, 0, "one")
    logged_then = logged_document.encode(comments.document_with({(1, 0): "two"}))
    assert Comments(tmp_path, logged=logged_then).all() == {(1, 0): "two"}
    assert Comments(tmp_path).all() == {(1, 0): "two"}  # the WAL's copy was written back
    Comments(tmp_path).set(1, 0, "three")
    assert Comments(tmp_path, logged=logged_then).all() == {(1, 0): "three"}
