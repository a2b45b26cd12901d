"""FOR SYSTEM_TIME AS OF literals become storage snapshot timestamps."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlglot
from sqlglot import exp

from sql.planner.time_travel import snapshot_of
from storage.errors import FeatureNotSupported, InvalidDatetimeFormat
from storage.timestamp import from_datetime


def _table(sql: str) -> exp.Table:
    return sqlglot.parse_one(sql, read="postgres").find(exp.Table)


def test_literal_with_and_without_zone():
    node = _table("select * from t for system_time as of '2026-01-02 03:04:05+02'")
    when = dt.datetime(2026, 1, 2, 1, 4, 5, tzinfo=dt.UTC)
    assert snapshot_of(node) == int(from_datetime(when))
    node = _table("select * from t for system_time as of '2026-01-02 01:04:05'")
    assert snapshot_of(node) == int(from_datetime(when))
    assert snapshot_of(_table("select * from t")) is None


def test_bad_literals():
    with pytest.raises(InvalidDatetimeFormat):
        snapshot_of(_table("select * from t for system_time as of 'yesterday-ish'"))
    with pytest.raises(FeatureNotSupported):
        snapshot_of(_table("select * from t for system_time as of now()"))
