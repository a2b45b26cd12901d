"""Unit tests for server.timeouts: the statement timer and the errors it produces."""

from __future__ import annotations

import asyncio

from server import timeouts
from storage.errors import QueryCanceled, UndefinedTable


def test_milliseconds_reads_normalised_settings():
    assert timeouts.milliseconds("250") == 250
    assert timeouts.milliseconds("0") == 0
    assert timeouts.milliseconds("-5") == 0
    assert timeouts.milliseconds("2s") == 2000
    assert timeouts.milliseconds("1min") == 60000


def test_timer_fires_cancel_once_and_rewords_the_cancel():
    calls = []

    async def run() -> None:
        timer = timeouts.StatementTimer(lambda: calls.append("cancel"))
        timer.start(10)
        await asyncio.sleep(0.2)
        assert timer.has_fired
        reworded = timer.reword(QueryCanceled("canceling statement due to user request"))
        assert reworded.message == timeouts.STATEMENT_TIMEOUT_MESSAGE
        other = UndefinedTable("x")
        assert timer.reword(other) is other
        timer.start(0)
        assert not timer.has_fired

    asyncio.run(run())
    assert calls == ["cancel"]


def test_stopped_timer_does_not_fire():
    calls = []

    async def run() -> None:
        timer = timeouts.StatementTimer(lambda: calls.append("cancel"))
        timer.start(50)
        timer.stop()
        await asyncio.sleep(0.15)
        cancel = QueryCanceled("canceling statement due to user request")
        assert timer.reword(cancel) is cancel

    asyncio.run(run())
    assert calls == []


def test_idle_in_transaction_error_is_fatal_25p03():
    error = timeouts.idle_in_transaction_error()
    assert (error.sqlstate, error.severity) == ("25P03", "FATAL")
