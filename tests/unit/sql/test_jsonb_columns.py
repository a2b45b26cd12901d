"""The jsonb column kernels give exactly what the per-row functions give, batch by batch,
on random stored documents, and take the per-row path where the text is not jsonb's."""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

from sql.common.json_values import normalize_jsonb
from sql.execution import json_functions, jsonb_columns
from sql.planner import json_operators

NUMBERS = ["0", "1", "1.0", "1.50", "-0", "1e2", "-3.25", "123456789012345678901234567890"]
NUMBERS += ["10", "0.10", "-1", "1.05", "1.5", "0.0", "-0.5", "100.00"]
STRINGS = ["k", "a", "", "é", "a,b", '"', "\\", 'x"y', "{", "]", 'k": 1', "\n", "\\\\"]
KEYS = ["k", "a", "n", "", "ké", 'k"', "\\"]


def _value(rng: random.Random, depth: int) -> str:
    roll = rng.random()
    if depth > 0 and roll < 0.25:
        items = [_value(rng, depth - 1) for _ in range(rng.randrange(4))]
        return "[" + ",".join(items) + "]"
    if depth > 0 and roll < 0.5:
        pairs = [
            json.dumps(rng.choice(KEYS)) + ":" + _value(rng, depth - 1)
            for _ in range(rng.randrange(5))
        ]
        return "{" + ",".join(pairs) + "}"
    if roll < 0.75:
        return rng.choice(NUMBERS)
    if roll < 0.95:
        return json.dumps(rng.choice(STRINGS), ensure_ascii=rng.random() < 0.5)
    return rng.choice(["true", "false", "null"])


@pytest.fixture(scope="module")
def docs() -> pa.Array:
    rng = random.Random(16)
    texts = [normalize_jsonb(_value(rng, rng.randrange(6))) for _ in range(3000)]
    return pa.array([None if i % 97 == 0 else t for i, t in enumerate(texts)], pa.string())


def _both(name: str, docs: pa.Array, *constants: object) -> tuple[list, list]:
    """The ``nyj_column_`` function's answers and the per-row function's, over ``docs``."""
    others = [pa.array([c] * len(docs)) for c in constants]
    kernel, general = json_functions._COLUMN_FUNCTIONS[name]
    column = json_functions._column_function(kernel, general)
    fn, _, returns = json_functions._FUNCTIONS[general]
    per_row = json_functions._map((docs, *others), fn, json_functions._RESULT_ARROW[returns])
    return column(docs, *others).to_pylist(), per_row.to_pylist()


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("name", ["nyj_field", "nyj_field_text", "nyj_exists"])
def test_key_operators_match_per_row(docs, name, key):
    args = (key,) if name == "nyj_exists" else (key, False)
    ours, theirs = _both(name, docs, *args)
    assert ours == theirs


@pytest.mark.parametrize("index", ["0", "1", "3", "-1", "-2", "-4", "7"])
@pytest.mark.parametrize("name", ["nyj_field", "nyj_field_text"])
def test_index_operators_match_per_row(docs, name, index):
    ours, theirs = _both(name, docs, index, True)
    assert ours == theirs


NEEDLES = [
    '{"k": 1}',
    '{"k": 1.00}',
    '{"k": -0}',
    '{"k": 1.5}',
    '{"k": 100}',
    '{"k": -3.250}',
    '{"k": 10}',
    '{"k": 0.0}',
    '{"k": -1}',
    '{"k": 0.1}',
    '{"k": 123456789012345678901234567890}',
    '{"a": "a,b", "k": 1}',
    '{"n": null}',
    '{"k": true}',
    '{"k\\"": "\\""}',
    "{}",
    '{"k": [1]}',
    "[1]",
    '"k"',
    '["a", 1]',
    "[]",
    "[null]",
    '[1.50, "k"]',
    "[1, [1]]",
    "1.0",
    "true",
    "null",
    '"a,b"',
]


@pytest.mark.parametrize("needle", NEEDLES)
def test_contains_matches_per_row(docs, needle):
    ours, theirs = _both("nyj_contains", docs, normalize_jsonb(needle))
    assert ours == theirs


def test_kernels_decide_stored_documents_in_batches(docs):
    """The kernels answer canonical text themselves (the per-row path is the exception)."""
    assert jsonb_columns.field(docs, "k", False) is not None
    assert jsonb_columns.field(docs, "-1", True) is not None
    assert jsonb_columns.exists(docs, "k") is not None
    assert jsonb_columns.contains(docs, {"k": json_functions._parse("1")}) is not None
    assert jsonb_columns.contains(docs, json_functions._parse('["k", 1]')) is not None
    assert jsonb_columns.contains(docs, json_functions._parse('"k"')) is not None
    text = jsonb_columns.field_text(docs, "k", False)
    assert text is not None and text.undecided is not None
    assert text.undecided.sum() < len(docs) // 10


def test_text_that_is_not_balanced_goes_row_by_row():
    broken = pa.array(['{"k": "1}', '{"k": 1}'])
    assert jsonb_columns.field(broken, "k", False) is None
    assert jsonb_columns.exists(pa.array(["[1, 2"]), "k") is None


@pytest.mark.parametrize("name", ["nyj_field", "nyj_field_text", "nyj_exists", "nyj_contains"])
def test_batches_of_nulls_and_empty_batches(name):
    constant = '{"k": 1}' if name == "nyj_contains" else "k"
    args = (constant,) if name in ("nyj_exists", "nyj_contains") else (constant, False)
    for docs in (pa.array([None, None], pa.string()), pa.array([], pa.string())):
        ours, theirs = _both(name, docs, *args)
        assert ours == theirs


@pytest.mark.parametrize(
    ("sql", "stored"),
    [
        ("select doc -> 'k' from t", True),
        ("select t.doc -> 'k' from t join u on true", True),
        ("select x.doc -> 'k' from t as x", True),
        ("select doc -> 'k' from t join u on true", True),
        ("with c as (select 1) select doc -> 'k' from c", False),
        ("with t as (select 1) select doc -> 'k' from t", False),
        ("select doc -> 'k' from (select doc from t) s", False),
        ("select s.doc -> 'k' from t join (select doc from t) s on true", False),
        ("select t.doc -> 'k' from t join (select doc from t) s on true", True),
        ("select doc -> 'k' from t join (select 1) s on true", False),
    ],
)
def test_only_base_table_columns_take_the_batch_kernels(sql, stored):
    """A CTE's or subquery's jsonb column may hold text that is not jsonb_out's."""
    tree = sqlglot.parse_one(sql, read="postgres")
    column = tree.find(exp.JSONExtract).this
    column.type = exp.DataType.build("jsonb")
    assert json_operators._stored(column) is stored
