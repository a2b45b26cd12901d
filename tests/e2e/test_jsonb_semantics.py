"""json and jsonb beside parameters and untyped literals, on nyala as on PostgreSQL 15:
``IN``, ``=``, ``= ANY/ALL`` and ``<> ANY/ALL`` by jsonb equality (keys in any order, ``1.0`` as ``1``), the deletion
operators ``- text``, ``- int``, ``- text[]`` and ``#-`` with their errors, an untyped
literal read as the jsonb beside it (``coalesce``, ``CASE``, ``nullif``, VALUES) and so
printed normalised, json keeping a lone surrogate escape that jsonb refuses."""

from __future__ import annotations

import pytest
from psycopg.types.json import Jsonb

from tests.support.differential import Pair, outcome

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists jsem",
    "create table jsem (id int primary key, j jsonb, r json)",
    """insert into jsem values (1, '{"a":1,"b":2}', '{"b":2, "a":1}'), (2, '[1,2]', '[1,2]'),
       (3, '{"x": 1.0}', '{"x": 1.0}'), (4, null, null), (5, '"a"', '"a"'),
       (6, '{"x": 1}', '{"x": 1}'), (7, '{"e": "a.b", "x": 10}', '{}'), (8, '[1.50, -0]', '[]')""",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair


REORDERED = '{"b":2,"a":1}'

MEMBERSHIP = [
    ("select id from jsem where j in (%s, %s) order by id", (REORDERED, "[1,2]")),
    (
        "select id from jsem where j in (%s, %s) order by id",
        (Jsonb({"b": 2, "a": 1}), Jsonb([1, 2])),
    ),
    ("select id from jsem where j = %s order by id", (REORDERED,)),
    ("select id from jsem where j in (%s::jsonb, '[1,2]') order by id", (REORDERED,)),
    ("select id from jsem where j in ('{\"x\": 1}', null) order by id", ()),
    ("select id from jsem where j not in ('{\"x\": 1}', null) order by id", ()),
    ("select id from jsem where j not in ('{\"x\": 1}') order by id", ()),
    ("select id from jsem where %s in (j) order by id", (REORDERED,)),
    ("select id, j in ('[1, 2]', '\"a\"') from jsem order by id", ()),
    ("select id from jsem where j in (%s, %s) order by id", (REORDERED, "nope")),
    ("select id from jsem where r in ('[1,2]') order by id", ()),
    ("select id from jsem where j = any(array[%s::jsonb, '[1,2]']) order by id", (REORDERED,)),
    ("select id from jsem where j <> all(array[%s::jsonb]) order by id", (REORDERED,)),
    ("select id from jsem where j = any(%s::jsonb[]) order by id", ([REORDERED, "[1,2]"],)),
    (
        "select id from jsem where j = any(%s) order by id",
        ([Jsonb({"b": 2, "a": 1}), Jsonb([1, 2])],),
    ),
    ("select id from jsem where j <> all(%s) order by id", ([Jsonb([1, 2]), None],)),
    ("select '[1]'::jsonb = any(null::jsonb[]), '[1]'::jsonb = any(array[null::jsonb])", ()),
    ('select id, j = all(array[%s::jsonb, \'{"a":1,"b":2}\']) from jsem order by id', (REORDERED,)),
    ("select id, j <> any(array[%s::jsonb, '[1,2]']) from jsem order by id", (REORDERED,)),
    ("select id, j = all(array[%s::jsonb, null]) from jsem order by id", (REORDERED,)),
    ("select id, j <> any(array[%s::jsonb, null]) from jsem order by id", (REORDERED,)),
    (
        "select id from jsem where j = all(%s::jsonb[]) order by id",
        ([REORDERED, '{"a":1, "b":2.0}'],),
    ),
    ("select id from jsem where j <> any(%s) order by id", ([Jsonb([1, 2]), Jsonb([1.0, 2])],)),
    ("select '[1]'::jsonb = all(array[]::jsonb[]), '[1]'::jsonb <> any(array[]::jsonb[])", ()),
    ("select '[1]'::jsonb = all(null::jsonb[]), '[1]'::jsonb = any(array[]::jsonb[])", ()),
]

