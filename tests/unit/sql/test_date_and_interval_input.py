"""DateStyle values and PostgreSQL's date and interval input forms, read without a server.

Every answer here was checked against PostgreSQL 15 (the corpus file
tests/sql/corpus/datetime_styles.sql compares them there end to end).
"""

from __future__ import annotations

import pytest

from sql.common import date_input, date_styles, interval_input
from storage.errors import DatetimeFieldOverflow, InvalidParameterValue


@pytest.mark.parametrize(
    ("current", "value", "expected"),
    [
        ("ISO, MDY", "SQL", "SQL, MDY"),
        ("ISO, DMY", "Postgres", "Postgres, DMY"),
        ("ISO, MDY", "German", "German, DMY"),
        ("ISO, MDY", "German, MDY", "German, MDY"),
        ("SQL, MDY", "Euro", "SQL, DMY"),
        ("German, DMY", "ymd", "German, YMD"),
        ("SQL, DMY", "default", "ISO, MDY"),
        ("SQL, DMY", "", "SQL, DMY"),
    ],
)
def test_date_style_combines_with_the_current_value(current, value, expected):
    assert date_styles.combine(current, value) == expected


@pytest.mark.parametrize("value", ["ISO, SQL", "DMY, MDY", "foo"])
def test_bad_date_style_is_22023(value):
    with pytest.raises(InvalidParameterValue):
        date_styles.combine("ISO, MDY", value)


@pytest.mark.parametrize(
    ("text", "order", "expected"),
    [
        ("01/02/2024", "MDY", "2024-01-02"),
        ("01/02/2024", "DMY", "2024-02-01"),
        ("24/01/02", "YMD", "2024-01-02"),
        ("1/2/69", "MDY", "2069-01-02"),
        ("1/2/70", "MDY", "1970-01-02"),
        ("January 2, 2024", "DMY", "2024-01-02"),
        ("Tue Jan 02 03:04:05.5 2024 EST", "MDY", "2024-01-02 03:04:05.5 EST"),
        ("20240102", "MDY", "2024-01-02"),
        ("0044-03-15 BC", "MDY", "-0043-03-15"),
        ("0001-01-01 12:00 BC", "MDY", "0000-01-01 12:00"),
        ("2024-01-02", "DMY", None),
        ("today", "MDY", None),
        ("not a date", "MDY", None),
    ],
)
def test_dates_are_spelt_as_iso(text, order, expected):
    assert date_input.iso_spelling(text, order) == expected


@pytest.mark.parametrize("text", ["13/01/2024", "02/30/2024", "4714-11-23 BC", "0000-01-01"])
def test_dates_out_of_range_are_22008(text):
    with pytest.raises(DatetimeFieldOverflow):
        date_input.iso_spelling(text, "MDY")


@pytest.mark.parametrize(
    ("text", "sql_standard", "months", "days", "micros"),
    [
        ("P1Y2M3DT4H5M6S", False, 14, 3, 14_706_000_000),
        ("P0001-02-03T04:05:06", False, 14, 3, 14_706_000_000),
        ("P1.5W", False, 0, 10, 43_200_000_000),
        ("PT-1H30M", False, 0, 0, -1_800_000_000),
        ("1-2", False, 14, 0, 0),
        ("-1 2:03:04", False, 0, -1, 7_384_000_000),
        ("-1 2:03:04", True, 0, -1, -7_384_000_000),
        ("-1 years -2 mons +3 days -04:05:06", False, -14, 3, -14_706_000_000),
        ("@ 1 day ago", False, 0, -1, 0),
        ("1.5 months", False, 1, 15, 0),
        ("5", False, 0, 0, 5_000_000),
    ],
)
def test_intervals_are_spelt_for_duckdb(text, sql_standard, months, days, micros):
    spelled = interval_input.duckdb_spelling(text, sql_standard)
    assert spelled == f"{months} months {days} days {micros} microseconds"


@pytest.mark.parametrize("text", ["p1d", "PX", "1 fortnight"])
def test_unknown_interval_forms_are_left_to_duckdb(text):
    assert interval_input.duckdb_spelling(text) is None
