"""time_spelling: PostgreSQL's time input spellings as DuckDB's, or None to leave them."""

from __future__ import annotations

import pytest

from sql.common.time_input import clock_text, time_spelling
from storage.errors import DatetimeFieldOverflow


@pytest.mark.parametrize(
    ("text", "with_zone", "spelt"),
    [
        ("1230", False, "12:30:00"),
        ("083015.25", False, "08:30:15.25"),
        ("12:30 pm", False, "12:30:00"),
        ("12:30:00.5 AM", False, "00:30:00.5"),
        ("24:00", False, "24:00:00"),
        ("23:59:59.9999999", False, "24:00:00"),
        ("12:30+02", False, "12:30:00"),
        ("12:30+02", True, "12:30:00+02"),
        ("1230+0530", True, "12:30:00+05:30"),
        ("12:30 z", True, "12:30:00+00"),
        ("allballs", True, "00:00:00+00"),
        ("abc", False, None),
    ],
)
def test_time_spelling(text, with_zone, spelt):
    assert time_spelling(text, with_zone=with_zone) == spelt


@pytest.mark.parametrize("text", ["13:30 pm", "24:00:01", "12:60"])
def test_time_fields_out_of_range_are_22008(text):
    with pytest.raises(DatetimeFieldOverflow):
        time_spelling(text, with_zone=False)


def test_clock_text_trims_fraction_zeros():
    assert clock_text(45_000_500_000) == "12:30:00.5"
    assert clock_text(86_400_000_000) == "24:00:00"
