"""value_rows frames a read by key's ShortRows exactly as pgtypes encodes their batch."""

from __future__ import annotations

import datetime as dt
import random
import struct
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from server import pgtypes, value_rows
from server.portal import ResultStream
from sql.common.result import ReadPause, Result, ResultColumn, ShortRows
from sql.execution.direct_shape import DirectShape
from storage.type_oids import TypeOid

_RNG = random.Random(5)
_DOUBLES = [
    0.0, -0.0, 1.0, -1.5, 0.1, 1 / 3, 100.0, 1e15, 1e15 - 1, 999999999999999.9, 1e16, 1e-4,
    9.99e-5, 1e-5, 1.5e-7, 1e-10, 1.25e-11, 1e300, -2.5e-300, 5e-324, 1.7976931348623157e308,
    123456.789, float("nan"), float("inf"), float("-inf"), 2.0**53, 1e22, 12345678901234.5,
    *(_RNG.uniform(-1, 1) * 10 ** _RNG.randint(-12, 20) for _ in range(300)),
]  # fmt: skip
_REALS = [
    float(np.float32(v))
    for v in (
        0.0, -0.0, 1.0, 0.1, 1 / 3, 1e6, 999999.0, 999999.9, 1e7, 1e-4, 9.9e-5, 3.4e38, 1.17e-38,
        1e-45, 123.456, float("nan"), float("inf"), float("-inf"),
        *(_RNG.uniform(-1, 1) * 10 ** _RNG.randint(-12, 12) for _ in range(300)),
    )
]  # fmt: skip
_CASES: list[tuple[int, pa.DataType, list[Any]]] = [
    (TypeOid.INT2, pa.int16(), [0, -1, 32767, -32768, None, 12]),
    (TypeOid.INT4, pa.int32(), [0, -(2**31), 2**31 - 1, None, 7]),
    (TypeOid.INT8, pa.int64(), [0, -(2**63), 2**63 - 1, None, 42]),
    (TypeOid.BOOL, pa.bool_(), [True, False, None]),
    (TypeOid.TEXT, pa.string(), ["", "abc", "é漢字\U0001f600", None, "x\ny", "a\x01b"]),
    (TypeOid.VARCHAR, pa.string(), ["v", None, "  padded  "]),
    (TypeOid.BYTEA, pa.binary(), [b"", b"\x00\xff\\ab", None, bytes(range(256))]),
    (TypeOid.FLOAT8, pa.float64(), [*_DOUBLES, None]),
    (TypeOid.FLOAT4, pa.float32(), [*_REALS, None]),
    (TypeOid.DATE, pa.date32(), [dt.date(2000, 1, 1), dt.date(1, 1, 1), dt.date(9999, 12, 31),
                                 dt.date(1999, 12, 31), dt.date(1970, 1, 1), None]),
    (TypeOid.TIMESTAMP, pa.timestamp("us"), [
        dt.datetime(2000, 1, 1), dt.datetime(1, 1, 1, 0, 0, 0, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
        dt.datetime(2024, 2, 29, 13, 5, 7, 120000), dt.datetime(1969, 7, 20, 20, 17, 40, 500), None,
    ]),
]  # fmt: skip
_SETTINGS = [
    (1, "ISO, MDY", "hex"),
    (0, "ISO, MDY", "hex"),
    (3, "ISO, DMY", "hex"),
    (-5, "SQL, DMY", "escape"),
    (1, "German, DMY", "hex"),
    (2, "Postgres, MDY", "escape"),
]


def _short(batch: pa.RecordBatch, oids: tuple[int, ...]) -> ShortRows:
    columns = tuple(ResultColumn(f"c{i}", oid) for i, oid in enumerate(oids))
    shape = DirectShape(
        columns, tuple(range(len(oids))), [c.name for c in columns], oids, (-1,) * len(oids)
    )
    return ShortRows(batch, shape, "UTC")


def _both(rows: ShortRows, oids: tuple[int, ...], formats: tuple[int, ...], settings: Any) -> Any:
    digits, style, bytea = settings
    fast = value_rows.encode(rows, oids, formats, digits, style, bytea)
    general = pgtypes.encode_rows(
        rows.batch(), oids, formats, b"D", digits, style, "postgres", bytea
    )
    return fast, general


@pytest.mark.parametrize(("oid", "arrow_type", "values"), _CASES)
@pytest.mark.parametrize("format_code", [0, 1])
@pytest.mark.parametrize("settings", _SETTINGS)
def test_rows_framed_from_values_are_the_batchs_bytes(
    oid: int, arrow_type: pa.DataType, values: list[Any], format_code: int, settings: Any
) -> None:
    batch = pa.record_batch([pa.array(values, arrow_type)], names=["c0"])
    oids, formats = (oid,), (format_code,)
    for start in range(batch.num_rows):  # a row at a time, as a point select's
        fast, general = _both(_short(batch.slice(start, 1), oids), oids, formats, settings)
        assert fast is None or fast == general, (values[start], fast, general)
    fast, general = _both(_short(batch, oids), oids, formats, settings)
    assert fast is None or fast == general
    digits, style, bytea = settings
    falls_back = format_code == 0 and (
        (oid == TypeOid.BYTEA and bytea != "hex")
        or (oid in (TypeOid.FLOAT4, TypeOid.FLOAT8) and digits <= 0)
        or (oid in (TypeOid.DATE, TypeOid.TIMESTAMP) and not style.startswith("ISO"))
    )
    assert (fast is None) == falls_back


def test_several_columns_and_rows_with_nulls() -> None:
    arrays = [pa.array(v, t) for _, t, v in _CASES[:6]]
    rows = max(len(a) for a in arrays)
    arrays = [pa.concat_arrays([a, pa.nulls(rows - len(a), a.type)]) for a in arrays]
    batch = pa.record_batch(arrays, names=[f"c{i}" for i in range(len(arrays))])
    oids = tuple(oid for oid, _, _ in _CASES[:6])
    for formats in ((0,) * 6, (1,) * 6, (0, 1, 0, 1, 0, 1)):
        fast, general = _both(_short(batch, oids), oids, formats, _SETTINGS[0])
        assert fast is not None and fast == general


def test_a_column_without_a_row_encoder_takes_the_batch() -> None:
    batch = pa.record_batch(
        [pa.array([1]), pa.array([dt.datetime(2020, 1, 1)], pa.timestamp("us", tz="UTC"))],
        names=["a", "b"],
    )
    oids = (TypeOid.INT8, TypeOid.TIMESTAMPTZ)
    assert value_rows.encode(_short(batch, oids), oids, (0, 0), 1, "ISO, MDY", "hex") is None


@pytest.mark.parametrize(
    ("arrow_type", "raw"),
    [(pa.date32(), [2**31 - 1, -(2**31 - 1), -800_000, 3_000_000]),
     (pa.timestamp("us"), [2**63 - 1, -(2**63 - 1), -70_000_000_000_000_000])],
)  # fmt: skip
def test_dates_beyond_pythons_take_the_batch(arrow_type: pa.DataType, raw: list[int]) -> None:
    oid = TypeOid.DATE if arrow_type == pa.date32() else TypeOid.TIMESTAMP
    storage = pa.int32() if oid == TypeOid.DATE else pa.int64()
    for value in raw:
        array = pa.array([value], storage).cast(arrow_type)
        rows = _short(pa.record_batch([array], names=["d"]), (oid,))
        assert rows.values() is None
        for format_code in (0, 1):
            fast, _ = _both(rows, (oid,), (format_code,), _SETTINGS[0])
            assert fast is None


def test_a_column_to_wire_would_change_gives_no_values() -> None:
    """An int32 column sent as int8 (``to_wire`` casts it): no values, the batch instead."""
    batch = pa.record_batch([pa.array([5], pa.int32())], names=["a"])
    rows = _short(batch, (TypeOid.INT8,))
    assert rows.values() is None
    fast, general = _both(rows, (TypeOid.INT8,), (1,), _SETTINGS[0])
    assert fast is None and general.endswith(struct.pack("!iq", 8, 5))


def test_a_portal_hands_short_rows_out_as_it_hands_out_their_batch() -> None:
    """Execute with a row limit (PortalSuspended between), and whole (fetch_all)."""
    batch = pa.record_batch(
        [pa.array([1, 2, None]), pa.array(["a", None, "c"])], names=["c0", "c1"]
    )
    oids = (TypeOid.INT8, TypeOid.TEXT)
    columns = tuple(ResultColumn(f"c{i}", oid) for i, oid in enumerate(oids))

    def streams(formats: tuple[int, ...]) -> tuple[ResultStream, ResultStream]:
        short = Result(columns, iter([_short(batch, oids)]), pause=ReadPause())
        return ResultStream(short, formats), ResultStream(Result(columns, iter([batch])), formats)

    for formats in ((), (1,), (0, 1)):
        fast, general = streams(formats)
        for _ in range(3):
            assert fast.fetch(2) == general.fetch(2)
        fast, general = streams(formats)
        assert fast.fetch_all() == general.fetch_all()
        assert fast.rows.is_exhausted
