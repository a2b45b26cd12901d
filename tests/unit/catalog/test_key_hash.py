"""crc32c_many hashes as crc32c.crc32c does, key by key: rows keep their hash partitions."""

from __future__ import annotations

import random

import crc32c
import numpy as np
import pyarrow as pa
import pytest

from catalog.key_hash import crc32c_many
from storage.data_type import INT32, INT64, STRING
from storage.key_encoding import encode_keys, encode_keys_array

_random = random.Random(20)
CASES = {
    "fixed width": [bytes(_random.randrange(256) for _ in range(8)) for _ in range(500)],
    "varying width": [
        bytes(_random.randrange(256) for _ in range(_random.randrange(40))) for _ in range(500)
    ],
    "empty key": [b""],
    "longer than a pass per byte pays": [b"x" * 100, b"y"],
    "none": [],
}


@pytest.mark.parametrize("keys", CASES.values(), ids=CASES.keys())
def test_many_keys_hash_as_one_at_a_time(keys):
    array = pa.array(keys, pa.binary())
    expected = np.array([crc32c.crc32c(k) for k in keys], dtype=np.uint64)
    assert crc32c_many(array).tolist() == expected.tolist()
    assert crc32c_many(array.slice(1)).tolist() == expected[1:].tolist()


def test_encoded_keys_of_a_batch_hash_as_their_bytes():
    ids = pa.array([-(2**40), -1, 0, 1, 2**40], pa.int64())
    names = pa.array(["a", "", "b\x00c", "ünï", "z" * 30])
    small = pa.array([1, 2, 3, 4, 5], pa.int32())
    for columns, types in (([ids], [INT64]), ([names, small], [STRING, INT32])):
        keys = encode_keys(columns, types)
        assert encode_keys_array(columns, types).to_pylist() == keys
        assert crc32c_many(encode_keys_array(columns, types)).tolist() == [
            crc32c.crc32c(k) for k in keys
        ]
