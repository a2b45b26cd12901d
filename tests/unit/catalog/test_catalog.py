from __future__ import annotations

import dataclasses

import pytest

from catalog.catalog import Catalog
from catalog.store import CatalogStore
from storage import data_type as t
from storage.data_type import ColumnId
from storage.errors import DuplicateTable, UndefinedTable
from storage.schema import ColumnSchema, Schema


class EngineDouble:
    """Records tablet creation and removal the way StorageEngine does, in memory."""

    replayed_catalog = None

    def __init__(self) -> None:
        self.tablets: dict[int, object] = {}
        self.wal_keepers: list = []

    def create_tablet(self, tablet_id, schema) -> None:
        self.tablets[tablet_id] = schema

    def drop_tablet(self, tablet_id) -> None:
        self.tablets.pop(tablet_id, None)

    def tablet_ids(self):
        return sorted(self.tablets)

    def has_tablet(self, tablet_id) -> bool:
        return tablet_id in self.tablets

    def alter_tablet(self, tablet_id, schema) -> None:
        self.tablets[tablet_id] = schema


COLUMNS = [("a", t.STRING, True, None), ("id", t.INT64, True, None), ("n", t.INT32, False, "7")]


def test_key_columns_are_stored_first_but_declared_order_is_kept(tmp_path):
    catalog = Catalog(EngineDouble(), CatalogStore(tmp_path, fsync=False))
    table = catalog.create_table("x", COLUMNS, ["id"])
    assert [c.name for c in table.schema.columns] == ["id", "a", "n"]
    assert [c.name for c in table.columns] == ["a", "id", "n"]
    assert table.schema.column(table.schema.key_column_ids[0]).nullable is False
    assert table.attnum(table.schema.find("id").id) == 2


def test_attnums_count_dropped_columns_but_not_the_hidden_key(tmp_path):
    catalog = Catalog(EngineDouble(), CatalogStore(tmp_path, fsync=False))
    hidden = catalog.create_table("h", COLUMNS, [])
    key = hidden.schema.key_columns[0]
    gone = hidden.schema.find("id")
    added = ColumnSchema(ColumnId(hidden.next_column_id), "added", t.INT32, True, None)
    kept = [c for c in hidden.schema.columns if c.id != gone.id]
    altered = dataclasses.replace(
        hidden,
        schema=Schema((*kept, added), 1),
        next_column_id=hidden.next_column_id + 1,
        column_order=(*(i for i in hidden.column_order if i != gone.id), added.id),
    )
    assert [(c.name, altered.attnum(c.id)) for c in altered.columns] == [
        ("a", 1), ("n", 3), ("added", 4)
    ]  # fmt: skip
    assert altered.attnum(key.id) == 0
    assert altered.dropped_attnums == (2,)


def test_catalog_survives_reopen_and_ids_are_never_reused(tmp_path):
    engine = EngineDouble()
    catalog = Catalog(engine, CatalogStore(tmp_path, fsync=False))
    first = catalog.create_table("x", COLUMNS, ["id"])
    catalog.drop_table("x")
    reopened = Catalog(engine, CatalogStore(tmp_path, fsync=False))
    second = reopened.create_table("x", COLUMNS, ["id"])
    assert second.table_id != first.table_id
    assert set(second.tablet_ids).isdisjoint(first.tablet_ids)
    again = Catalog(engine, CatalogStore(tmp_path, fsync=False))
    assert again.get_table("x") == second


def test_duplicate_and_missing_tables(tmp_path):
    catalog = Catalog(EngineDouble(), CatalogStore(tmp_path, fsync=False))
    catalog.create_table("x", COLUMNS, ["id"])
    with pytest.raises(DuplicateTable):
        catalog.create_table("x", COLUMNS, ["id"])
    with pytest.raises(UndefinedTable):
        catalog.get_table("y")


def test_tablets_no_table_names_are_removed_on_open(tmp_path):
    engine = EngineDouble()
    engine.create_tablet(41, None)  # as if a crash hit between tablet and catalog writes
    Catalog(engine, CatalogStore(tmp_path, fsync=False))
    assert engine.tablet_ids() == []


def test_replace_table_renames_and_realigns_tablets_on_open(tmp_path):
    import dataclasses

    from storage.data_type import ColumnId
    from storage.schema import ColumnSchema, Schema

    engine = EngineDouble()
    catalog = Catalog(engine, CatalogStore(tmp_path, fsync=False))
    table = catalog.create_table("t", COLUMNS, ["id"])
    added = ColumnSchema(ColumnId(3), "extra", t.INT32, read_default=5)
    schema = Schema((*table.schema.columns, added), table.schema.num_key_columns)
    new = dataclasses.replace(table, name="u", schema=schema, next_column_id=4)
    catalog.replace_table(table, new)
    assert catalog.find_table("t") is None and catalog.get_table("u").schema == schema
    assert engine.tablets[table.tablet_ids[0]] == schema
    engine.tablets[table.tablet_ids[0]] = table.schema  # as if a crash hit before the tablet
    Catalog(engine, CatalogStore(tmp_path, fsync=False))
    assert engine.tablets[table.tablet_ids[0]] == schema
