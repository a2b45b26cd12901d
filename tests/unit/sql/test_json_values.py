"""jsonb normalisation and the jsonb operators' rules, on parsed documents."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sql.common.json_values import normalize_jsonb, parse_json
from sql.execution.json_functions import MISSING, concat, contains, exists, field, path
from storage.errors import InvalidTextRepresentation, UntranslatableCharacter


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ('{"b":1, "a":1.0, "b":1e3}', '{"a": 1.0, "b": 1000}'),
        ('{"aa": 1, "b": 2, "": 3}', '{"": 3, "b": 2, "aa": 1}'),
        ("[-0, -0.0, 1E-2, 2.50]", "[0, 0.0, 0.01, 2.50]"),
        ('  "tab\\t \\u00e9"  ', '"tab\\t é"'),
        ("null", "null"),
        ('{"é": 1, "z": 2}', '{"z": 2, "é": 1}'),
    ],
)
def test_jsonb_text_is_postgresqls(text, normalised):
    assert normalize_jsonb(text) == normalised


@pytest.mark.parametrize("text", ["{bad", "[1,]", "NaN", '{"a": Infinity}', "", "1 2", "'a'"])
def test_invalid_json_is_22p02(text):
    with pytest.raises(InvalidTextRepresentation):
        parse_json(text)


def test_nul_escape_is_refused_by_jsonb_only():
    assert parse_json('"a\\u0000"') == "a\x00"
    with pytest.raises(UntranslatableCharacter):
        normalize_jsonb('"a\\u0000"')


def test_containment_follows_jsonb_contains():
    doc = parse_json('{"a": {"b": 1, "c": [1, 2, [3]]}, "d": "x"}')
    assert contains(doc, parse_json('{"a": {"c": [2]}}'))
    assert not contains(doc, parse_json('{"a": {"c": [3]}}'))
    assert contains(parse_json("[1, 2]"), parse_json("1"))
    assert not contains(parse_json('{"a": [1]}'), parse_json('{"a": 1}'))
    assert contains(parse_json("[1.0]"), parse_json("[1]"))
    assert not contains(parse_json("[true]"), parse_json("[1]"))


def test_field_path_exists_and_concat():
    doc = parse_json('{"a": [10, null, {"b": "x"}]}')
    assert field(doc, "a", False) == parse_json('[10, null, {"b": "x"}]')
    assert field(doc["a"], "-1", True) == {"b": "x"}
    assert field(doc["a"], "1", True) is None
    assert field(doc["a"], "5", True) is MISSING
    assert path(doc, ["a", "2", "b"]) == "x"
    assert path(doc, ["a", "x"]) is MISSING
    assert exists(parse_json('["a", 1]'), "a") and not exists(parse_json('["a"]'), "b")
    assert concat(parse_json('{"a": 1}'), parse_json('{"a": 2, "b": 3}')) == {"a": 2, "b": 3}
    assert concat(parse_json("1"), parse_json("[2]")) == parse_json("[1, 2]")


# jsonb refuses NUL and lone surrogates (test below)
_TEXT = st.text(
    st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=5
)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20), _TEXT)
_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=12,
)


@given(_DOCUMENTS)
def test_normalising_is_idempotent_and_keeps_the_document(value):
    text = json.dumps(value)
    once = normalize_jsonb(text)
    assert normalize_jsonb(once) == once
    assert json.loads(once) == json.loads(text)


@pytest.mark.parametrize("text", ['"\\ud800"', '"\\udc00"', '{"\\ud800x": 1}', '["\\udfff"]'])
def test_lone_surrogates_are_refused_as_postgresql_does(text):
    with pytest.raises(InvalidTextRepresentation) as raised:
        normalize_jsonb(text)
    assert raised.value.detail == "Unicode low surrogate must follow a high surrogate."
    assert normalize_jsonb('"\\ud83d\\ude00"') == '"\U0001f600"'
