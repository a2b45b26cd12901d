"""COPY ... (FORMAT arrow) both ways through psycopg + pyarrow, checked against text COPY.

PostgreSQL has no Arrow format, so the reference is text COPY: rows loaded
into nyala as an Arrow stream must print, through ``COPY t TO STDOUT``, the
very bytes PostgreSQL 15 prints for the same rows loaded with text COPY; and
an Arrow stream read out of nyala must hold the values psycopg reads through
the ordinary protocol, in the Arrow type documented for each PostgreSQL type.
"""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import psycopg
import pyarrow as pa
import pytest
from psycopg import errors

pytestmark = pytest.mark.e2e

DDL = """
create table {name} (
    id integer primary key, flag boolean, small smallint, big bigint, r real,
    f double precision, amount numeric(12,3), name text, code varchar(8), raw bytea,
    born date, seen timestamp, at timestamptz
)
"""
ARROW_TYPES = [
    pa.int32(), pa.bool_(), pa.int16(), pa.int64(), pa.float32(), pa.float64(),
    pa.decimal128(12, 3), pa.string(), pa.string(), pa.binary(), pa.date32(),
    pa.timestamp("us"), pa.timestamp("us", tz="UTC"),
]  # fmt: skip
UTC = dt.UTC
ROWS = [
    (1, True, 1, 2**40, 1.5, 0.1, decimal.Decimal("12.345"), "alpha", "a", b"\x00\x01\xff",
     dt.date(2024, 2, 29), dt.datetime(2024, 1, 2, 3, 4, 5, 6),
     dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)),
    (2, None, None, None, None, None, None, None, None, None, None, None, None),
    (3, False, -32768, -(2**63), -0.25, 1e300, decimal.Decimal("-99.001"),
     'tab\there "quoted", comma\nnewline \\ backslash', "ünï", b"",
     dt.date(1, 1, 1), dt.datetime(1970, 1, 1), dt.datetime(2000, 1, 1, tzinfo=UTC)),
    (4, True, 32767, 2**63 - 1, 3.4e38, -1e-300, decimal.Decimal("0.000"), "", "",
     bytes(range(256)), dt.date(9999, 12, 31), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
     dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC)),
]  # fmt: skip


def _fresh(conn: psycopg.Connection, name: str) -> None:
    conn.execute(f"drop table if exists {name}")
    conn.execute(DDL.format(name=name))


def _copy_out(conn: psycopg.Connection, statement: str) -> bytes:
    out = bytearray()
    with conn.cursor().copy(statement) as copy:
        for chunk in copy:
            out += chunk
    return bytes(out)


def _read_arrow(conn: psycopg.Connection, statement: str) -> pa.Table:
    return pa.ipc.open_stream(_copy_out(conn, statement)).read_all()


def _arrow_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=2)
    return sink.getvalue().to_pybytes()


def _copy_in(conn: psycopg.Connection, statement: str, data: bytes, step: int) -> str:
    cur = conn.cursor()
    with cur.copy(statement) as copy:
        for start in range(0, len(data), step):
            copy.write(data[start : start + step])
    return cur.statusmessage or ""


def _single_real(row: tuple) -> tuple:
    """The row with its real column as a float32 value (text and Arrow spell it differently)."""
    return (*row[:4], None if row[4] is None else float(np.float32(row[4])), *row[5:])


def _rows_table() -> pa.Table:
    columns = list(zip(*ROWS, strict=True))
    names = ["id", "flag", "small", "big", "r", "f", "amount", "name", "code", "raw", "born",
             "seen", "at"]  # fmt: skip
    return pa.table(
        [pa.array(values, type) for values, type in zip(columns, ARROW_TYPES, strict=True)],
        names=names,
    )


def test_arrow_in_prints_as_text_copy_in_does_on_postgres(nyala_server, postgres_server):
    """Every type: Arrow COPY FROM on nyala, text COPY FROM on PostgreSQL, same text COPY out."""
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        _fresh(conn, "arrow_types")
        with conn.cursor().copy("copy arrow_types from stdin") as copy:
            for row in ROWS:
                copy.write_row(row)
        expected = _copy_out(conn, "copy arrow_types to stdout")
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        _fresh(conn, "arrow_types")
        for step in (7, 1 << 20):
            conn.execute("delete from arrow_types")
            tag = _copy_in(conn, "copy arrow_types from stdin (format arrow)",
                           _arrow_bytes(_rows_table()), step)  # fmt: skip
            assert tag == "COPY 4"
            assert _copy_out(conn, "copy arrow_types to stdout") == expected


