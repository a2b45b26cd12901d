from __future__ import annotations

import pytest

from storage import errors


def test_classes_are_found_by_sqlstate_and_share_postgresql_classes():
    assert errors.error_class("23505") is errors.UniqueViolation
    assert issubclass(errors.UniqueViolation, errors.IntegrityConstraintViolation)
    assert errors.error_class("99999") is errors.DbError


def test_a_sqlstate_cannot_be_registered_twice():
    with pytest.raises(TypeError):

        class Again(errors.DbError, sqlstate="23505"):
            pass


def test_fields_and_per_instance_severity():
    error = errors.UndefinedTable('relation "x" does not exist', position=15, hint="h")
    assert (error.sqlstate, error.severity, error.position, error.hint) == (
        "42P01",
        "ERROR",
        15,
        "h",
    )
    notice = errors.UndefinedTable("skipping", severity="NOTICE")
    assert notice.severity == "NOTICE" and errors.UndefinedTable.severity == "ERROR"
    assert errors.InvalidCatalogName("x").severity == "FATAL"