DELETION = [
    "select '{\"a\":1,\"{a}\":2}'::jsonb - '{a}'",
    'select \'["a","b","a",1]\'::jsonb - \'a\'',
    "select '3'::jsonb - 'a'",
    "select '3'::jsonb - 1",
    "select '{\"a\":1}'::jsonb - 1",
    "select '{}'::jsonb - 0",
    "select '[]'::jsonb - 'a'",
    "select '[1,2,3]'::jsonb - -1, '[1,2,3]'::jsonb - 5, '[1,2,3]'::jsonb - -5",
    "select '3'::jsonb - '{}'::text[]",
    "select '{\"a\":1,\"b\":2}'::jsonb - array['a',null]",
    "select '[\"a\",\"b\"]'::jsonb - array['a']",
    "select '3'::jsonb #- '{}'",
    "select '3'::jsonb #- '{a}'",
    "select '[1,[2,3]]'::jsonb #- '{1,x}'",
    "select '[1,[2,3]]'::jsonb #- '{1,-1}'",
    "select '{\"a\":[1,{\"b\":2}]}'::jsonb #- '{a,1,b}'",
    "select '{\"a\":1}'::jsonb #- array['a',null]",
    "select '{\"a\":1}'::jsonb #- '{b,c}'",
    "select '{\"a\":{\"b\":1}}'::jsonb #- '{a,b,c}'",
    "select '[1,2]'::jsonb #- '{5}', '[1,2]'::jsonb #- '{-3}'",
    "select '[1,2]'::jsonb #- '{99999999999}'",
    "select '{\"a\":1}'::json - 'a'",
    "select '{\"a\":1}'::jsonb - '{\"a\":1}'::jsonb",
    "select '{\"a\":1}'::jsonb - null::text",
    "select '[1,2]'::jsonb - 1.5",
    "select '[1,2]'::jsonb - 5::bigint",
    "select '[1,2]'::jsonb - 1::smallint",
    "select '[1,2]'::jsonb - array[1]",
    "select 5 - '[1]'::jsonb",
    "select id, (j - 'a')::text, j - 0, (j #- '{x}')::text from jsem where id <> 5 order by id",
    "select ('{\"a\":{\"b\":1,\"c\":2}}'::jsonb -> 'a') - 'b'",
    # ``#-`` is left-associative at the tier of ``->``, as every PostgreSQL operator of its kind.
    "select '{\"a\":[1,2]}'::jsonb #- '{a,0}' -> 0",
    "select '{\"a\":[1,2]}'::jsonb #- '{a,0}' -> 'a'",
    "select '{\"a\":[1,2]}'::jsonb #- '{a,0}' ->> 'a'",
    "select '{\"a\":[1,2]}'::jsonb -> 'a' #- '{0}'",
    "select '{\"a\":[1,2]}'::jsonb #- '{a,0}' #- '{a,0}'",
    "select '{\"a\":[1,2]}'::jsonb #- '{a,0}' = '{\"a\":[2]}'",
]

DELETION_PARAMETERS = [
    ("select (j - %s)::text from jsem order by id", ("a",)),
    ("select j - %s::int from jsem where id = 2", (0,)),
    ("select j - %s from jsem where id = 2", (1,)),
    ("select j - %s from jsem order by id", (["a", "b"],)),
    ("select j #- %s from jsem where id in (1, 3) order by id", (["x"],)),
    ("select j #- %s from jsem order by id", (["a"],)),
    ("select j #> %s from jsem order by id", (["a"],)),
    ("select j #>> %s from jsem order by id", (["a"],)),
    ("select j ?| %s, j ?& %s from jsem order by id", (["a"], ["a", "b"])),
]

