from __future__ import annotations

from catalog.catalog import Catalog
from catalog.store import CatalogStore
from catalog.temp_tables import OnCommit, TempNamespace, drop_leftovers, user_name
from storage import data_type as t
from tests.unit.catalog.test_catalog import EngineDouble

COLUMNS = [("id", t.INT64, True, None)]


def test_a_namespace_maps_its_own_names_and_drops_its_tables(tmp_path):
    catalog = Catalog(EngineDouble(), CatalogStore(tmp_path, fsync=False))
    mine, theirs = TempNamespace(catalog, 1), TempNamespace(catalog, 2)
    catalog.create_table(mine.internal_name("x"), COLUMNS, ["id"])
    mine.add("x", OnCommit.DROP)
    assert mine.resolve("x") == "pg_temp_1.x" and theirs.resolve("x") is None
    assert user_name("pg_temp_1.x") == "x" and user_name("x") == "x"
    assert [t.name for t in mine.with_action(OnCommit.DROP)] == ["x"]
    mine.drop_all()
    assert catalog.find_table("pg_temp_1.x") is None and not mine


def test_leftovers_of_a_stopped_server_are_dropped_at_open(tmp_path):
    engine = EngineDouble()
    catalog = Catalog(engine, CatalogStore(tmp_path, fsync=False))
    catalog.create_table("pg_temp_7.x", COLUMNS, ["id"])
    catalog.create_table("kept", COLUMNS, ["id"])
    reopened = Catalog(engine, CatalogStore(tmp_path, fsync=False))
    drop_leftovers(reopened)
    assert [t.name for t in reopened.tables()] == ["kept"]
