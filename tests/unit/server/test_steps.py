"""Unit tests for server.steps: abandoning a simple Query closes what it holds."""

from __future__ import annotations

from server.steps import QueryProgress


def test_close_abandons_the_statements_not_yet_run():
    closed = []

    def results():
        try:
            yield "first"
            yield "second"
        finally:
            closed.append("results")

    progress = QueryProgress("select 1; select 2", results=results())
    assert next(progress.results) == "first"
    progress.close()
    assert closed == ["results"]
