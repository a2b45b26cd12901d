from __future__ import annotations

import pytest

from sql.pg_catalog.catalog_rows import (
    PUBLIC_OID,
    CatalogRows,
    catalog_rows,
    constraint_oid,
    index_oid,
)
from sql.pg_catalog.relations import RELATIONS, relation_oid
from storage import data_type as t
from tests.unit.sql.conftest import make_table


def _as_dicts(rows: CatalogRows, relation: str) -> list[dict]:
    names = [c for c, _ in RELATIONS[relation]]
    return [dict(zip(names, r, strict=True)) for r in rows.rows[relation]]


@pytest.fixture
def rows() -> CatalogRows:
    orders = make_table(3, "orders", [("id", t.INT64), ("amount", t.decimal(10, 2))])
    return catalog_rows(
        [orders],
        "nyala",
        "alice",
        [("TimeZone", "UTC", "", "user", "string", "")],
        {(orders.oid, 2): "n"},
    )


def test_a_table_has_a_class_row_attributes_and_a_primary_key(rows):
    classes = {r["relname"]: r for r in _as_dicts(rows, "pg_class")}
    table = classes["orders"]
    assert table["oid"] == 16384 + 3
    assert (table["relkind"], table["relnamespace"], table["relhasindex"]) == (
        "r",
        PUBLIC_OID,
        True,
    )
    assert classes["orders_pkey"]["relkind"] == "i"
    attrs = [r for r in _as_dicts(rows, "pg_attribute") if r["attrelid"] == table["oid"]]
    assert [(a["attname"], a["attnum"], a["atttypid"], a["atttypmod"]) for a in attrs] == [
        ("id", 1, 20, -1),
        ("amount", 2, 1700, (10 << 16 | 2) + 4),
    ]
    assert attrs[0]["attnotnull"] and not attrs[1]["attnotnull"]
    (index,) = _as_dicts(rows, "pg_index")
    assert (index["indexrelid"], index["indrelid"], index["indkey"]) == (
        classes["orders_pkey"]["oid"],
        table["oid"],
        [1],
    )
    (con,) = _as_dicts(rows, "pg_constraint")
    assert (con["contype"], con["conkey"], con["conindid"]) == ("p", [1], index["indexrelid"])


def test_oids_are_stable_and_distinct():
    table = make_table(7, "x", [("id", t.INT32)])
    assert len({table.oid, index_oid(table), constraint_oid(table)}) == 3
    assert relation_oid("pg_class") == 1259
    assert relation_oid("pg_type") == 1247


def test_comments_settings_and_the_user_appear(rows):
    descriptions = _as_dicts(rows, "pg_description")
    (desc,) = [d for d in descriptions if d["classoid"] == relation_oid("pg_class")]
    assert (desc["objsubid"], desc["description"]) == (2, "n")
    (schema,) = [d for d in descriptions if d["classoid"] == relation_oid("pg_namespace")]
    assert (schema["objoid"], schema["description"]) == (2200, "standard public schema")
    assert [r["rolname"] for r in _as_dicts(rows, "pg_roles")] == [
        "alice", "pg_read_all_stats", "pg_signal_backend", "pg_read_all_data",
        "pg_write_all_data",
    ]  # fmt: skip
    assert ("TimeZone", "UTC") in [
        (r["name"], r["setting"]) for r in _as_dicts(rows, "pg_settings")
    ]
    assert {r["nspname"] for r in _as_dicts(rows, "pg_namespace")} >= {"public", "pg_catalog"}


def test_an_unknown_column_is_refused():
    with pytest.raises(KeyError):
        CatalogRows().add("pg_am", nope=1)


@pytest.mark.parametrize(
    "default, dtype, shown",
    [
        ("'abc'", t.STRING, "'abc'::text"),
        ("'x'", t.varchar(5), "'x'::character varying"),
        ("'it''s'", t.STRING, "'it''s'::text"),
        ("TRUE", t.BOOL, "true"),
        ("1.5", t.decimal(5, 2), "1.5"),
        ("-1", t.INT64, "'-1'::integer"),
        ("-5000000000", t.INT64, "'-5000000000'::bigint"),
        ("-0.5", t.DOUBLE, "'-0.5'::numeric"),
        ("7", t.INT32, "7"),
    ],
)
def test_defaults_are_shown_as_pg_get_expr_shows_them(default, dtype, shown):
    from sql.pg_catalog.catalog_rows import default_expr

    assert default_expr(default, dtype) == shown
