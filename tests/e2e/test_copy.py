"""COPY FROM STDIN and TO STDOUT through psycopg and psql's \\copy, beside PostgreSQL 15.

Each scenario runs on nyala and on a real PostgreSQL 15 and compares what
comes back: the bytes COPY TO writes, the rows COPY FROM stores, the command
tags, and the SQLSTATE, message and line of a bad row.
"""

from __future__ import annotations

import datetime as dt
import decimal
import subprocess

import psycopg
import pytest
from psycopg import errors, pq

from tests.support.differential import both, both_connected

pytestmark = pytest.mark.e2e

DDL = """
create table {name} (
    id integer primary key, name text, score double precision, born date,
    seen timestamp, ok boolean, amount numeric(10,2)
)
"""
ROWS = [
    (1, "alpha", 1.5, dt.date(2024, 2, 29), dt.datetime(2024, 1, 2, 3, 4, 5), True,
     decimal.Decimal("12.30")),
    (2, None, None, None, None, None, None),
    (3, 'tab\there "quoted", comma\nnewline \\ backslash', -0.25, dt.date(1999, 12, 31),
     dt.datetime(2000, 1, 1), False, decimal.Decimal("-1.00")),
    (4, "", 1e300, dt.date(1970, 1, 1), dt.datetime(1970, 1, 1, 0, 0, 0, 500000), True,
     decimal.Decimal("0.00")),
]  # fmt: skip


@pytest.fixture
def servers(nyala_server, postgres_server):
    return nyala_server.dsn, postgres_server.dsn


def _fresh(conn: psycopg.Connection, name: str) -> None:
    conn.execute(f"drop table if exists {name}")
    conn.execute(DDL.format(name=name))


def _copy_out(conn: psycopg.Connection, statement: str) -> bytes:
    out = bytearray()
    with conn.cursor().copy(statement) as copy:
        for chunk in copy:
            out += chunk
    return bytes(out)


def test_write_row_then_copy_out_in_text_and_csv(servers):
    def scenario(conn):
        _fresh(conn, "copy_rt")
        cur = conn.cursor()
        with cur.copy("copy copy_rt from stdin") as copy:
            for row in ROWS:
                copy.write_row(row)
        tag = cur.statusmessage
        stored = conn.execute("select * from copy_rt order by id").fetchall()
        text = _copy_out(conn, "copy copy_rt to stdout")
        csv = _copy_out(conn, "copy copy_rt to stdout with (format csv, header true)")
        legacy = _copy_out(conn, "copy copy_rt (id, name) to stdout csv header force quote *")
        query = _copy_out(
            conn,
            "copy (select id, name from copy_rt where id > 1 order by id) to stdout"
            " with (format csv, delimiter ';', null 'NULL', quote '''', force_quote (name))",
        )
        return tag, stored, text, csv, legacy, query

    tag, stored, text, csv, _, _ = both_connected(scenario, *servers)
    assert tag == "COPY 4"
    assert stored == ROWS
    assert text.count(b"\n") == 4 and b"\\N" in text
    assert csv.startswith(b"id,name,score,born,seen,ok,amount\n")


def test_copy_rows_read_back_through_psycopg_parsers(servers):
    def scenario(conn):
        _fresh(conn, "copy_read")
        with conn.cursor().copy("copy copy_read from stdin") as copy:
            for row in ROWS:
                copy.write_row(row)
        cur = conn.cursor()
        with cur.copy("copy (select id, name, score from copy_read order by id) to stdout") as c:
            c.set_types(["int4", "text", "float8"])
            text_rows = list(c.rows())
        with cur.copy(
            "copy (select id, name, score, born, ok from copy_read order by id)"
            " to stdout (format binary)"
        ) as c:
            c.set_types(["int4", "text", "float8", "date", "bool"])
            binary_rows = list(c.rows())
        return text_rows, binary_rows

    text_rows, binary_rows = both_connected(scenario, *servers)
    assert text_rows == [r[:3] for r in ROWS]
    assert binary_rows == [(r[0], r[1], r[2], r[3], r[5]) for r in ROWS]


