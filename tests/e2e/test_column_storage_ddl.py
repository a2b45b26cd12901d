"""Impala's per-column ENCODING / COMPRESSION words in CREATE TABLE reach the column files."""

from __future__ import annotations

import psycopg

from storage.cfile.compression import CompressionType
from storage.cfile.encoding import EncodingType
from storage.cfile.reader import CFileReader


def test_declared_encoding_and_compression_are_what_a_flush_writes(fresh_nyala_server):
    server = fresh_nyala_server
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(
            "create table enc_ddl (id bigint primary key,"
            " name text encoding plain_encoding compression zstd,"
            " n integer encoding rle compression no_compression,"
            " note text)"
        )
        conn.execute(
            "insert into enc_ddl select i, 'name-' || (i % 7), i % 3, 'x'"
            " from generate_series(1, 5000) as g(i)"
        )
        conn.execute("checkpoint")
        assert conn.execute("select count(*), max(name) from enc_ddl").fetchone() == (
            5000,
            "name-6",
        )
    # Column IDs follow the declared order: id 0, name 1, n 2, note 3.
    files = {
        path.name: CFileReader(path)
        for path in server.data_dir.glob("tablets/*/rowset-*/col-*.cfile")
    }
    assert files["col-1.cfile"].encoding is EncodingType.PLAIN_ENCODING
    assert files["col-1.cfile"].compression is CompressionType.ZSTD
    assert files["col-2.cfile"].encoding is EncodingType.RLE
    assert files["col-2.cfile"].compression is CompressionType.NO_COMPRESSION
    assert files["col-3.cfile"].encoding is EncodingType.DICT_ENCODING  # Kudu's string default
