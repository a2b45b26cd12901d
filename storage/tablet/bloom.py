"""BloomFilter: proves a key absent from a DiskRowSet without touching its key index.

Sized for the rowset's key count at a 1% false-positive rate; k probes by
double hashing two CRC32C values of the encoded key (Kirsch and
Mitzenmacher).  Stored as the magic ``NYB1``, ``u32 k``, the bit array and a
CRC32C of everything before it, so a damaged filter is reported rather than
answering "absent" for a key that is there; files from before the checksum
(``u32 k`` then the bits, no magic) are still read.
"""

from __future__ import annotations

import itertools
import math
import struct

import crc32c
import numpy as np

from storage.errors import DataCorrupted

_HEADER = struct.Struct("<I")
_MAGIC = b"NYB1"
_CRC = struct.Struct("<I")
_MAX_PROBES = 64
"""Far above what any false-positive rate needs; more means a damaged header."""
_SEED = 0x9747B28C


def key_hashes(keys: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """The two CRC32C hashes every probe of a key derives from.  They do not depend on the
    filter, so a batch of keys is hashed once for all the rowsets it is probed against."""
    h1 = np.fromiter(map(crc32c.crc32c, keys), np.int64, len(keys))
    h2 = np.fromiter(map(crc32c.crc32c, keys, itertools.repeat(_SEED)), np.int64, len(keys))
    return h1, h2 | 1


class BloomFilter:
    """A fixed-size bit array with ``k`` probes per key."""

    def __init__(self, bits: np.ndarray, k: int) -> None:
        self._probe_bits = bits.tobytes()
        """The bits as bytes: indexing them gives a Python int, several times cheaper per
        probe of one key than a numpy scalar; ``_bits`` is a numpy view of the same bytes."""
        self._bits = np.frombuffer(self._probe_bits, np.uint8)
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
            # A bit per position, packed little-endian: bit (p & 7) of byte (p >> 3), as a
            # scatter-or would set them (np.bitwise_or.at is unbuffered and slow).
            bits = np.zeros(len(bloom._bits) * 8, dtype=bool)
            bits[(probes % bloom._m).ravel()] = True
            bloom = cls(np.packbits(bits, bitorder="little"), k)
        return bloom

    def may_contain(self, key: bytes) -> bool:
        h1 = crc32c.crc32c(key)
        h2 = crc32c.crc32c(key, _SEED) | 1
        bits = self._probe_bits
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
        body = _MAGIC + _HEADER.pack(self._k) + self._bits.tobytes()
        return body + _CRC.pack(crc32c.crc32c(body))

    @classmethod
    def from_bytes(cls, data: bytes, source: object = "bloom filter") -> BloomFilter:
        """Decode a stored filter; ``source`` names it (its file) in a DataCorrupted."""
        start = 0
        if data.startswith(_MAGIC):
            if len(data) <= len(_MAGIC) + _HEADER.size + _CRC.size:
                raise DataCorrupted(f"bloom filter {source} is truncated")
            (crc,) = _CRC.unpack_from(data, len(data) - _CRC.size)
            data = data[: -_CRC.size]
            if crc32c.crc32c(data) != crc:
                raise DataCorrupted(f"bloom filter {source} fails its CRC32C")
            start = len(_MAGIC)
        if len(data) <= start + _HEADER.size:
            raise DataCorrupted(f"bloom filter {source} is truncated")
        (k,) = _HEADER.unpack_from(data, start)
        if not 1 <= k <= _MAX_PROBES:
            raise DataCorrupted(f"bloom filter {source} has {k} probes")
        return cls(np.frombuffer(data, np.uint8, offset=start + _HEADER.size).copy(), k)
