from __future__ import annotations

from sqlglot import exp

from sql.names import identifier_name


def test_unquoted_names_fold_to_lower_case_and_quoted_names_are_kept():
    assert identifier_name(exp.to_identifier("MyTable")) == "mytable"
    assert identifier_name(exp.to_identifier("MyTable", quoted=True)) == "MyTable"
    assert identifier_name(exp.to_table("Tbl")) == "tbl"
