"""BloomFilter: proves a key absent from a DiskRowSet without touching its key index.

Sized for the rowset's key count at a 1% false-positive rate; k probes by
double hashing two CRC32C values of the encoded key (Kirsch and
Mitzenmacher).  Stored as ``u32 k`` followed by the bit array.
"""

from __future__ import annotations

import math
import struct

import crc32c
import numpy as np

from storage.errors import DataCorrupted

_HEADER = struct.Struct("<I")
_SEED = 0x9747B28C


def key_hashes(keys: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """The two CRC32C hashes every probe of a key derives from.  They do not depend on the
    filter, so a batch of keys is hashed once for all the rowsets it is probed against."""
    h1 = np.fromiter((crc32c.crc32c(key) for key in keys), np.int64, len(keys))
    h2 = np.fromiter((crc32c.crc32c(key, _SEED) | 1 for key in keys), np.int64, len(keys))
    return h1, h2


class BloomFilter:
    """A fixed-size bit array with ``k`` probes per key."""

    def __init__(self, bits: np.ndarray, k: int) -> None:
        self._bits = bits
        self._k = k
        self._m = len(bits) * 8

    @classmethod
    def build(cls, keys: list[bytes], fp_rate: float = 0.01) -> BloomFilter:
        n = max(1, len(keys))
        m = max(64, int(-n * math.log(fp_rate) / (math.log(2) ** 2)))
        k = max(1, round(m / n * math.log(2)))
        bloom = cls(np.zeros((m + 7) // 8, np.uint8), k)
        if keys:
            # Per-key Python only for the two CRCs; the probes are computed and set by numpy.
            h1, h2 = key_hashes(keys)
            probes = h1[:, None] + np.arange(k, dtype=np.int64) * h2[:, None]
            positions = (probes % bloom._m).ravel()
            np.bitwise_or.at(bloom._bits, positions >> 3, (1 << (positions & 7)).astype(np.uint8))
        return bloom

    def may_contain(self, key: bytes) -> bool:
        h1 = crc32c.crc32c(key)
        h2 = crc32c.crc32c(key, _SEED) | 1
        bits = self._bits
        for i in range(self._k):
            position = (h1 + i * h2) % self._m
            if not bits[position >> 3] & (1 << (position & 7)):
                return False
        return True

    def may_contain_hashed(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        """``may_contain`` for many keys at once, given their ``key_hashes``."""
        out = np.ones(len(h1), dtype=bool)
        for i in range(self._k):
            positions = (h1 + i * h2) % self._m
            out &= ((self._bits[positions >> 3] >> (positions & 7)) & 1).astype(bool)
        return out

    def to_bytes(self) -> bytes:
        return _HEADER.pack(self._k) + self._bits.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> BloomFilter:
        if len(data) <= _HEADER.size:
            raise DataCorrupted("bloom filter file is truncated")
        (k,) = _HEADER.unpack_from(data, 0)
        return cls(np.frombuffer(data, np.uint8, offset=_HEADER.size).copy(), k)
