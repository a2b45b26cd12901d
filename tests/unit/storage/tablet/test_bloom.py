"""BloomFilter: no false negatives, a false-positive rate near its target, a stable byte form."""

from __future__ import annotations

import pytest

from storage.errors import DataCorrupted
from storage.tablet.bloom import BloomFilter, key_hashes


def test_no_false_negatives_and_few_false_positives():
    keys = [i.to_bytes(8, "big") for i in range(0, 20_000, 2)]
    bloom = BloomFilter.from_bytes(BloomFilter.build(keys).to_bytes())
    assert all(bloom.may_contain(k) for k in keys)
    false_positives = sum(bloom.may_contain(i.to_bytes(8, "big")) for i in range(1, 20_000, 2))
    assert false_positives < 300


def test_empty_filter_and_truncated_bytes():
    assert not BloomFilter.build([]).may_contain(b"x")
    with pytest.raises(DataCorrupted):
        BloomFilter.from_bytes(b"\x01\x00")


def test_hashed_batch_probe_answers_as_may_contain():
    keys = [i.to_bytes(8, "big") for i in range(0, 4_000, 3)]
    bloom = BloomFilter.build(keys)
    probes = [i.to_bytes(8, "big") for i in range(4_000)]
    h1, h2 = key_hashes(probes)
    assert bloom.may_contain_hashed(h1, h2).tolist() == [bloom.may_contain(k) for k in probes]


def test_every_flipped_byte_is_caught_by_the_checksum():
    data = BloomFilter.build([i.to_bytes(8, "big") for i in range(50)]).to_bytes()
    for index in range(len(data)):
        damaged = bytearray(data)
        damaged[index] ^= 0x40
        with pytest.raises(DataCorrupted):
            BloomFilter.from_bytes(bytes(damaged), "rowset-1/bloom.bin")


def test_a_filter_written_before_the_checksum_still_reads():
    keys = [i.to_bytes(8, "big") for i in range(100)]
    legacy = BloomFilter.build(keys).to_bytes()[4:-4]  # u32 k and the bits, as it used to be
    assert all(BloomFilter.from_bytes(legacy).may_contain(k) for k in keys)
