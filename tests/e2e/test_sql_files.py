"""Golden SQL files (``tests/sql/*.test``) through psycopg: on nyala, and on PostgreSQL 15 where
a file says ``mode postgres``."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests.support.servers import make_dsn
from tests.support.sqllogic import parse_file, run_file

pytestmark = pytest.mark.e2e

FILES = sorted((Path(__file__).parent.parent / "sql").glob("*.test"))


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_sql_file_on_nyala(path, fresh_nyala_server):
    run_file(parse_file(path), fresh_nyala_server.dsn, server="nyala")


@pytest.mark.parametrize(
    "path",
    [p for p in FILES if parse_file(p).compare_postgres],
    ids=[p.stem for p in FILES if parse_file(p).compare_postgres],
)
def test_sql_file_on_postgres(path, postgres_server):
    name = f"golden_{path.stem}"
    with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
        admin.execute(f'drop database if exists "{name}"')
        admin.execute(f'create database "{name}"')
    try:
        dsn = make_dsn(postgres_server.host, postgres_server.port, dbname=name)
        run_file(parse_file(path), dsn, server="postgres")
    finally:
        with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
            admin.execute(f'drop database if exists "{name}"')
