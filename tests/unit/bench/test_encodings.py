"""bench.encodings measures every allowed encoding and every compression per column."""

from __future__ import annotations

from bench.encodings import markdown, measure


def test_every_column_gets_each_allowed_encoding_and_compression(tmp_path):
    measurements = measure(500, tmp_path)
    host = [m for m in measurements if m.table == "metrics" and m.column == "host"]
    assert {m.encoding for m in host} == {"DICT_ENCODING", "PLAIN_ENCODING", "PREFIX_ENCODING"}
    assert {m.compression for m in host} >= {"NO_COMPRESSION", "LZ4", "SNAPPY", "ZLIB", "ZSTD"}
    dictionary = next(m for m in host if m.encoding == "DICT_ENCODING")
    plain = next(m for m in host if m.encoding == "PLAIN_ENCODING")
    assert 0 < dictionary.bytes < plain.bytes  # few distinct hosts
    assert {m.table for m in measurements} == {"metrics", "lineitem"}
    assert not list(tmp_path.iterdir())
    assert markdown(measurements).count("\n") == len(measurements) + 1
