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


def test_parsed_statements_fold_unquoted_names_and_keep_quoted_ones():
    from sql.frontend.parser import parse

    [statement] = parse('SELECT Foo."Bar", BAZ AS Qux FROM Sch.TBL AS "T"')
    names = [(i.this, i.quoted) for i in statement.ast.find_all(exp.Identifier)]
    assert sorted(names) == sorted(
        [("foo", False), ("Bar", True), ("baz", False), ("qux", False), ("sch", False),
         ("tbl", False), ("T", True)]
    )  # fmt: skip


def test_only_ascii_letters_fold_as_in_postgresql():
    from sql.common.names import fold

    assert fold("ÄBC") == "Äbc"


def test_names_are_cut_to_63_bytes_at_a_character_boundary():
    from sql.common.names import truncate

    assert truncate("a" * 63) == "a" * 63
    assert truncate("a" * 70) == "a" * 63
    assert truncate("a" * 62 + "é") == "a" * 62
    assert len(truncate("é" * 40).encode()) == 62


def test_long_identifiers_are_truncated_with_a_notice():
    from sql.frontend.parser import parse, split, truncation_notices

    text = "SELECT x AS " + "B" * 70 + ', 1 AS "' + "C" * 64 + '"'
    [statement] = parse(text)
    aliases = [a.alias for a in statement.ast.expressions]
    assert aliases == ["b" * 63, "C" * 63]
    notices = truncation_notices(split(text)[0])
    assert [(n.sqlstate, n.severity) for n in notices] == [("42622", "NOTICE")] * 2
