"""Unit tests for sql.copy_in: batched COPY FROM parsing and loading through a real session."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sql.copy import copy_from as copy_from_module
from sql.session.database import Database
from storage import errors


@pytest.fixture
def session(tmp_path):
    db = Database.open(tmp_path, fsync=False)
    s = db.session("nyala", "nyala", {})
    for _ in s.execute("create table t (id int primary key, name text, v double precision)"):
        pass
    yield s
    s.close()
    db.close()


def rows(session):
    (result,) = list(session.execute("select id, name, v from t order by id"))
    return [tuple(r.values()) for b in result.batches for r in b.to_pylist()]


def copy_from(session, sql: str, *pieces: bytes, batch_bytes: int | None = None):
    (result,) = list(session.execute(sql))
    sink = result.copy_in
    assert sink is not None
    if batch_bytes is not None:
        sink._batch_bytes = batch_bytes
    for piece in pieces:
        sink.feed(piece)
    return sink.finish()


def test_text_format_escapes_and_nulls(session):
    tag = copy_from(session, "copy t from stdin", b"1\ta\\tb\\\\c\\nd\t1.5\n2\t\\N\t\\N\n")
    assert tag == "COPY 2"
    assert rows(session) == [(1, "a\tb\\c\nd", 1.5), (2, None, None)]


def test_small_batches_cut_at_row_boundaries_even_inside_csv_quotes(session):
    data = b'id,name,v\n1,"multi\nline, with comma",1\n2,"say ""hi""",2\n3,,3\n'
    pieces = [data[i : i + 7] for i in range(0, len(data), 7)]
    tag = copy_from(session, "copy t from stdin (format csv, header)", *pieces, batch_bytes=8)
    assert tag == "COPY 3"
    assert rows(session) == [
        (1, "multi\nline, with comma", 1.0),
        (2, 'say "hi"', 2.0),
        (3, None, 3.0),
    ]


def test_end_of_data_marker_is_dropped(session):
    assert copy_from(session, "copy t (id) from stdin", b"1\n2\n\\.\n") == "COPY 2"


def test_bad_value_names_its_line_across_batches(session):
    data = b"".join(b"%d\tn\t1\n" % i for i in range(1, 50)) + b"50\tn\tbad\n"
    with pytest.raises(errors.InvalidTextRepresentation) as info:
        copy_from(session, "copy t from stdin", data[:300], data[300:], batch_bytes=64)
    assert info.value.context == 'COPY t, line 50, column v: "bad"'
    assert rows(session) == []


def test_extra_and_missing_columns_are_22p04_with_the_line(session):
    with pytest.raises(errors.BadCopyFileFormat) as info:
        copy_from(session, "copy t from stdin", b"1\ta\t1\n2\tb\t2\t3\n")
    assert info.value.message == "extra data after last expected column"
    assert info.value.context.startswith("COPY t, line 2")
    with pytest.raises(errors.BadCopyFileFormat) as info:
        copy_from(session, "copy t from stdin", b"1\ta\n")
    assert info.value.message == 'missing data for column "v"'


def test_unknown_column_and_force_not_null_outside_the_list(session):
    with pytest.raises(errors.UndefinedColumn):
        list(session.execute("copy t (nope) from stdin"))
    with pytest.raises(errors.InvalidColumnReference):
        list(session.execute("copy t (id) from stdin (format csv, force_not_null (name))"))


def test_copy_fail_aborts(session):
    (result,) = list(session.execute("copy t from stdin"))
    result.copy_in.feed(b"1\ta\t1\n")
    with pytest.raises(errors.QueryCanceled, match="COPY from stdin failed: stop"):
        result.copy_in.fail("stop")
    assert rows(session) == []


def test_unescape_is_vectorised_over_the_column():
    column = pa.array(["plain", "a\x00Bn", "tab\\there", None, "\\q", "\\101\\x42\x00B", "a\x00Db"])
    assert copy_from_module._unescape_text(column, ",").to_pylist() == [
        "plain", "a\\n", "tab\there", None, "q", "AB\\", "a,b",
    ]  # fmt: skip


def test_escaped_delimiter_octal_and_hex_in_text_input(session):
    data = b"1\ta\\,b\\101\\x42\\\\x\t1\n"
    assert copy_from(session, "copy t from stdin", data) == "COPY 1"
    assert rows(session) == [(1, "a,bAB\\x", 1.0)]
    copy_from(session, "copy t from stdin (delimiter ',')", b"2,x\\,y,2\n")
    assert rows(session)[1] == (2, "x,y", 2.0)


def test_nul_byte_is_refused_as_postgresql_refuses_it(session):
    with pytest.raises(errors.CharacterNotInRepertoire) as info:
        copy_from(session, "copy t from stdin", b"1\ta\t1\n2\tb\x00\t2\n")
    assert info.value.context == "COPY t, line 2"
