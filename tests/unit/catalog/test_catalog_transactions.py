"""A transaction's view of the catalog: private until commit, undone by rollback and savepoints."""

import dataclasses
import json

import pytest

from catalog.catalog import Catalog
from catalog.ddl_locks import LockWait
from catalog.store import CatalogStore
from storage.data_type import INT32, INT64
from storage.engine import StorageEngine
from storage.options import StorageOptions
from storage.schema import Schema

WAIT = LockWait(lambda: None, lambda: 100)
COLUMNS = [("id", INT64, False, None), ("v", INT32, True, None)]


@pytest.fixture
def opened(tmp_path):
    engine = StorageEngine.open(tmp_path, StorageOptions(fsync=False))
    catalog = Catalog(engine, CatalogStore(tmp_path, fsync=False))
    yield engine, catalog, tmp_path
    engine.close()


def test_a_created_table_is_private_until_commit(opened):
    engine, catalog, path = opened
    txn = engine.begin()
    view = catalog.begin(txn, WAIT)
    table = view.create_table("t", COLUMNS, ["id"])
    assert view.find_table("t") is table and catalog.find_table("t") is None
    assert engine.has_tablet(table.tablet_ids[0])
    view.commit(txn)
    assert catalog.find_table("t") == table
    saved = json.loads((path / "catalog.json").read_text())
    assert [t["name"] for t in saved["tables"]] == ["t"] and saved["ddl_sequence"] == 1


def test_rollback_drops_new_tablets_and_keeps_dropped_ones(opened):
    engine, catalog, _ = opened
    kept = catalog.create_table("kept", COLUMNS, ["id"])
    txn = engine.begin()
    view = catalog.begin(txn, WAIT)
    made = view.create_table("made", COLUMNS, ["id"])
    view.drop_table("kept")
    assert view.find_table("kept") is None and catalog.find_table("kept") is kept
    txn.rollback()
    view.rollback()
    assert not engine.has_tablet(made.tablet_ids[0])
    assert engine.has_tablet(kept.tablet_ids[0])
    assert [t.name for t in catalog.tables()] == ["kept"]


def test_rollback_to_savepoint_undoes_only_what_came_after(opened):
    engine, catalog, _ = opened
    txn = engine.begin()
    view = catalog.begin(txn, WAIT)
    view.create_table("before", COLUMNS, ["id"])
    view.savepoint("s")
    after = view.create_table("after", COLUMNS, ["id"])
    view.rollback_to("s")
    assert view.find_table("after") is None and view.find_table("before") is not None
    assert not engine.has_tablet(after.tablet_ids[0])
    view.commit(txn)
    assert [t.name for t in catalog.tables()] == ["before"]


def test_a_dropped_column_keeps_its_values_in_the_tablet_until_commit(opened):
    engine, catalog, _ = opened
    table = catalog.create_table("t", COLUMNS, ["id"])
    tablet = table.tablet_ids[0]
    txn = engine.begin()
    view = catalog.begin(txn, WAIT)
    schema = Schema(tuple(c for c in table.schema.columns if c.name != "v"), 1)
    view.replace_table(table, dataclasses.replace(table, schema=schema, column_order=(0,)))
    assert engine.schema(tablet).find_id(1) is not None, "kept in the tablet until commit"
    view.commit(txn)
    assert engine.schema(tablet).find_id(1) is None
