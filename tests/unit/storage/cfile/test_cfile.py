"""Round trips through cfiles for every (type, encoding, compression), and block-level checks."""

from __future__ import annotations

import datetime as dt
import decimal
import itertools

import numpy as np
import pyarrow as pa
import pytest

from storage import data_type as T
from storage.cfile.compression import CompressionType
from storage.cfile.encoding import EncodingType, allowed_encodings, resolve_encoding
from storage.cfile.reader import CFileReader
from storage.cfile.writer import write_cfile
from storage.errors import DataCorrupted, FeatureNotSupported
from storage.predicate import ColumnPredicate

BIG = "é" * 32_768  # 64 KiB of UTF-8

SAMPLES = {
    T.BOOL: [True, None, False, False, True],
    T.INT8: [-128, 127, None, 0, 0, 0],
    T.INT16: [-(2**15), 2**15 - 1, None, 7],
    T.INT32: [-(2**31), 2**31 - 1, None, 1, 1, 1, 2],
    T.INT64: [-(2**63), 2**63 - 1, None, 5, 5],
    T.FLOAT: [float("-inf"), 3.5, None, float("inf"), -0.0],
    T.DOUBLE: [1e308, -1e-308, None, 2.5, float("nan")],
    T.decimal(38, 4): [
        decimal.Decimal("9999999999999999999999999999999999.9999"),
        decimal.Decimal("-1.0001"),
        None,
        decimal.Decimal("0.0000"),
    ],
    T.STRING: ["", "ünïcødé ✓", None, "a", "a", BIG, "\x00nul"],
    T.varchar(10): ["abc", None, "abd", "abc"],
    T.BINARY: [b"", b"\x00\xff", None, b"x" * 65_536],
    T.DATE: [dt.date(1, 1, 1), dt.date(9999, 12, 31), None, dt.date(1970, 1, 1)],
    T.TIMESTAMP: [dt.datetime(1, 1, 1), None, dt.datetime(2038, 1, 19, 3, 14, 8)],
    T.TIMESTAMPTZ: [dt.datetime(2000, 1, 1, tzinfo=dt.UTC), None],
}

CASES = [
    (data_type, encoding, compression)
    for data_type in SAMPLES
    for encoding in sorted(allowed_encodings(data_type), key=lambda e: e.value)
    for compression in CompressionType
]


def _same(got: list[object], want: list[object]) -> bool:
    for g, w in zip(got, want, strict=True):
        if isinstance(w, float) and w != w:
            if not (isinstance(g, float) and g != g):
                return False
        elif g != w:
            return False
    return True


@pytest.mark.parametrize(
    ("data_type", "encoding", "compression"),
    CASES,
    ids=[f"{t.pg_name()}-{e.value}-{c.value}" for t, e, c in CASES],
)
def test_round_trip_with_nulls_extremes_and_small_blocks(
    tmp_path, data_type, encoding, compression
):
    values = SAMPLES[data_type] * 3
    array = pa.array(values, type=data_type.arrow_type)
    path = tmp_path / "c.cfile"
    write_cfile(path, array, data_type, encoding, compression, fsync=False, block_rows=4)
    reader = CFileReader(path)
    assert reader.rows == len(values)
    assert len(reader.blocks) == (len(values) + 3) // 4
    assert _same(reader.read_all().to_pylist(), values)
    block = reader.read_block(1)
    last = block.rows - 1
    picked = block.to_arrow(np.array([last, 0])).to_pylist()
    assert _same(picked, [values[4 + last], values[4]])
    if (
        compression is CompressionType.DEFAULT_COMPRESSION
        and encoding is EncodingType.AUTO_ENCODING
    ):
        assert reader.encoding in (
            resolve_encoding(data_type, encoding),
            EncodingType.PLAIN_ENCODING,
        )


@pytest.mark.parametrize("data_type", list(SAMPLES), ids=lambda t: t.pg_name())
def test_empty_and_all_null_columns(tmp_path, data_type):
    empty = tmp_path / "empty.cfile"
    write_cfile(empty, pa.array([], data_type.arrow_type), data_type, fsync=False)
    reader = CFileReader(empty)
    assert reader.rows == 0 and reader.blocks == [] and reader.read_all().to_pylist() == []
    nulls = tmp_path / "nulls.cfile"
    write_cfile(nulls, pa.nulls(5, data_type.arrow_type), data_type, fsync=False)
    reader = CFileReader(nulls)
    assert reader.read_all().to_pylist() == [None] * 5
    assert reader.blocks[0].null_count == 5 and reader.blocks[0].min is None


