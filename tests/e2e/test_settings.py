"""Settings through a real client beside PostgreSQL 15: client_min_messages decides which
notices reach the client, and SET of a parameter nyala does not act on says so."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.e2e


def _notices(dsn: str, statements: list[str]) -> list[str]:
    seen: list[str] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.add_notice_handler(lambda d: seen.append(d.severity_nonlocalized or ""))
        for sql in statements:
            conn.execute(sql)
    return seen


@pytest.mark.parametrize(
    ("level", "expected"), [("notice", ["NOTICE"]), ("warning", []), ("error", [])]
)
def test_client_min_messages_is_honoured(nyala_server, postgres_server, level, expected):
    statements = [f"SET client_min_messages = {level}", "DROP TABLE IF EXISTS no_such_table"]
    assert _notices(postgres_server.dsn, statements) == expected
    assert _notices(nyala_server.dsn, statements) == expected


def test_setting_a_parameter_nyala_does_not_act_on_gives_a_notice(nyala_server):
    assert _notices(nyala_server.dsn, ["SET work_mem = '64MB'"]) == ["NOTICE"]
    assert _notices(nyala_server.dsn, ["SET statement_timeout = '5s'"]) == []
    with psycopg.connect(nyala_server.dsn) as conn:
        row = conn.execute("select short_desc from pg_settings where name = 'work_mem'").fetchone()
        assert row is not None and "does not act on it" in row[0]
