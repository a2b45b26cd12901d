"""Prepared statements run again and again beside PostgreSQL, for tests of what a server
keeps from one execution to the next (plans, shapes, index choices, cached blocks).

``pair_fixture`` gives a test module its ``pair`` of connections with the tables set up;
``prepared_answers`` runs each statement prepared several times and keeps every run's
answer as the server sent it (column names, rows in text format), so a value kept from
an earlier run and served stale shows up as a difference from PostgreSQL's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

from tests.support.differential import Pair
from tests.support.servers import NyalaServer, PostgresServer

Query = tuple[str, tuple[Any, ...]]


def pair_fixture(setup: Sequence[str]) -> Callable[..., Iterator[Pair]]:
    """A ``pair`` fixture: a connection to each server, ``setup`` run on both first."""

    @pytest.fixture
    def pair(nyala_server: NyalaServer, postgres_server: PostgresServer) -> Iterator[Pair]:
        with Pair.connect(nyala_server.dsn, postgres_server.dsn, setup) as pair:
            yield pair

    return pair


@dataclass(frozen=True, slots=True)
class Answer:
    """One run's result: column names, and rows as the text sent (in a stable order)."""

    names: tuple[str, ...]
    rows: tuple[tuple[bytes | None, ...], ...]

    def ids(self) -> list[int]:
        """The first column as integers, in order."""
        return sorted(int(row[0]) for row in self.rows if row[0] is not None)


def prepared_answers(
    conn: psycopg.Connection[Any], queries: Sequence[Query], runs: int
) -> list[tuple[str, list[Answer]]]:
    """Each query run ``runs`` times prepared, with every run's answer."""
    found = []
    for sql, params in queries:
        answers = []
        for _ in range(runs):
            cur = conn.cursor()
            cur.execute(sql, params, prepare=True)
            result = cur.pgresult
            assert result is not None
            rows = (
                tuple(result.get_value(r, c) for c in range(result.nfields))
                for r in range(result.ntuples)
            )
            names = tuple(d.name for d in cur.description or ())
            answers.append(Answer(names, tuple(sorted(rows, key=repr))))
        found.append((sql, answers))
    return found
