"""jsonb operators over a stored jsonb column, on nyala as on PostgreSQL 15.

``doc -> 'k'``, ``->> 'k'``, ``-> n``, ``@> '{...}'``, ``<@`` and ``? 'k'`` over a column
run as batch kernels (``sql.execution.jsonb_columns``); over any other expression (here
``coalesce(doc, doc)``) they run row by row.  Each statement must give PostgreSQL's
answer both ways, on awkward documents: numbers kept at their scale (``1.50``), ``-0``,
big numbers, escapes, duplicate keys, nested keys of the same name, JSON null beside
SQL NULL, scalars and arrays where an object is expected.  Enough rows to fill several
batches check that kernels and the rows they leave to the per-row path line up.
"""

from __future__ import annotations

import pytest
from psycopg.types.json import Jsonb

from tests.support.differential import Pair, outcome

pytestmark = pytest.mark.e2e

DOCUMENTS = [
    '{"k": 1, "n": 5, "s": "x"}',
    '{"k": 1.50, "n": -0, "s": "é\\u00e9\\n\\"q", "big": 123456789012345678901234567890}',
    '{"k": 1e2, "a": {"k": 1}, "arr": [1, [2, 3], {"k": 1}]}',
    '{"k": "1", "n": 7, "k": 2}',
    '{"k": null, "n": 1.0}',
    '{"k": [1, 2], "n": {"x": "a,b}], \\"k\\": 1"}}',
    '{"s": "\\\\", "k": true}',
    '{"s": "a\\\\\\"b", "k": false, "n": 0.00}',
    '[1, "k", [1, 2], {"k": 1}, null, 1.50]',
    '["a", "k", "k\\"", "a,\\"k\\""]',
    "[]",
    "{}",
    '"k"',
    "1",
    "null",
    "true",
    "-0",
    "1.0",
    '{"": 1, "k ": 2, "ké": 3, "k": 10.0}',
    '{"a": {"b": {"c": {"d": [1, {"k": 1}]}}}, "k": 1, "n": -1}',
    '{"k": {"k": 1}}',
    '{"k": "\\ud83d\\ude00", "s": "tab\\there"}',
    "[[1, 2], 3, [4, [5, [6, [7]]]]]",
    '{"k": 1, "z": [[[[[[1]]]]]]}',
]
SETUP = [
    "drop table if exists jcol",
    "drop table if exists jcol_many",
    "create table jcol (id int primary key, doc jsonb)",
    "create table jcol_many (id int primary key, doc jsonb)",
]
EXPRESSIONS = [
    "doc -> 'k'",
    "doc ->> 'k'",
    "doc ->> 'n'",
    "doc -> 's'",
    "doc ->> 's'",
    "doc ->> ''",
    "doc ->> 'k '",
    "doc -> 'ké'",
    "doc -> 'missing'",
    "doc -> 0",
    "doc ->> 1",
    "doc -> 2",
    "doc -> -1",
    "doc ->> -2",
    "doc -> 5",
    "doc -> -7",
    "doc @> '{\"k\": 1}'",
    "doc @> '{\"k\": 1.0}'",
    "doc @> '{\"k\": 100}'",
    "doc @> '{\"k\": 1.5}'",
    "doc @> '{\"big\": 123456789012345678901234567890}'",
    "doc @> '{\"big\": 123456789012345678901234567890.0}'",
    "doc @> '{\"n\": 0}'",
    "doc @> '{\"n\": -0.0}'",
    "doc @> '{\"k\": null}'",
    'doc @> \'{"k": "1"}\'',
    "doc @> '{\"k\": true}'",
    'doc @> \'{"k": 1, "n": 5}\'',
    'doc @> \'{"k": 2, "k": 1}\'',
    'doc @> \'{"s": "\\\\\\\\"}\'',
    "doc @> '{}'",
    "doc @> '{\"k\": [1]}'",
    "doc @> '{\"k\": {}}'",
    "doc @> '[1]'",
    "doc @> '[1.5, \"k\"]'",
    "doc @> '[]'",
    "doc @> '[null, 1]'",
    "doc @> '1.0'",
    "doc @> 'null'",
    "doc @> '\"k\"'",
    "doc @> '1'",
    "doc @> '[[1]]'",
    "doc @> '[{\"k\": 1}]'",
    "'{\"k\": 1}' <@ doc",
    "doc ? 'k'",
    "doc ? 'a'",
    "doc ? ''",
    "doc ? 'ké'",
    "doc ? 'k\"'",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        for conn in pair:
            with conn.cursor() as cur:
                cur.executemany(
                    "insert into jcol values (%s, %s::jsonb)",
                    [(i, d) for i, d in enumerate(DOCUMENTS)] + [(len(DOCUMENTS), None)],
                )
                cur.execute(
                    "insert into jcol_many select g * 100 + id, doc from jcol, "
                    "generate_series(1, 250) as g(g)"
                )
        yield pair


def _select(expression: str, table: str = "jcol") -> str:
    return f"select id, ({expression})::text from {table} order by id"


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_column_operator_as_on_postgresql(pair, expression):
    expected = pair.check(_select(expression))
    general = expression.replace("doc", "coalesce(doc, doc)")
    assert outcome(pair.nyala, _select(general)) == expected


@pytest.mark.parametrize(
    "expression",
    ["doc ->> 'k'", "doc -> -1", "doc @> '{\"k\": 1}'", "doc ? 'k'", "doc ->> 's'"],
)
def test_batches_of_mixed_documents_as_on_postgresql(pair, expression):
    pair.check(
        f"select count(x), count(distinct x), min(x), max(x) "
        f"from (select ({expression})::text as x from jcol_many) s"
    )


def test_aggregates_over_extracted_values(pair):
    pair.check("select sum((doc ->> 'n')::numeric), count(*) from jcol_many where doc ? 'n'")
    pair.check("select count(*) from jcol_many where doc @> '{\"k\": 1}'")
    pair.check("select sum((doc ->> 's')::int) from jcol where doc ? 's'")


@pytest.mark.parametrize(
    "sql",
    [
        'with c as (select coalesce(null::jsonb, \'{"a":1, "a":2}\') as doc) '
        "select doc ->> 'a', doc ? 'a', doc @> '{\"a\": 2}' from c",
        "select doc ->> 'a', doc -> 0 from (select '{\"a\":1,\"a\":2}'::jsonb as doc) s",
        "select doc ->> 'a' from (select doc || '{\"a\":3}' as doc from jcol where id = 0) s",
        "select x.doc -> 'k' from jcol as x where x.id = 1",
    ],
)
def test_columns_of_derived_tables_as_on_postgresql(pair, sql):
    pair.check(sql)


@pytest.mark.parametrize("binary", [False, True])
def test_documents_bound_as_parameters_are_stored_normalised(pair, binary):
    """psycopg's json.dumps text (key order, ``1e+20``, ``\\u00e9``) is stored as jsonb_out's,
    so the batch kernels read it as PostgreSQL reads it."""
    document = {"b": 1e20, "a": 1, "é": "\u00e9", "n": None, "bb": [1.5, {"z": 1, "y": 2}]}
    for conn in pair:
        conn.execute("delete from jcol where id = 1000")
        conn.execute("insert into jcol values (1000, %s)", (Jsonb(document),), binary=binary)
    for expression in ["doc::text", "doc ->> 'b'", "doc -> 'bb'", "doc @> '{\"b\": 1e20}'"]:
        pair.check(f"select ({expression})::text from jcol where id = 1000")
