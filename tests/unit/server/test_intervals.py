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
    array = pa.array(
        [pa.MonthDayNano([1, 2, 3_000]), None], pa.month_day_nano_interval()
    )
    assert text_interval(array).to_pylist() == ["1 mon 2 days 00:00:00.000003", None]
    wire = binary_interval(array)
    assert wire[0].tobytes() == (3).to_bytes(8, "big") + (2).to_bytes(4, "big") + (1).to_bytes(4, "big")
