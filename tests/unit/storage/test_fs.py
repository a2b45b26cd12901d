from storage.data_type import TabletId
from storage.fs import DataDirLayout, atomic_write, remove_dir


def test_layout_names_wal_and_tablet_paths(tmp_path):
    layout = DataDirLayout(tmp_path)
    layout.create()
    assert layout.wal_dir.is_dir() and layout.tablets_dir.is_dir()
    assert layout.tablet_metadata_path(TabletId(3)) == tmp_path / "tablets" / "3" / "metadata.json"


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "doc.json"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert [p.name for p in tmp_path.iterdir()] == ["doc.json"]


def test_atomic_write_without_fsync_still_writes(tmp_path):
    atomic_write(tmp_path / "x", b"data", fsync=False)
    assert (tmp_path / "x").read_bytes() == b"data"


def test_remove_dir_removes_a_tree_and_ignores_a_missing_one(tmp_path):
    tree = tmp_path / "a" / "b"
    tree.mkdir(parents=True)
    (tree / "f").write_bytes(b"x")
    remove_dir(tmp_path / "a")
    remove_dir(tmp_path / "a")
    assert not (tmp_path / "a").exists()