def test_csv_input_with_options_in_both_syntaxes(servers):
    data = (
        'id;name;amount\n1;"semi;colon";1.5\n2;;2\n3;"";3\n4;NULL;4\n'
        '5;"line\nbreak";5\n6;"say ""hi""";6\n'
    )

    def scenario(conn):
        _fresh(conn, "copy_csv")
        cur = conn.cursor()
        with cur.copy(
            "copy copy_csv (id, name, amount) from stdin"
            " with (format csv, header, delimiter ';', null 'NULL', force_not_null (name))"
        ) as copy:
            copy.write(data)
        first = cur.statusmessage
        rows = conn.execute("select id, name, amount from copy_csv order by id").fetchall()
        conn.execute("delete from copy_csv")
        with cur.copy(
            "copy copy_csv (id, name, amount) from stdin csv header delimiter as ';' null as 'NULL'"
        ) as copy:
            copy.write(data)
        legacy = conn.execute("select id, name, amount from copy_csv order by id").fetchall()
        conn.execute("delete from copy_csv")
        with cur.copy(
            "copy copy_csv (id, name) from stdin (format csv, force_null (name))"
        ) as copy:
            copy.write('1,""\n2,\n3,"x"\n')
        forced = conn.execute("select id, name from copy_csv order by id").fetchall()
        with cur.copy(
            "copy copy_csv (id, name) from stdin (format csv, quote '|', escape '!')"
        ) as c:
            c.write("7,|a!|b,c|\n")
        escaped = conn.execute("select name from copy_csv where id = 7").fetchone()
        return first, rows, legacy, escaped, forced

    first, rows, legacy, escaped, forced = both_connected(scenario, *servers)
    assert forced == [(1, None), (2, None), (3, "x")]
    assert first == "COPY 6"
    assert rows[1][1] == "" and rows[2][1] == "" and rows[3][1] == "NULL"
    assert rows[4][1] == "line\nbreak" and rows[5][1] == 'say "hi"'
    assert legacy[1][1] == "" and legacy[3][1] is None
    assert escaped == ("a|b,c",)


def _error_of(conn, statement: str, data: str) -> tuple[str, str, str | None, list]:
    table = "copy_bad"
    _fresh(conn, table)
    conn.execute(f"insert into {table} (id, name) values (100, 'kept')")
    with pytest.raises(psycopg.Error) as info, conn.cursor().copy(statement) as copy:
        copy.write(data)
    diag = info.value.diag
    rows = conn.execute(f"select id from {table} order by id").fetchall()
    return diag.sqlstate, diag.message_primary, diag.context, rows


@pytest.mark.parametrize(
    ("statement", "data"),
    [
        ("copy copy_bad (id, score) from stdin", "1\t1.5\n2\t2.5\n3\tnope\n4\t4\n"),
        ("copy copy_bad (id, name) from stdin", "1\ta\n2\tb\textra\n"),
        ("copy copy_bad (id, name) from stdin", "1\ta\n2\n"),
        ("copy copy_bad (id, score) from stdin csv header", "id,score\n1,1\n2,x\n"),
        ("copy copy_bad (id, name) from stdin csv", '1,"unterminated\n'),
    ],
    ids=["bad-value", "extra-column", "missing-column", "csv-bad-value-after-header", "open-quote"],
)
def test_bad_row_names_its_line_and_writes_nothing(servers, statement, data):
    sqlstate, message, context, rows = both_connected(
        lambda c: _error_of(c, statement, data), *servers
    )
    assert sqlstate in ("22P02", "22P04")
    assert rows == [(100,)]
    assert context is not None and context.startswith("COPY copy_bad, line ")


