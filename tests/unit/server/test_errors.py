"""Exceptions to ErrorResponse / NoticeResponse fields."""

from __future__ import annotations

import logging

from server.errors import error_response, is_fatal, notice_response
from storage.errors import (
    ActiveSqlTransaction,
    DbError,
    DuplicateCursor,
    DuplicatePreparedStatement,
    IdleInTransactionSessionTimeout,
    InvalidCatalogName,
    SqlSyntaxError,
    UndefinedTable,
    error_class,
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


def test_the_servers_own_errors_carry_their_sqlstates():
    error = DuplicatePreparedStatement('prepared statement "s" already exists')
    assert error_response(error).get("C") == "42P05"
    assert error_response(DuplicateCursor('cursor "c" already exists')).get("C") == "42P03"
    fatal = error_response(IdleInTransactionSessionTimeout("idle"))
    assert (fatal.get("S"), fatal.get("C")) == ("FATAL", "25P03")
    assert error_class("42P01") is UndefinedTable
