"""KeyIndex finds the same rowids with its word-by-word bisect of padded records as bisect
over the keys themselves."""

from __future__ import annotations

import bisect
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from storage.cfile.writer import write_cfile
from storage.data_type import DataType, TypeKind
from storage.key_encoding import encode_keys, encode_value, prefix_successor
from storage.tablet.key_index import KeyIndex

BINARY = DataType(TypeKind.BINARY)


def _index(tmp_path: Path, keys: list[bytes], block_rows: int) -> KeyIndex:
    path = tmp_path / "key.cfile"
    write_cfile(path, pa.array(keys, pa.binary()), BINARY, fsync=False, block_rows=block_rows)
    return KeyIndex(path)


def _check(index: KeyIndex, keys: list[bytes], probes: list[bytes]) -> None:
    present = set(keys)
    for probe in probes:
        if probe <= keys[-1]:
            assert index.lower_bound(probe) == bisect.bisect_left(keys, probe), probe
        expected = bisect.bisect_left(keys, probe) if probe in present else None
        assert index.lookup_sorted([probe]) == [expected], probe
    found = index.lookup_sorted(sorted(probes))
    assert found == [keys.index(p) if p in present else None for p in sorted(probes)]
    for first, second in zip(probes, probes[1:], strict=False):
        lower, upper = min(first, second), max(first, second)
        if upper <= keys[-1]:
            expected_span = (bisect.bisect_left(keys, lower), bisect.bisect_left(keys, upper))
            assert index.span(lower, upper) == expected_span, (lower, upper)
            lo, hi = expected_span
            between = index.keys_between(lower, upper, len(keys))
            assert between is None or between == (lo, keys[lo:hi]), (lower, upper)
    rowids = sorted({(i * 7919) % len(keys) for i in range(40)})
    assert index.keys_at(rowids) == [keys[r] for r in rowids]


@pytest.mark.parametrize("block_rows", [7, 64, 10_000])
def test_fixed_width_keys_with_zero_bytes(tmp_path: Path, block_rows: int) -> None:
    # Encoded integers (sign bit flipped), full of 0x00 bytes, the numpy view must not strip.
    values = np.unique(np.random.default_rng(7).integers(-(2**40), 2**40, 500))
    values = np.concatenate([[-1, 0, 1, 256, 65536], values])
    values = np.unique(values)
    schema_keys = encode_keys([pa.array(values, pa.int64())], [DataType(TypeKind.INT64)])
    keys = [bytes(k) for k in schema_keys]
    assert keys == sorted(keys)
    index = _index(tmp_path, keys, block_rows)
    probes = [*keys[::3], *[k[:-1] + b"\x01" for k in keys[::5]], b"\x00" * 8, b"\xff" * 8]
    _check(index, keys, probes)


def test_keys_of_several_widths_use_bisect(tmp_path: Path) -> None:
    keys = sorted({b"a", b"a\x00", b"ab", b"b", b"b\x00\x00", b"ba", b"c" * 9})
    index = _index(tmp_path, keys, 3)
    _check(index, keys, [*keys, b"", b"a\x00\x00", b"bb", b"c" * 10])


@pytest.mark.parametrize("kind", [TypeKind.INT8, TypeKind.INT16, TypeKind.INT32, TypeKind.INT64])
def test_integer_keys_of_each_width_searched_as_integers(tmp_path: Path, kind: TypeKind) -> None:
    # 1, 2, 4 and 8 byte keys are searched as native integers; a point range's end (the key
    # and one zero byte) finds the first key above the key.
    data_type = DataType(kind)
    low, high = data_type.integer_range
    values = np.unique(np.random.default_rng(3).integers(low, high, 300, endpoint=True))
    values = np.unique(np.concatenate([values, [low, -1, 0, 1, high]]))
    keys = encode_keys([pa.array(values, data_type.arrow_type)], [data_type])
    assert keys == sorted(keys)
    index = _index(tmp_path, keys, 16)
    _check(index, keys, [*keys[::2], *[k[:-1] + bytes([k[-1] ^ 1]) for k in keys[::3]]])
    for key in keys[:-1:7]:
        assert index.lower_bound(key + b"\x00") == bisect.bisect_left(keys, key + b"\x00")