def test_arrow_out_holds_what_the_protocol_returns(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        _fresh(conn, "arrow_out")
        with conn.cursor().copy("copy arrow_out from stdin") as copy:
            for row in ROWS:
                copy.write_row(row)
        table = _read_arrow(conn, "copy arrow_out to stdout (format arrow)")
        assert table.schema.types == ARROW_TYPES
        assert table.column_names[0] == "id"
        fetched = conn.execute("select * from arrow_out order by id").fetchall()
        got = sorted(_single_real(tuple(row.values())) for row in table.to_pylist())
        assert got == [_single_real(row) for row in fetched]
        # Through Arrow and back: the table prints the same in text COPY.
        conn.execute("drop table if exists arrow_back")
        conn.execute(DDL.format(name="arrow_back"))
        assert _copy_in(conn, "copy arrow_back from stdin (format arrow)",
                        _arrow_bytes(table), 1000) == "COPY 4"  # fmt: skip
        assert _copy_out(conn, "copy (select * from arrow_back order by id) to stdout") == (
            _copy_out(conn, "copy (select * from arrow_out order by id) to stdout")
        )


def test_arrow_out_of_a_query_and_of_columns(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        _fresh(conn, "arrow_query")
        with conn.cursor().copy("copy arrow_query (id, name) from stdin") as copy:
            for i in range(5):
                copy.write_row((i, f"n{i}"))
        table = _read_arrow(
            conn, "copy (select id * 2 as twice, upper(name) as big from arrow_query"
            " where id > 1 order by id) to stdout with (format arrow)",
        )
        assert table.column_names == ["twice", "big"]
        assert table.to_pydict() == {"twice": [4, 6, 8], "big": ["N2", "N3", "N4"]}
        listed = _read_arrow(conn, "copy arrow_query (name, id) to stdout (format 'arrow')")
        assert listed.column_names == ["name", "id"] and listed.num_rows == 5
        empty = _read_arrow(conn, "copy (select id from arrow_query where false) to stdout"
                                  " (format arrow)")  # fmt: skip
        assert empty.num_rows == 0 and empty.schema.types == [pa.int32()]


def test_arrow_many_batches_both_ways(nyala_server):
    rows = 200_000
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("drop table if exists arrow_big")
        conn.execute("create table arrow_big (id bigint primary key, name text, x double precision)")
        source = pa.table({
            "id": pa.array(range(rows), pa.int64()),
            "name": pa.array([f"row{i % 97}" for i in range(rows)]).dictionary_encode(),
            "x": pa.array([i / 3 for i in range(rows)]),
        })  # fmt: skip
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, source.schema) as writer:
            writer.write_table(source, max_chunksize=30_000)
        tag = _copy_in(conn, "copy arrow_big from stdin (format arrow)",
                       sink.getvalue().to_pybytes(), 65536)  # fmt: skip
        assert tag == f"COPY {rows}"
        cur = conn.cursor()
        out = bytearray()
        with cur.copy("copy arrow_big to stdout (format arrow)") as copy:
            for chunk in copy:
                out += chunk
        assert cur.rowcount == rows
        table = pa.ipc.open_stream(bytes(out)).read_all().sort_by("id")
        assert table.column("id").to_pylist() == list(range(rows))
        assert table.column("name").to_pylist() == source.column("name").to_pylist()
        assert table.column("x").to_pylist() == source.column("x").to_pylist()


def test_arrow_columns_convert_by_position_to_the_listed_columns(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        _fresh(conn, "arrow_conv")
        source = pa.table({
            "a": pa.array([1, 2], pa.int64()),
            "b": pa.array(["7", None], pa.large_string()),
            "c": pa.array(["2024-05-06 07:08:09", "2000-01-01 00:00:00"]),
        })  # fmt: skip
        tag = _copy_in(conn, "copy arrow_conv (id, small, seen) from stdin (format arrow)",
                       _arrow_bytes(source), 50)  # fmt: skip
        assert tag == "COPY 2"
        rows = conn.execute("select id, small, seen from arrow_conv order by id").fetchall()
        assert rows == [(1, 7, dt.datetime(2024, 5, 6, 7, 8, 9)), (2, None, dt.datetime(2000, 1, 1))]


@pytest.mark.parametrize(
    ("statement", "data", "sqlstate"),
    [
        ("copy arrow_bad from stdin (format arrow)", b"not an arrow stream at all", "22P04"),
        ("copy arrow_bad (id) from stdin (format arrow)", None, "22P04"),  # 2 columns for 1
        ("copy arrow_bad (id, name) from stdin (format arrow)", "truncated", "22P04"),
        ("copy arrow_bad (small, name) from stdin (format arrow)", None, "23502"),  # id null
        ("copy arrow_bad (id, small) from stdin (format arrow)", "overflow", "22003"),
        ("copy arrow_bad (id, name) from stdin (format arrow, header)", None, "0A000"),
        ("copy arrow_bad (id, name) from stdin (format arrow, delimiter ',')", None, "42601"),
        ("copy arrow_bad (id, name) from stdin (format arrow, null '')", None, "42601"),
    ],
)
def test_bad_arrow_input_fails_and_leaves_nothing(nyala_server, statement, data, sqlstate):
    good = pa.table({"id": pa.array([1, 2], pa.int32()), "name": ["x", "y"]})
    if data is None:
        data = _arrow_bytes(good)
    elif data == "truncated":
        data = _arrow_bytes(good)[:-20]
    elif data == "overflow":
        data = _arrow_bytes(pa.table({"id": [1, 2], "small": pa.array([1, 70000], pa.int64())}))
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        _fresh(conn, "arrow_bad")
        with pytest.raises(errors.Error) as caught:
            _copy_in(conn, statement, data, 16)
        assert caught.value.sqlstate == sqlstate
        assert conn.execute("select count(*) from arrow_bad").fetchone() == (0,)
        assert conn.execute("select 1").fetchone() == (1,)
