from __future__ import annotations

import duckdb
import pytest

from sql.pg_catalog.catalog_rows import catalog_rows, constraint_oid, index_oid
from sql.pg_catalog.functions import CatalogFunctions, names, register
from storage import data_type as t
from storage.errors import AmbiguousFunction, UndefinedFunction
from tests.unit.sql.conftest import make_table

ORDERS = make_table(
    1, "orders", [("id", t.INT64), ("line", t.INT32), ("note", t.varchar(20))], key=2
)


@pytest.fixture
def functions() -> CatalogFunctions:
    f = CatalogFunctions()
    f.load(
        catalog_rows(
            [ORDERS],
            "nyala",
            "nyala",
            [("search_path", "public", "", "user", "string", "")],
            {(ORDERS.oid, 0): "o"},
        )
    )
    return f


def test_format_type(functions):
    assert functions.format_type(1700, (10 << 16 | 2) + 4) == "numeric(10,2)"
    assert functions.format_type(1043, 24) == "character varying(20)"
    assert functions.format_type(23, -1) == "integer"
    assert functions.format_type(99999, -1) == "???"
    assert functions.format_type(None, -1) is None


def test_index_and_constraint_definitions(functions):
    assert functions.indexdef(index_oid(ORDERS), 0) == (
        "CREATE UNIQUE INDEX orders_pkey ON public.orders USING btree (id, line)"
    )
    assert functions.indexdef(index_oid(ORDERS), 2) == "line"
    assert functions.constraintdef(constraint_oid(ORDERS)) == "PRIMARY KEY (id, line)"
    assert functions.constraintdef(12345) is None


def test_reg_casts_and_lookups(functions):
    assert functions.regclass_in("orders") == ORDERS.oid
    assert functions.regclass_in('public."orders"') == ORDERS.oid
    assert functions.regclass_in("pg_catalog.pg_class") == 1259
    assert functions.to_regclass("nope") is None
    assert functions.regclass_out(ORDERS.oid) == "orders"
    assert functions.to_regtype("integer") == 23
    assert functions.to_regtype("hstore") is None
    assert functions.description(ORDERS.oid, 0) == "o"
    assert functions.current_setting("SEARCH_PATH") == "public"
    assert functions.table_is_visible(ORDERS.oid) is True


def test_size_pretty_rounds_as_postgresql():
    assert CatalogFunctions.size_pretty("8192", "BIGINT") == "8192 bytes"
    assert CatalogFunctions.size_pretty(str(10 * 1024), "BIGINT") == "10 kB"
    assert CatalogFunctions.size_pretty(str(5 * 1024 * 1024), "BIGINT") == "5120 kB"
    assert CatalogFunctions.size_pretty("-12345678901234", "BIGINT") == "-11 TB"
    assert CatalogFunctions.size_pretty("12345678901234.000", "DECIMAL(18,3)") == "11 TB"
    assert CatalogFunctions.size_pretty("1.500", "DECIMAL(18,3)") == "1.5 bytes"
    assert CatalogFunctions.size_pretty(str(2**63 * 1024), "DECIMAL(38,0)") == "8388608 PB"
    assert CatalogFunctions.size_pretty(None, "BIGINT") is None
    with pytest.raises(AmbiguousFunction):
        CatalogFunctions.size_pretty("12", "VARCHAR")
    with pytest.raises(AmbiguousFunction):
        CatalogFunctions.size_pretty("12", "INTEGER")
    with pytest.raises(UndefinedFunction):
        CatalogFunctions.size_pretty("1.5", "DOUBLE")


def test_registered_macros_answer_with_optional_arguments(functions):
    duck = duckdb.connect()
    try:
        register(duck, lambda: functions)
        (row,) = duck.sql(
            f"select pgf_pg_get_indexdef({index_oid(ORDERS)}), "
            f"pgf_pg_get_indexdef({index_oid(ORDERS)}, 1, true), pgf_format_type(21, NULL)"
        ).fetchall()
        assert row == (
            "CREATE UNIQUE INDEX orders_pkey ON public.orders USING btree (id, line)",
            "id",
            "smallint",
        )
    finally:
        duck.close()
    assert {"format_type", "pg_get_indexdef", "col_description"} <= names()


def test_reg_input_of_an_unknown_name_is_an_error_but_to_reg_is_null(functions):
    from storage import errors

    with pytest.raises(errors.UndefinedTable):
        functions.regclass_in("nope")
    with pytest.raises(errors.UndefinedObject):
        functions.regtype_in("nope")
    assert functions.to_regclass("nope") is None
    assert functions.regtype_in("int4") == 23
