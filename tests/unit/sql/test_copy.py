"""Unit tests for the frontend's COPY grammar: statement parsing and PostgreSQL's option rules."""

from __future__ import annotations

import pytest

from sql.frontend import parser
from sql.frontend.statements import CopyStatement
from storage import errors


def parse(sql: str):
    (statement,) = parser.parse(sql)
    assert isinstance(statement.ast, CopyStatement)
    return statement.ast


def test_table_columns_and_defaults_for_text():
    statement = parse('copy public."My T" (a, "B") from stdin')
    assert (statement.schema, statement.table, statement.columns) == ("public", "My T", ["a", "B"])
    assert statement.is_from
    options = statement.options
    assert (options.format, options.delimiter, options.null, options.header) == (
        "text", "\t", "\\N", False,
    )  # fmt: skip


def test_query_source_keeps_its_text():
    statement = parse("copy (select a, (1) from t where b = 'x') to stdout")
    assert statement.query_sql == "select a, (1) from t where b = 'x'"
    assert not statement.is_from


def test_parenthesised_options():
    options = parse(
        "copy t to stdout with (format csv, header true, delimiter ';', null 'N',"
        " quote '''', escape '\\', force_quote (a, b))"
    ).options
    assert (options.format, options.header, options.delimiter, options.null) == (
        "csv", True, ";", "N",
    )  # fmt: skip
    assert (options.quote, options.escape, options.force_quote) == ("'", "\\", ("a", "b"))


def test_legacy_options():
    options = parse(
        "copy t from stdin csv header delimiter as '|' null as '' force not null a, b"
    ).options
    assert (options.format, options.header, options.delimiter, options.null) == (
        "csv", True, "|", "",
    )  # fmt: skip
    assert options.force_not_null == ("a", "b")
    assert parse("copy t to stdout csv force quote *").options.force_quote_all
    assert parse("copy t to stdout binary").options.is_binary


def test_csv_defaults():
    options = parse("copy t from stdin (format csv)").options
    assert (options.delimiter, options.null, options.quote, options.escape) == (",", "", '"', '"')


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("copy t from stdin (format xml)", errors.InvalidParameterValue),
        ("copy t from stdin (format csv, format csv)", errors.SqlSyntaxError),
        ("copy t from stdin (quote '|')", errors.FeatureNotSupported),
        ("copy t from stdin (format csv, force_quote (a))", errors.FeatureNotSupported),
        ("copy t to stdout (format csv, force_not_null (a))", errors.FeatureNotSupported),
        ("copy t from stdin (delimiter 'ab')", errors.FeatureNotSupported),
        ("copy t from stdin (format binary, header)", errors.FeatureNotSupported),
        ("copy t from stdin (format binary, delimiter ',')", errors.SqlSyntaxError),
        ("copy t from stdin (bogus 1)", errors.SqlSyntaxError),
        ("copy t from stdin (format csv, delimiter ',', quote ',')", errors.FeatureNotSupported),
        ("copy t from stdin (delimiter 'a')", errors.FeatureNotSupported),
        ("copy t from '/etc/passwd'", errors.InsufficientPrivilege),
        ("copy t to program 'cat'", errors.InsufficientPrivilege),
        ("copy t from stdout", errors.SqlSyntaxError),
        ("copy (select 1) from stdin", errors.SqlSyntaxError),
        ("copy t from stdin with (format csv) extra", errors.SqlSyntaxError),
        ("copy t from stdin (encoding 'LATIN1')", errors.FeatureNotSupported),
        ("copy t to stdout (header match)", errors.FeatureNotSupported),
        ("copy t to stdout (format csv, force_null (a))", errors.FeatureNotSupported),
        ("copy t from stdin (force_null (a))", errors.FeatureNotSupported),
    ],
)
def test_invalid_statements_raise_postgresql_errors(sql, error):
    with pytest.raises(error):
        parse(sql)