def test_default_encodings_follow_kudu_table_1():
    auto = EncodingType.AUTO_ENCODING
    assert resolve_encoding(T.INT32, auto) is EncodingType.BIT_SHUFFLE
    assert resolve_encoding(T.DOUBLE, auto) is EncodingType.BIT_SHUFFLE
    assert resolve_encoding(T.TIMESTAMP, auto) is EncodingType.BIT_SHUFFLE
    assert resolve_encoding(T.BOOL, auto) is EncodingType.RLE
    assert resolve_encoding(T.STRING, auto) is EncodingType.DICT_ENCODING
    with pytest.raises(FeatureNotSupported):
        resolve_encoding(T.DOUBLE, EncodingType.RLE)
    with pytest.raises(FeatureNotSupported):
        resolve_encoding(T.STRING, EncodingType.BIT_SHUFFLE)


def test_dictionary_falls_back_to_plain_when_values_are_mostly_distinct(tmp_path):
    path = tmp_path / "d.cfile"
    write_cfile(path, pa.array([f"v{i}" for i in range(1000)]), T.STRING, fsync=False)
    assert CFileReader(path).encoding is EncodingType.PLAIN_ENCODING
    write_cfile(path, pa.array(["a", "b"] * 500), T.STRING, fsync=False)
    reader = CFileReader(path)
    assert reader.encoding is EncodingType.DICT_ENCODING
    assert reader.dictionary.to_pylist() == ["a", "b"]


def test_blocks_carry_min_max_and_null_counts(tmp_path):
    path = tmp_path / "m.cfile"
    values = list(range(100)) + [None]
    write_cfile(path, pa.array(values, pa.int64()), T.INT64, fsync=False, block_rows=50)
    reader = CFileReader(path)
    assert [(b.first_rowid, b.rows, b.null_count, b.min, b.max) for b in reader.blocks] == [
        (0, 50, 0, 0, 49),
        (50, 50, 0, 50, 99),
        (100, 1, 1, None, None),
    ]
    assert (
        reader.block_index(0) == 0 and reader.block_index(99) == 1 and reader.block_index(100) == 2
    )


def test_predicates_run_on_dictionary_codewords_and_rle_runs(tmp_path):
    path = tmp_path / "p.cfile"
    write_cfile(path, pa.array(["red", "green", None, "red"] * 10), T.STRING, fsync=False)
    block = CFileReader(path).read_block(0)
    mask, on_encoded = block.evaluate(ColumnPredicate.equality(0, "red"))
    assert on_encoded and int(mask.sum()) == 20 and not mask[2]
    mask, _ = block.evaluate(ColumnPredicate.is_null(0))
    assert int(mask.sum()) == 10
    write_cfile(
        path, pa.array([1] * 30 + [2] * 30, pa.int32()), T.INT32, EncodingType.RLE, fsync=False
    )
    block = CFileReader(path).read_block(0)
    mask, on_encoded = block.evaluate(ColumnPredicate.range(0, 2))
    assert on_encoded and mask.tolist() == [False] * 30 + [True] * 30
    write_cfile(path, pa.array(list(range(10)), pa.int32()), T.INT32, fsync=False)
    mask, on_encoded = CFileReader(path).read_block(0).evaluate(ColumnPredicate.in_list(0, [3, 4]))
    assert not on_encoded and np.flatnonzero(mask).tolist() == [3, 4]


def test_corruption_is_detected_by_crc(tmp_path):
    path = tmp_path / "c.cfile"
    write_cfile(
        path,
        pa.array(list(range(1000)), pa.int64()),
        T.INT64,
        EncodingType.PLAIN_ENCODING,
        fsync=False,
    )
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(DataCorrupted):
        CFileReader(path).read_block(0)
    path.write_bytes(bytes(data[:-3]))
    with pytest.raises(DataCorrupted):
        CFileReader(path)


def test_large_random_column_round_trips_for_each_codec(tmp_path):
    rng = np.random.default_rng(7)
    ints = rng.integers(-(10**12), 10**12, 200_000)
    strings = pa.array([None if i % 7 == 0 else f"k{i % 300}" for i in range(200_000)])
    for codec, (enc, arr, dtype) in itertools.product(
        CompressionType,
        [
            (EncodingType.BIT_SHUFFLE, pa.array(ints), T.INT64),
            (EncodingType.DICT_ENCODING, strings, T.STRING),
            (EncodingType.PLAIN_ENCODING, strings, T.STRING),
        ],
    ):
        path = tmp_path / f"{codec.value}-{enc.value}.cfile"
        write_cfile(path, arr, dtype, enc, codec, fsync=False)
        reader = CFileReader(path)
        assert len(reader.blocks) > 1
        assert reader.read_all().equals(arr)
