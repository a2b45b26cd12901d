from __future__ import annotations

import pytest

from sql.session.database import Database
from storage.errors import InvalidCatalogName


def test_sessions_share_the_catalog_and_version_reports_postgresql_15(tmp_path):
    db = Database.open(tmp_path / "data", name="shop", fsync=False)
    try:
        assert db.version_string.startswith("PostgreSQL 15.")
        first = db.session("u", "shop", {"application_name": "a"})
        for _ in first.execute("create table t (id int primary key)"):
            pass
        assert db.catalog.find_table("t") is not None
        assert db.catalog_version == 1
        with pytest.raises(InvalidCatalogName):
            db.session("u", "nyala", {})
    finally:
        db.close()


def test_open_creates_the_data_directory(tmp_path):
    db = Database.open(tmp_path / "new" / "dir", fsync=False)
    db.close()
    assert (tmp_path / "new" / "dir" / "wal").is_dir()
