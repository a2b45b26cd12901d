from __future__ import annotations

import pytest

from sql.frontend.parser import parse
from sql.planner.literal_casts import check_literal_casts
from storage.errors import FeatureNotSupported, InvalidTextRepresentation


def _checked(sql: str) -> str:
    ast = parse(sql)[0].ast
    check_literal_casts(ast)
    return ast.sql(dialect="postgres")


def test_integers_take_only_digits_with_blanks_around():
    assert _checked("SELECT ' 12 '::int") == "SELECT CAST(' 12 ' AS INT)"
    for bad in ("'12.5'::int", "''::bigint", "'1e3'::smallint", "'abc'::int"):
        with pytest.raises(InvalidTextRepresentation):
            _checked(f"SELECT {bad}")


@pytest.mark.parametrize(
    ("text", "value"),
    [("true", "TRUE"), ("T", "TRUE"), ("yes", "TRUE"), ("on", "TRUE"), ("1", "TRUE"),
     ("off", "FALSE"), ("of", "FALSE"), ("  f ", "FALSE"), ("no", "FALSE"), ("0", "FALSE")],
)  # fmt: skip
def test_booleans_read_as_boolin(text, value):
    assert _checked(f"SELECT '{text}'::boolean") == f"SELECT {value}"


@pytest.mark.parametrize("text", ["o", "maybe", "", "11", "yess"])
def test_other_words_are_not_booleans(text):
    with pytest.raises(InvalidTextRepresentation):
        _checked(f"SELECT '{text}'::boolean")


def test_money_is_refused():
    with pytest.raises(FeatureNotSupported):
        _checked("SELECT '1.50'::money")
