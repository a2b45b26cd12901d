"""Fingerprints: the texts are what PostgreSQL 15's pg_stat_statements showed for the same
statements (tests/e2e/test_statement_statistics.py compares whole workloads live)."""

from __future__ import annotations

import pytest

from sql.frontend.fingerprint import normalised, verbatim
from sql.frontend.parser import split


def _normalised(sql: str):
    return normalised(sql, split(sql)[0])


@pytest.mark.parametrize(
    ("sql", "shown"),
    [
        ("select 1", "select $1"),
        ("select * from t where a = -1 and b = 'x'", "select * from t where a = $1 and b = $2"),
        ("select a - 1 from t", "select a - $1 from t"),
        (
            "select true, null, date '2020-01-01', 1.5, e'\\n', x'ff'",
            "select $1, $2, date $3, $4, $5, $6",
        ),
        (
            "select * from t where a in (1,2,3) limit 10",
            "select * from t where a in ($1,$2,$3) limit $4",
        ),
        (
            "select 'a'::text, 1::bigint, interval '1 day', -1.5e3, +2",
            "select $1::text, $2::bigint, interval $3, $4, +$5",
        ),
        (
            "select a::int from t where a = $1 offset 2",
            "select a::int from t where a = $1 offset $2",
        ),
        ("select a - -1, (1)-1", "select a - $1, ($2)-$3"),
    ],
)
def test_constants_become_numbered_parameters(sql: str, shown: str) -> None:
    assert _normalised(sql).text == shown


def test_spelling_and_spacing_do_not_change_the_query_id() -> None:
    first = _normalised("select * from t where a = 1")
    assert _normalised("SELECT  *\nFROM T WHERE a = 2").queryid == first.queryid
    assert _normalised('select * from "T" where a = 1').queryid != first.queryid
    assert _normalised("select * from t where b = 1").queryid != first.queryid


def test_utility_statements_are_kept_as_sent() -> None:
    print_ = verbatim("set work_mem = '4MB'")
    assert (print_.text, print_.utility) == ("set work_mem = '4MB'", True)
    assert verbatim("set work_mem = '8MB'").queryid != print_.queryid
