from __future__ import annotations

import pytest

from catalog.store import FILE_NAME, CatalogStore
from storage.errors import DataCorrupted


def test_missing_file_is_an_empty_catalog(tmp_path):
    assert CatalogStore(tmp_path).load()["tables"] == []


def test_save_then_load(tmp_path):
    store = CatalogStore(tmp_path, fsync=False)
    doc = store.load()
    doc["next_table_id"] = 5
    store.save(doc)
    assert CatalogStore(tmp_path).load()["next_table_id"] == 5


def test_garbage_is_reported_as_corruption(tmp_path):
    (tmp_path / FILE_NAME).write_bytes(b"{not json")
    with pytest.raises(DataCorrupted):
        CatalogStore(tmp_path).load()