@pytest.mark.parametrize("block_rows", [2, 5, 64, 10_000])
def test_keys_of_differing_widths_padded_past_their_common_prefix(
    tmp_path: Path, block_rows: int
) -> None:
    # Keys that are each other's prefixes and differ only in trailing zero bytes, which
    # zero padding makes equal: their lengths must order them.
    rng = np.random.default_rng(11)
    keys = {b"p" + bytes(rng.integers(0, 3, rng.integers(0, 6)).tolist()) for _ in range(400)}
    keys |= {k + b"\x00" * n for k in list(keys)[:50] for n in (1, 2)}
    ordered = sorted(keys)
    index = _index(tmp_path, ordered, block_rows)
    probes = [
        *ordered,
        *[k + b"\x00" * 3 for k in ordered[::4]],
        *[k + b"\x01" for k in ordered[::5]],
        *[k[:-1] for k in ordered[::3] if len(k) > 1],
        b"",
        b"o\xff",
        b"p",
        b"q",
        b"p" + b"\x02" * 9,
    ]
    _check(index, ordered, probes)


def test_index_tablet_keys_are_padded_not_listed(tmp_path: Path) -> None:
    # An index tablet's key: an escaped binary column (varying width) then a bigint.
    codes = np.unique(np.random.default_rng(5).integers(0, 2**20, 3000))
    ikeys = [b"\x00" + int(c).to_bytes(8, "big") for c in codes]
    keys = encode_keys(
        [pa.array(ikeys, pa.binary()), pa.array(np.arange(len(ikeys)), pa.int64())],
        [BINARY, DataType(TypeKind.INT64)],
    )
    assert len({len(k) for k in keys}) > 1
    index = _index(tmp_path, keys, 1000)
    block = index._block(1)
    assert block.tag and block.listed is None
    assert block.prefix  # escaped leading zero bytes shared by the block
    probes = [*keys[::7], *[k[:-3] for k in keys[::11]], *[k[:-1] + b"\xff" for k in keys[::13]]]
    _check(index, keys, probes)


def test_fixed_width_keys_wider_than_an_integer(tmp_path: Path) -> None:
    pairs = np.random.default_rng(2).integers(-1000, 1000, (600, 2))
    pairs = np.unique(pairs, axis=0)
    keys = encode_keys(
        [pa.array(pairs[:, 0], pa.int64()), pa.array(pairs[:, 1], pa.int64())],
        [DataType(TypeKind.INT64)] * 2,
    )
    assert {len(k) for k in keys} == {16}
    index = _index(tmp_path, keys, 50)
    _check(index, keys, [*keys[::3], *[k[:9] for k in keys[::5]], *[k + b"\x00" for k in keys]])


@pytest.mark.parametrize("block_rows", [3, 64, 1000])
def test_index_lookup_spans_match_bisect(tmp_path: Path, block_rows: int) -> None:
    # An index lookup's range: an entry prefix (an ikey's escaped encoding) to its
    # successor, mostly in one block (``KeyIndex.span``'s one bisect of the block bounds),
    # and probes that pad equal to a key or leave the block's common prefix.
    codes = np.unique(np.random.default_rng(9).integers(0, 300, 2000)) * 256
    ikeys = [b"\x00" + int(c).to_bytes(8, "big") for c in codes for _ in range(3)]
    keys = encode_keys(
        [pa.array(ikeys, pa.binary()), pa.array(np.arange(len(ikeys)), pa.int64())],
        [BINARY, DataType(TypeKind.INT64)],
    )
    index = _index(tmp_path, keys, block_rows)
    for code in [*codes[::3].tolist(), 1, 255, 257, 300 * 256 - 1]:
        ikey = b"\x00" + int(code).to_bytes(8, "big")
        lower = encode_value(ikey, BINARY, is_last=False)
        successor = prefix_successor(ikey)
        assert successor is not None
        for upper in (encode_value(successor, BINARY, is_last=False), lower + b"\x00"):
            if upper <= keys[-1]:
                expected = (bisect.bisect_left(keys, lower), bisect.bisect_left(keys, upper))
                assert index.span(lower, upper) == expected, (code, upper)
    for first in keys[::17]:
        for second in (first + b"\x00", first[:-1], first[:-2] + b"\x00\x00", first[:4]):
            lower, upper = min(first, second), max(first, second)
            if upper <= keys[-1]:
                expected = (bisect.bisect_left(keys, lower), bisect.bisect_left(keys, upper))
                assert index.span(lower, upper) == expected, (lower, upper)