def test_bad_row_deep_in_a_large_streamed_copy(servers):
    good = "".join(f"{i}\tname {i}\t{i}.5\n" for i in range(1, 120_001))
    data = good + "120001\tbad\tnot-a-number\n"

    def scenario(conn):
        _fresh(conn, "copy_big")
        cur = conn.cursor()
        with cur.copy("copy copy_big (id, name, score) from stdin") as copy:
            for start in range(0, len(good), 65536):
                copy.write(good[start : start + 65536])
        tag = cur.statusmessage
        count = conn.execute("select count(*), sum(id) from copy_big").fetchone()
        conn.execute("delete from copy_big")
        with (
            pytest.raises(errors.InvalidTextRepresentation) as info,
            cur.copy("copy copy_big (id, name, score) from stdin") as copy,
        ):
            copy.write(data)
        after = conn.execute("select count(*) from copy_big").fetchone()
        return tag, count, info.value.diag.context.split(",")[:2], after

    tag, count, context, after = both_connected(scenario, *servers)
    assert tag == "COPY 120000" and count == (120000, 120000 * 120001 // 2)
    assert context == ["COPY copy_big", " line 120001"]
    assert after == (0,)


def test_header_match(servers):
    def scenario(conn):
        _fresh(conn, "copy_hm")
        cur = conn.cursor()
        with cur.copy("copy copy_hm (id, name) from stdin (format csv, header match)") as copy:
            copy.write("id,name\n1,a\n")
        answers = [cur.statusmessage]
        for data in ("name,id\n2,b\n", ",name\n3,c\n"):
            with (
                pytest.raises(psycopg.Error) as info,
                cur.copy("copy copy_hm (id, name) from stdin (format csv, header match)") as c,
            ):
                c.write(data)
            answers.append((info.value.sqlstate, info.value.diag.message_primary))
        with pytest.raises(psycopg.Error) as info:
            conn.execute("copy copy_hm to stdout (format csv, header match)")
        answers.append((info.value.sqlstate, info.value.diag.message_primary))
        return answers, conn.execute("select id, name from copy_hm").fetchall()

    answers, rows = both_connected(scenario, *servers)
    assert answers[0] == "COPY 1" and rows == [(1, "a")]


def test_copy_fail_from_the_client_writes_nothing(servers):
    """psycopg sends CopyFail when the block raises; the server answers 57014 and keeps going."""

    def scenario(conn):
        _fresh(conn, "copy_fail")
        with (
            pytest.raises(RuntimeError),
            conn.cursor().copy("copy copy_fail (id) from stdin") as copy,
        ):
            copy.write("1\n2\n")
            raise RuntimeError("client gave up")
        return conn.execute("select count(*) from copy_fail").fetchone()

    assert both_connected(scenario, *servers) == (0,)


def test_copy_inside_a_transaction_block_rolls_back_with_it(servers):
    def scenario(conn):
        _fresh(conn, "copy_txn")
        with conn.transaction(force_rollback=True):
            with conn.cursor().copy("copy copy_txn (id) from stdin") as copy:
                copy.write("1\n2\n3\n")
            inside = conn.execute("select count(*) from copy_txn").fetchone()
        after = conn.execute("select count(*) from copy_txn").fetchone()
        return inside, after

    assert both_connected(scenario, *servers) == ((3,), (0,))


@pytest.mark.parametrize(
    "statement",
    [
        "copy copy_opts from stdin (format xml)",
        "copy copy_opts from stdin (format csv, format text)",
        "copy copy_opts from stdin (quote '|')",
        "copy copy_opts to stdout (format csv, force_not_null (id))",
        "copy copy_opts from stdin (format csv, force_quote (id))",
        "copy copy_opts from stdin (delimiter 'ab')",
        "copy copy_opts from stdin (format binary, header)",
        "copy copy_opts from stdin (bogus 1)",
        "copy copy_opts (nope) from stdin",
        "copy copy_missing from stdin",
        "copy copy_opts (id) to stdout (format csv, force_quote (name))",
        "copy copy_opts (id) from stdin (format csv, force_not_null (name))",
    ],
)
def test_option_errors_match_postgresql(servers, statement):
    def scenario(conn):
        _fresh(conn, "copy_opts")
        with pytest.raises(psycopg.Error) as info, conn.cursor().copy(statement):
            pass
        return info.value.sqlstate, info.value.diag.message_primary

    both_connected(scenario, *servers)


def test_copy_from_a_server_file_is_refused(nyala_server):
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        _fresh(conn, "copy_file")
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("copy copy_file from '/etc/passwd'")
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("copy copy_file to program 'cat'")


def test_psql_backslash_copy_both_ways(servers, psql, tmp_path):
    source = tmp_path / "in.csv"
    source.write_text('id,name\n1,one\n2,"two, too"\n3,\n')

    def scenario(dsn: str) -> tuple[str, bytes]:
        with psycopg.connect(dsn, autocommit=True) as conn:
            _fresh(conn, "copy_psql")
        target = tmp_path / "out.txt"
        run = subprocess.run(
            [psql, dsn, "-X", "-v", "ON_ERROR_STOP=1",
             "-c", f"\\copy copy_psql (id, name) from '{source}' with (format csv, header)",
             "-c", f"\\copy (select id, name from copy_psql order by id) to '{target}'",
             "-c", "\\copy copy_psql (id, name) to stdout csv"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        written = target.read_bytes()
        target.unlink()
        return run.stdout, written

    assert both(scenario, *servers)[1] == b"1\tone\n2\ttwo, too\n3\t\\N\n"


def test_binary_copy_in_both_directions_through_psycopg(servers):
    def scenario(conn):
        _fresh(conn, "copy_bin")
        cur = conn.cursor()
        with cur.copy("copy copy_bin from stdin (format binary)") as copy:
            copy.set_types(["int4", "text", "float8", "date", "timestamp", "bool", "numeric"])
            for row in ROWS:
                copy.write_row(row)
        tag = cur.statusmessage
        stored = conn.execute("select * from copy_bin order by id").fetchall()
        raw = _copy_out(conn, "copy copy_bin to stdout (format binary)")
        conn.execute("delete from copy_bin")
        with cur.copy("copy copy_bin from stdin with binary") as copy:
            copy.write(raw)
        again = conn.execute("select * from copy_bin order by id").fetchall()
        return tag, stored, again

    tag, stored, again = both_connected(scenario, *servers)
    assert tag == "COPY 4" and stored == ROWS and again == ROWS


def test_binary_copy_in_errors_match_postgresql(servers):
    def scenario(conn):
        _fresh(conn, "copy_binbad")
        answers = []
        for data in (
            b"not a copy file at all",
            b"PGCOPY\n\xff\r\n\x00" + bytes(8) + b"\x00\x02\x00\x00\x00\x04\x00\x00\x00\x01",
            b"PGCOPY\n\xff\r\n\x00" + bytes(8) + b"\x00\x01\x00\x00\x00\x02\x00\x01\xff\xff",
        ):
            with (
                pytest.raises(psycopg.Error) as info,
                conn.cursor().copy("copy copy_binbad (id) from stdin (format binary)") as copy,
            ):
                copy.write(data)
            answers.append((info.value.sqlstate, info.value.diag.message_primary))
        return answers

    both_connected(scenario, *servers)


def test_copy_through_the_extended_protocol(servers):
    """libpq's PQsendQueryParams runs COPY with Parse/Bind/Execute; the copy exchange is the same."""

    def scenario(conn):
        _fresh(conn, "copy_ext")
        pgconn = conn.pgconn
        pgconn.send_query_params(b"copy copy_ext (id, name) from stdin (format csv)", None)
        result = pgconn.get_result()
        assert result.status == pq.ExecStatus.COPY_IN
        pgconn.put_copy_data(b"1,one\n2,two\n")
        pgconn.put_copy_end()
        done = pgconn.get_result()
        tag = done.command_status
        assert pgconn.get_result() is None
        pgconn.send_query_params(
            b"copy (select id, name from copy_ext order by id) to stdout", None
        )
        assert pgconn.get_result().status == pq.ExecStatus.COPY_OUT
        lines = []
        while True:
            nbytes, data = pgconn.get_copy_data(0)
            if nbytes < 0:
                break
            lines.append(bytes(data))
        final = pgconn.get_result().command_status
        assert pgconn.get_result() is None
        return done.status, tag, lines, final

    status, tag, lines, final = both_connected(scenario, *servers)
    assert tag == b"COPY 2" and final == b"COPY 2"
    assert lines == [b"1\tone\n", b"2\ttwo\n"]


def test_text_escapes_round_trip_with_a_custom_delimiter(servers):
    def scenario(conn):
        _fresh(conn, "copy_esc")
        with conn.cursor().copy("copy copy_esc from stdin") as copy:
            for row in ROWS:
                copy.write_row(row)
        out = _copy_out(conn, "copy copy_esc (id, name) to stdout (delimiter ',')")
        conn.execute("delete from copy_esc")
        with conn.cursor().copy("copy copy_esc (id, name) from stdin (delimiter ',')") as copy:
            copy.write(out + b"9,oct\\101 hex\\x42 bs\\\\ tab\\t comma\\, end\n")
        return out, conn.execute("select id, name from copy_esc order by id").fetchall()

    out, stored = both_connected(scenario, *servers)
    assert b'"quoted"\\, comma' in out
    assert stored[:4] == [(r[0], r[1]) for r in ROWS]
    assert stored[4] == (9, "octA hexB bs\\ tab\t comma, end")


def test_bytea_in_text_and_csv_input(servers):
    """bytea text input as PostgreSQL reads it: hex, escape format, empty; bad hex is 22P02."""
    values = [b"", b"ab", b"\x00\x01\xff", bytes(range(256)), None]

    def scenario(conn):
        conn.execute("drop table if exists copy_bytea")
        conn.execute("create table copy_bytea (id integer primary key, b bytea)")
        with conn.cursor().copy("copy copy_bytea from stdin") as copy:
            for i, value in enumerate(values):
                copy.write_row((i, value))
        with conn.cursor().copy("copy copy_bytea from stdin (format csv)") as copy:
            copy.write('10,\\x41 42\n11,plain\n12,a\\\\b\\101\n13,""\n')
        rows = conn.execute("select id, b from copy_bytea order by id").fetchall()
        try:
            with conn.cursor().copy("copy copy_bytea from stdin (format csv)") as copy:
                copy.write("20,\\x4\n")
        except psycopg.Error as exc:
            return rows, exc.sqlstate
        return rows, None

    rows, sqlstate = both_connected(scenario, *servers)
    assert rows[:5] == [(i, v) for i, v in enumerate(values)]
    assert sqlstate == "22023"
