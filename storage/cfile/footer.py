"""The self-describing tail every nyala data file ends with: a JSON footer, its length and
CRC32C, and the file kind's magic, read back (and checked) the same way for every kind."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import crc32c
import pyarrow as pa

from storage.errors import DataCorrupted

TRAILER = struct.Struct("<II8s")
"""Footer length, footer CRC32C, magic."""


def open_with_footer(
    path: Path, magic: bytes, what: str
) -> tuple[pa.MemoryMappedFile, dict[str, Any]]:
    """Map ``path`` and return it with its footer; DataCorrupted if the tail does not check out."""
    try:
        mapped = pa.memory_map(str(path), "r")
        size = mapped.size()
        if size < len(magic) + TRAILER.size:
            raise ValueError("file too short")
        length, crc, found = TRAILER.unpack(mapped.read_at(TRAILER.size, size - TRAILER.size))
        doc = bytes(mapped.read_at(length, size - TRAILER.size - length))
        if found != magic or crc32c.crc32c(doc) != crc:
            raise ValueError("bad trailer or footer checksum")
        footer: dict[str, Any] = json.loads(doc)
    except (OSError, ValueError, struct.error) as exc:
        raise DataCorrupted(f"{what} {path} is unreadable: {exc}") from exc
    return mapped, footer


def footer_tail(doc: bytes, magic: bytes) -> bytes:
    """The bytes that end a file whose footer is ``doc``: the footer, then the trailer."""
    return doc + TRAILER.pack(len(doc), crc32c.crc32c(doc), magic)
