from __future__ import annotations

import dataclasses

import pytest

from catalog.catalog import Catalog
from catalog.foreign_keys import CASCADE, MATCH_FULL, SET_NULL, ForeignKey
from catalog.store import CatalogStore
from catalog.table import TableInfo
from storage import data_type as t
from storage.data_type import ColumnId
from storage.errors import DependentObjectsStillExist
from tests.unit.catalog.test_catalog import EngineDouble


def test_json_round_trip_keeps_every_field():
    key = ForeignKey(
        "c_fk", (ColumnId(2), ColumnId(1)), 7, (ColumnId(0), ColumnId(3)), parent_index=12,
        on_delete=SET_NULL, on_update=CASCADE, match=MATCH_FULL, deferrable=True,
        deferred=True, validated=False, set_columns=(ColumnId(1),), number=4,
    )  # fmt: skip
    assert ForeignKey.from_json(key.to_json()) == key


def _parent_and_child(tmp_path) -> tuple[Catalog, TableInfo, TableInfo]:
    catalog = Catalog(EngineDouble(), CatalogStore(tmp_path, fsync=False))
    parent = catalog.create_table("parent", [("id", t.INT32, False, None)], ["id"])
    child = catalog.create_table(
        "child", [("id", t.INT32, False, None), ("p", t.INT32, True, None)], ["id"]
    )
    key = ForeignKey(
        "child_p_fkey", (child.schema.find("p").id,), parent.table_id,
        (parent.schema.find("id").id,),
    )  # fmt: skip
    child = catalog.replace_table(child, dataclasses.replace(child, foreign_keys=(key,)))
    return catalog, parent, child


def test_keys_survive_reopen_and_are_found_from_the_parent(tmp_path):
    catalog, parent, child = _parent_and_child(tmp_path)
    reopened = Catalog(EngineDouble(), CatalogStore(tmp_path, fsync=False))
    assert reopened.get_table("child").foreign_keys == child.foreign_keys
    assert [(c.name, k.name) for c, k in reopened.referencing(parent.table_id)] == [
        ("child", "child_p_fkey")
    ]
    assert reopened.table_by_id(parent.table_id).name == "parent"


def test_dropping_a_referenced_parent_needs_cascade_or_its_children(tmp_path):
    catalog, parent, _child = _parent_and_child(tmp_path)
    with pytest.raises(DependentObjectsStillExist):
        catalog.drop_table("parent")
    catalog.drop_table("parent", with_tables=["child"])
    assert catalog.find_table("parent") is None


def test_drop_cascade_drops_only_the_key(tmp_path):
    catalog, parent, _child = _parent_and_child(tmp_path)
    catalog.drop_table("parent", cascade=True)
    assert catalog.get_table("child").foreign_keys == ()
    assert catalog.referencing(parent.table_id) == []
