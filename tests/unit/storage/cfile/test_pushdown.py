"""Block skipping by min/max: only blocks that cannot hold a match are skipped."""

from __future__ import annotations

import datetime as dt
import decimal

from storage import data_type as T
from storage.cfile.pushdown import block_may_match
from storage.cfile.reader import BlockMeta
from storage.predicate import ColumnPredicate as P


def _meta(lo, hi, nulls=0, rows=10):
    return BlockMeta(0, 0, 0, rows, nulls, lo, hi)


def test_ranges_equality_and_in_lists_on_integers():
    meta = _meta(10, 20)
    assert block_may_match(P.equality(1, 10), meta, T.INT64)
    assert not block_may_match(P.equality(1, 21), meta, T.INT64)
    assert not block_may_match(P.range(1, 20, lower_inclusive=False), meta, T.INT64)
    assert block_may_match(P.range(1, 20), meta, T.INT64)
    assert not block_may_match(P.range(1, None, 10), meta, T.INT64)
    assert block_may_match(P.range(1, None, 10, upper_inclusive=True), meta, T.INT64)
    assert block_may_match(P.in_list(1, [1, 15]), meta, T.INT64)
    assert not block_may_match(P.in_list(1, [1, 25]), meta, T.INT64)
    assert block_may_match(P.equality(1, 15.5), meta, T.INT64)


def test_nulls_and_unknown_bounds():
    assert not block_may_match(P.equality(1, 5), _meta(None, None, nulls=10), T.INT64)
    assert block_may_match(P.is_null(1), _meta(1, 2, nulls=1), T.INT64)
    assert not block_may_match(P.is_null(1), _meta(1, 2), T.INT64)
    assert not block_may_match(P.is_not_null(1), _meta(None, None, nulls=10), T.INT64)
    assert block_may_match(P.equality(1, 5.0), _meta(None, None, nulls=1), T.DOUBLE)


def test_strings_prefixes_binary_decimals_dates_and_timestamps():
    assert block_may_match(P.prefix(1, "app"), _meta("apple", "banana"), T.STRING)
    assert not block_may_match(P.prefix(1, "cherry"), _meta("apple", "banana"), T.STRING)
    assert not block_may_match(P.equality(1, b"\x09"), _meta("0a", "ff"), T.BINARY)
    assert block_may_match(
        P.equality(1, decimal.Decimal("1.5")), _meta("1.00", "2.00"), T.decimal(5, 2)
    )
    days = (dt.date(2024, 1, 1) - dt.date(1970, 1, 1)).days
    assert block_may_match(P.equality(1, dt.date(2024, 1, 1)), _meta(days, days), T.DATE)
    assert not block_may_match(P.equality(1, dt.date(2024, 1, 2)), _meta(days, days), T.DATE)
    micros = 1_700_000_000_000_000
    when = dt.datetime.fromtimestamp(micros / 1e6, dt.UTC)
    assert block_may_match(P.equality(1, when), _meta(micros, micros), T.TIMESTAMPTZ)
    assert not block_may_match(
        P.range(1, when, upper_inclusive=False, lower_inclusive=False),
        _meta(micros, micros),
        T.TIMESTAMPTZ,
    )
