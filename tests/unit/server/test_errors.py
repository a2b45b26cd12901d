"""Exceptions to ErrorResponse / NoticeResponse fields."""

from __future__ import annotations

import logging

from server.errors import coded_error, error_response, is_fatal, notice_response
from storage.errors import (
    ActiveSqlTransaction,
    DbError,
    InvalidCatalogName,
    SqlSyntaxError,
    UndefinedTable,
)


def test_db_error_maps_to_s_v_c_m_d_h_p():
    error = SqlSyntaxError('syntax error at or near "x"', detail="Some detail.", hint="Try y.",
                           position=8)  # fmt: skip
    assert error_response(error).fields == (
        ("S", "ERROR"),
        ("V", "ERROR"),
        ("C", "42601"),
        ("M", 'syntax error at or near "x"'),
        ("D", "Some detail."),
        ("H", "Try y."),
        ("P", "8"),
    )


def test_optional_fields_are_left_out():
    response = error_response(UndefinedTable('relation "t" does not exist'))
    assert [code for code, _ in response.fields] == ["S", "V", "C", "M"]


def test_unexpected_exception_is_xx000_and_logged(caplog):
    with caplog.at_level(logging.ERROR, logger="server.errors"):
        response = error_response(KeyError("boom"))
    assert response.get("C") == "XX000"
    assert response.get("M") == "'boom'"
    assert caplog.records[0].exc_info is not None


def test_fatal_severity_comes_from_the_class_or_the_caller():
    assert error_response(InvalidCatalogName("no such database")).get("S") == "FATAL"
    assert is_fatal(InvalidCatalogName("x"))
    assert not is_fatal(UndefinedTable("x"))
    assert error_response(UndefinedTable("x"), severity="FATAL").get("V") == "FATAL"


def test_notice_takes_its_severity_from_the_error():
    notice = notice_response(ActiveSqlTransaction("there is already a transaction in progress"))
    assert (notice.get("S"), notice.get("C")) == ("WARNING", "25001")
    assert notice_response(DbError("hello", severity="NOTICE")).get("S") == "NOTICE"
    assert notice_response(UndefinedTable("x")).get("S") == "NOTICE"


def test_coded_error_carries_a_sqlstate_without_a_class():
    error = coded_error("42P05", 'prepared statement "s" already exists')
    assert error_response(error).get("C") == "42P05"
    assert coded_error("42P01", "x").__class__ is UndefinedTable
