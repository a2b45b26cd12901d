from __future__ import annotations

from sqlglot import exp

from sql.common.names import identifier_name


def test_unquoted_names_fold_to_lower_case_and_quoted_names_are_kept():
    assert identifier_name(exp.to_identifier("MyTable")) == "mytable"
    assert identifier_name(exp.to_identifier("MyTable", quoted=True)) == "MyTable"
    assert identifier_name(exp.to_table("Tbl")) == "tbl"


def test_public_is_the_only_schema():
    import pytest

    from sql.common.names import table_name
    from storage.errors import FeatureNotSupported, InvalidSchemaName

    assert table_name(exp.to_table("public.T")) == "t"
    with pytest.raises(InvalidSchemaName):
        table_name(exp.to_table("other.t"))
    with pytest.raises(FeatureNotSupported):
        table_name(exp.to_table("pg_catalog.pg_class"))