UNTYPED_LITERALS = [
    'select coalesce(null::jsonb, \'{"b":1,   "a":2}\')::text',
    'select coalesce(null::jsonb, \'{"b":1,   "a":2}\')',
    'select case when true then \'{"b":1,"a":2}\' else null::jsonb end::text',
    'select case when true then \'{"b":1,"a":2}\' else null::jsonb end',
    'select coalesce(j, \'{"b":1,  "a":2}\')::text from jsem order by id',
    'select coalesce(null::json, \'{"b":1,   "a":2}\')::text',
    "select coalesce(null::jsonb, 'nope')",
    "select nullif('{\"a\":1}'::jsonb, '{\"a\": 1.0}')",
    "select nullif('{\"a\":1}'::jsonb, '{\"a\": 2}')::text",
    'select greatest(null::jsonb, \'{"b":1,"a":1}\')::text',
    'select x::text from (values (null::jsonb), (\'{"b":1,"a":1}\')) v(x) order by 1',
    'select * from (values (null::jsonb), (\'{"b":1,"a":1}\')) v(x)',
    'values (null::jsonb, 1), (\'{"b":1,"a":1}\', 2)',
    'values (null::json), (\'{"b":1,  "a":1}\')',
]

SURROGATES = [
    "select '\"\\ud800\"'::json",
    "select '\"\\ud800\"'::json::text",
    "select '\"\\ud800\"'::jsonb",
    "select '[\"\\ud800\"]'::json -> 0",
    "select '[\"\\ud800\"]'::json ->> 0",
    "select coalesce(null::json, '\"\\udc00\"')::text",
    'select \'{"a": "\\ud800"}\'::json::jsonb',
    "select '\"\\ud800\"'::json::text::json",
    "select '\"\\ud83d\\ude00\"'::json::jsonb::text",
]


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize(("sql", "params"), MEMBERSHIP)
def test_jsonb_membership_as_on_postgresql(pair, sql, params, binary):
    pair.check(sql, params, binary=binary, prepare=binary)


@pytest.mark.parametrize("sql", DELETION)
def test_jsonb_deletion_as_on_postgresql(pair, sql):
    pair.check(sql, messages=True)


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize(("sql", "params"), DELETION_PARAMETERS)
def test_jsonb_deletion_parameters_as_on_postgresql(pair, sql, params, binary):
    pair.check(sql, params, binary=binary, prepare=binary, messages=True)


@pytest.mark.parametrize("sql", UNTYPED_LITERALS)
def test_untyped_literal_read_as_the_jsonb_beside_it(pair, sql):
    if isinstance(pair.check(sql), list):
        pair.same(lambda conn: [d.type_code for d in conn.execute(sql).description], sql)


@pytest.mark.parametrize("sql", SURROGATES)
def test_json_keeps_a_lone_surrogate_that_jsonb_refuses(pair, sql):
    pair.check(sql)


def test_json_column_keeps_a_lone_surrogate(pair):
    pair.run(
        "drop table if exists jsem_raw",
        "create table jsem_raw (id int primary key, x json)",
        'insert into jsem_raw values (1, \'"\\ud800"\'), (2, \'{"b":1, "a":2}\')',
    )
    pair.check("select id, x::text from jsem_raw order by id")
    pair.check("select x from jsem_raw order by id")


# A stored jsonb column's = and IN run as one vectorised pass per candidate; a CTE's column
# runs the per-row function.  Both must give PostgreSQL's rows.
EQUALITIES = [
    "j = '{\"x\": 1}'",
    "j = '{\"x\": 1.00}'",
    "j <> '{\"x\": 1}'",
    "'{\"x\":1}' = j",
    "j in ('{\"x\": 1}', '[1.5, 0]')",
    "j in ('{\"x\": 1.0}', null)",
    "j not in ('{\"x\": 1}', null)",
    'j not in (\'{"b":2,"a":1}\', \'"a"\')',
    'j in (\'{"x": 10, "e": "a.b"}\')',
    "j in ('[1.500, 0.0]', '{\"x\":1e0}')",
    "j in ('nope')",
]


@pytest.mark.parametrize("condition", EQUALITIES)
def test_stored_column_equality_as_the_per_row_path(pair, condition):
    stored = f"select id from jsem where {condition} order by id"
    general = f"with c as (select * from jsem) select id from c where {condition} order by id"
    pair.check(stored)
    pair.check(general)
    pair.same(lambda conn: outcome(conn, stored) == outcome(conn, general), condition)
