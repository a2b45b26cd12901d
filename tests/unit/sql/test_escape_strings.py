from __future__ import annotations

import pytest
from sqlglot import exp

from sql.frontend.parser import parse
from storage.errors import CharacterNotInRepertoire


def test_escape_string_constants_are_plain_strings():
    [statement] = parse(r"SELECT E'\\xDeAdBeEf', E'a\tb'")
    literals = [e for e in statement.ast.expressions]
    assert all(isinstance(e, exp.Literal) and e.is_string for e in literals)
    assert [e.name for e in literals] == ["\\xDeAdBeEf", "a\tb"]


def test_a_decoded_nul_is_22021():
    with pytest.raises(CharacterNotInRepertoire):
        parse(r"SELECT E'a\000b'")
