"""far_dates: the calendar arithmetic against Python's own, and the respelling of only the
rows Arrow cannot write."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given
from hypothesis import strategies as st

from server import far_dates

EPOCH = dt.date(1970, 1, 1)


@given(st.dates())
def test_civil_agrees_with_python(day):
    assert far_dates.civil((day - EPOCH).days) == (day.year, day.month, day.day)


def test_the_edges_of_arrow_and_of_postgres():
    assert far_dates.civil(far_dates.LAST_DAY) == (32767, 12, 31)
    assert far_dates.civil(far_dates.FIRST_DAY) == (-32767, 1, 1)
    assert far_dates.civil(2_145_042_905) == (5874897, 12, 31)  # PostgreSQL's last date


def test_only_far_rows_are_respelt():
    days = pa.array([0, 108_853_222, None, far_dates.LAST_DAY], pa.int32()).cast(pa.date32())
    text = far_dates.respelt(days, pc.cast(days, pa.string()))
    assert text.to_pylist() == ["1970-01-01", "300000-01-01", None, "32767-12-31"]


def test_timestamps_keep_arrows_six_fraction_digits():
    micros = (far_dates.LAST_DAY + 1) * 86_400_000_000 + 3_723_000_001
    values = pa.array([micros, 0], pa.int64()).cast(pa.timestamp("us"))
    text = far_dates.respelt(values, pc.cast(values, pa.string()))
    assert text.to_pylist() == ["32768-01-01 01:02:03.000001", "1970-01-01 00:00:00.000000"]