@pytest.mark.parametrize("seed", range(6))
def test_random_keys_of_any_shape_match_bisect(tmp_path: Path, seed: int) -> None:
    # Records of one and of several words, with and without a common prefix and a length
    # tag, keys that pad equal (trailing zeros, 0xff bytes), a one-key block, and blocks
    # too uneven to pad (kept as a list): every search and lookup is bisect's.
    rng = np.random.default_rng(seed)
    alphabet = [0, 1, 0xFE, 0xFF]
    head = bytes(rng.integers(0, 256, seed % 3).tolist())
    keys_set = set()
    for _ in range(300):
        size = int(rng.integers(0, 4 + 6 * seed))
        keys_set.add(head + bytes(rng.choice(alphabet, size).tolist()))
    if seed % 2:
        keys_set |= {head + b"\x07" * int(rng.integers(40, 200)) for _ in range(3)}
    keys = sorted(keys_set)
    for block_rows in (1, 4, 37, 10_000):
        index = _index(tmp_path, keys, block_rows)
        probes = [
            *keys,
            *[k + b"\x00" for k in keys[::3]],
            *[k[:-1] for k in keys[::2] if k],
            *[k + b"\xff\xff" for k in keys[::5]],
            b"",
            head,
            head + b"\x00" * 20,
            b"\xff" * 30,
        ]
        _check(index, keys, probes)
        index_keys = list(range(len(keys)))
        assert index.keys_at(index_keys) == keys


@pytest.mark.parametrize("kind", [TypeKind.INT8, TypeKind.INT16, TypeKind.INT32, TypeKind.INT64])
@pytest.mark.parametrize("block_rows", [16, 200, 10_000])
def test_many_sorted_lookups_at_once_find_what_one_by_one_finds(
    tmp_path: Path, kind: TypeKind, block_rows: int
) -> None:
    # A batch's keys searched per block with one numpy searchsorted (integer keys, probes
    # of their width) against bisect; probes of other widths take the one-by-one search.
    data_type = DataType(kind)
    low, high = data_type.integer_range
    rng = np.random.default_rng(block_rows)
    values = np.unique(rng.integers(low, high, 600, endpoint=True))
    values = np.unique(np.concatenate([values, [low, -1, 0, 1, high]]))
    keys = encode_keys([pa.array(values, data_type.arrow_type)], [data_type])
    index = _index(tmp_path, keys, block_rows)
    probes = encode_keys(
        [pa.array(rng.integers(low, high, 900, endpoint=True), data_type.arrow_type)],
        [data_type],
    )
    for batch in (sorted(probes + keys[::2]), sorted(probes + keys[::3] + [keys[0][:-1], b""])):
        position = {key: rowid for rowid, key in enumerate(keys)}
        assert index.lookup_sorted(batch) == [position.get(k) for k in batch]
        assert index.lookup_sorted(batch) == [index.find(k) for k in batch]


@pytest.mark.parametrize("width", [8, 9, 12, 16, 24])
def test_short_bounds_of_one_width_keys_match_bisect(tmp_path: Path, width: int) -> None:
    # ``_KeyBlock.bounds`` bisects the first word alone for bounds at most a word past the
    # block's prefix (an index lookup's prefix and successor): probes of every length up
    # to a word and a bit, cut from keys, bumped, zero- and 0xff-padded.
    rng = np.random.default_rng(width)
    keys = sorted({bytes(rng.choice([0, 1, 0x7F, 0xFF], width).tolist()) for _ in range(400)})
    probes = {b"", b"\xff" * 9}
    for key in keys[::7]:
        for cut in range(0, min(width, 10) + 1):
            probes |= {key[:cut], key[:cut] + b"\x00", key[:cut] + b"\xff"}
    ordered = sorted(probes)
    for block_rows in (5, 64, 10_000):
        index = _index(tmp_path, keys, block_rows)
        for lower, upper in zip(ordered, ordered[3:], strict=False):
            lo, hi = bisect.bisect_left(keys, lower), bisect.bisect_left(keys, upper)
            if upper <= keys[-1]:
                assert index.span(lower, upper) == (lo, hi), (lower, upper)
            between = index.keys_between(lower, upper, len(keys))
            assert between is None or between == (lo, keys[lo:hi]), (lower, upper)
        taken = [index.keys_between(k[:4], k[:4] + b"\xff", len(keys)) for k in keys[::9]]
        assert block_rows < 10_000 or sum(t is not None for t in taken) > len(taken) // 2
