"""Parameters compared with char(n), on nyala as on PostgreSQL 15: an untyped parameter is
read as bpchar, so its trailing blanks do not count, on DuckDB's path and on every scan
that pushes it down (key reads, index lookups, IN lists); one cast to text keeps them."""

from __future__ import annotations

import struct

import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists cpar_t",
    "drop table if exists cpar_k",
    "create table cpar_t (id int primary key, k char(4))",
    "insert into cpar_t values (1, 'ab'), (2, 'abcd'), (3, NULL)",
    "create index cpar_t_k on cpar_t (k)",
    "create table cpar_k (k char(4) primary key, id int)",
    "insert into cpar_k values ('ab', 1), ('xy  ', 2)",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair


# Each filter runs twice: as written (pushed into the scan: key read, index lookup) and
# wrapped so that DuckDB alone evaluates it.
FILTERS = [
    ("cpar_t", "k = %s", ("ab  ",)),
    ("cpar_t", "k = %s", ("ab",)),
    ("cpar_t", "%s = k", ("ab ",)),
    ("cpar_t", "k = %s::text", ("ab  ",)),
    ("cpar_t", "k = %s::text", ("ab",)),
    ("cpar_t", "k in (%s, %s)", ("ab  ", "abcd ")),
    ("cpar_t", "k between %s and %s", ("ab  ", "abcd  ")),
    ("cpar_t", "k > %s", ("ab  ",)),
    ("cpar_t", "k <> %s", ("ab  ",)),
    ("cpar_t", "k = any(%s)", (["ab  ", "abcd"],)),
    ("cpar_t", "k <> all(%s)", (["ab  ", "zz"],)),
    ("cpar_t", "k = any(%s::text[])", (["ab  ", "abcd"],)),
    ("cpar_t", "k = any('{\"ab  \",zz}')", ()),
    ("cpar_k", "k = %s", ("ab  ",)),
    ("cpar_k", "k = %s", ("xy",)),
    ("cpar_k", "k = %s", ("xy    ",)),
    ("cpar_k", "k in (%s, %s)", ("ab  ", "xy ")),
    ("cpar_k", "k = %s::text", ("xy  ",)),
]


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("pushed", [True, False], ids=["pushed", "duckdb"])
@pytest.mark.parametrize(("table", "condition", "params"), FILTERS)
def test_char_compared_with_parameter_as_on_postgresql(
    pair, table, condition, params, pushed, binary
):
    where = condition if pushed else f"({condition}) is true"
    sql = f"select id from {table} where {where} order by id"
    expected = pair.check(sql, params, binary=binary, prepare=binary)
    assert not isinstance(expected, str)


def test_for_update_by_char_key_parameter(pair):
    pair.check("select id, k from cpar_k where k = %s for update", ("xy ",), prepare=False)


@pytest.mark.parametrize("binary", [False, True])
def test_writes_by_char_key_parameter(pair, binary):
    pair.run("insert into cpar_k values ('w', 7)")
    for sql, params in [
        ("update cpar_k set id = id + 1 where k = %s returning id", ("w   ",)),
        ("delete from cpar_k where k = %s returning id", ("w  ",)),
    ]:
        pair.check(sql, params, binary=binary, prepare=binary)


def test_bpchar_parameters_described_and_bound_in_binary(pair):
    """Drivers that bind in binary the types Describe reports (bpchar, bpchar[]) are read."""
    element = (4).to_bytes(4, "big") + b"zz  "
    # array_recv: one dimension, no NULLs, bpchar elements, length 1, lower bound 1.
    array = struct.pack("!5i", 1, 0, 1042, 1, 1) + element
    answers = []
    for conn in pair:
        pgconn = conn.pgconn
        pgconn.prepare(b"cpar_bin", b"select id from cpar_t where k = $1 or k = any($2)")
        described = pgconn.describe_prepared(b"cpar_bin")
        result = pgconn.exec_prepared(b"cpar_bin", [b"ab  ", array], param_formats=[1, 1])
        answers.append(
            (
                [described.param_type(i) for i in range(described.nparams)],
                result.error_message,
                [result.get_value(i, 0) for i in range(result.ntuples)],
            )
        )
        pgconn.exec_(b"deallocate cpar_bin")
    assert answers[0] == answers[1]
    assert answers[1][2] == [b"1"]
