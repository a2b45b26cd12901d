from __future__ import annotations

import pyarrow as pa
import pytest

from server.intervals import binary_interval, interval_text, text_interval

HOUR = 3_600_000_000


@pytest.mark.parametrize(
    ("months", "days", "micros", "text"),
    [
        (0, 1, 0, "1 day"),
        (0, 2, 0, "2 days"),
        (0, 0, HOUR, "01:00:00"),
        (0, 0, 0, "00:00:00"),
        (14, 3, 0, "1 year 2 mons 3 days"),
        (0, -1, 2 * HOUR, "-1 days +02:00:00"),
        (0, 1, -2 * HOUR, "1 day -02:00:00"),
        (-14, 0, 0, "-1 years -2 mons"),
        (0, 0, 100 * HOUR + 1_500_000, "100:00:01.5"),
        (0, 0, 1, "00:00:00.000001"),
        (1, 0, 0, "1 mon"),
    ],
)
def test_interval_text_as_postgresql_writes_it(months, days, micros, text):
    assert interval_text(months, days, micros) == text


def test_interval_columns_encode_in_text_and_binary():
    array = pa.array([pa.MonthDayNano([1, 2, 3_000]), None], pa.month_day_nano_interval())
    assert text_interval(array).to_pylist() == ["1 mon 2 days 00:00:00.000003", None]
    wire = binary_interval(array)
    assert wire[0].tobytes() == (3).to_bytes(8, "big") + (2).to_bytes(4, "big") + (1).to_bytes(
        4, "big"
    )


@pytest.mark.parametrize(
    ("months", "days", "micros", "style", "text"),
    [
        (
            14,
            3,
            4 * HOUR + 306_500_000,
            "postgres_verbose",
            "@ 1 year 2 mons 3 days 4 hours 5 mins 6.5 secs",
        ),
        (-14, 0, 0, "postgres_verbose", "@ 1 year 2 mons ago"),
        (0, 1, -2 * HOUR, "postgres_verbose", "@ 1 day -2 hours"),
        (0, 0, 0, "postgres_verbose", "@ 0"),
        (14, 0, 0, "sql_standard", "1-2"),
        (0, -1, 2 * HOUR, "sql_standard", "+0-0 -1 +2:00:00"),
        (0, -3, 0, "sql_standard", "-3 0:00:00"),
        (0, 0, 0, "sql_standard", "0"),
        (14, 3, 4 * HOUR + 306_500_000, "iso_8601", "P1Y2M3DT4H5M6.5S"),
        (0, 0, -1_250_000, "iso_8601", "PT-1.25S"),
        (0, 0, 0, "iso_8601", "PT0S"),
    ],
)
def test_interval_styles_as_postgresql_writes_them(months, days, micros, style, text):
    array = pa.array([(months, days, micros * 1000)], pa.month_day_nano_interval())
    assert text_interval(array, style).to_pylist() == [text]
