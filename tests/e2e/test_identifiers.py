"""Identifier rules through a real client where the differential corpus cannot reach: COPY
with mixed-case names, and the NOTICE for a name cut to 63 bytes, beside PostgreSQL 15."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.e2e


def _notices(dsn: str, sql: str) -> list[str]:
    seen: list[str] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.add_notice_handler(lambda d: seen.append(d.sqlstate or ""))
        conn.execute(sql)
    return seen


def test_a_name_over_63_bytes_is_truncated_with_a_notice_as_in_postgresql(
    nyala_server, postgres_server
):
    sql = "SELECT 1 AS " + "n" * 70
    for dsn in (nyala_server.dsn, postgres_server.dsn):
        assert _notices(dsn, sql) == ["42622"]
        with psycopg.connect(dsn) as conn:
            cursor = conn.execute(sql)
            assert cursor.description[0].name == "n" * 63


def test_copy_names_follow_the_identifier_rules(fresh_nyala_server):
    with psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as conn:
        conn.execute('CREATE TABLE "CopyMe" ("Id" int PRIMARY KEY, Val text)')
        with conn.cursor() as cursor:
            with cursor.copy('COPY "CopyMe" ("Id", VAL) FROM STDIN') as copy:
                copy.write_row((1, "one"))
                copy.write_row((2, "two"))
            with (
                pytest.raises(psycopg.errors.UndefinedTable),
                cursor.copy("COPY CopyMe FROM STDIN") as copy,
            ):
                copy.write_row((3, "three", None))
        with (
            conn.cursor() as cursor,
            pytest.raises(psycopg.errors.UndefinedColumn),
            cursor.copy('COPY "CopyMe" (id) TO STDOUT') as copy,
        ):
            list(copy.rows())
        with conn.cursor() as cursor:
            with cursor.copy('COPY "CopyMe" ("Id", val) TO STDOUT') as copy:
                copy.set_types(["int4", "text"])
                assert sorted(copy.rows()) == [(1, "one"), (2, "two")]
            with cursor.copy('COPY (SELECT "Id" FROM "CopyMe" WHERE VAL = \'two\') TO STDOUT') as c:
                assert [bytes(b) for b in c] == [b"2\n"]
