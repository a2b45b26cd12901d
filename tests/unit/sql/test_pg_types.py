from __future__ import annotations

from sql.pg_catalog.builtin_types import BUILTIN_TYPES, TYPE_BY_OID


def test_every_oid_is_listed_once_and_arrays_point_back_at_their_element():
    assert len(TYPE_BY_OID) == len(BUILTIN_TYPES)
    for info in BUILTIN_TYPES:
        if info.array_oid:
            array = TYPE_BY_OID[info.array_oid]
            assert array.element_oid == info.oid
            assert array.name == "_" + info.name
            assert array.display == info.display + "[]"


def test_format_type_spellings_follow_postgresql():
    assert TYPE_BY_OID[23].display == "integer"
    assert TYPE_BY_OID[1043].display == "character varying"
    assert TYPE_BY_OID[1184].display == "timestamp with time zone"
    assert TYPE_BY_OID[18].display == '"char"'
    assert TYPE_BY_OID[1007].display == "integer[]"
