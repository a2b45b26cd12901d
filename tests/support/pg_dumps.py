"""A PostgreSQL 15 database built from a schema and written out by pg_dump, for the tests that
restore PostgreSQL's dumps into nyala."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from tests.support.servers import PostgresServer, make_dsn


@contextmanager
def dumped_database(
    postgres_server: PostgresServer, directory: Path, name: str, schema: Iterable[str]
) -> Iterator[tuple[Path, str]]:
    """Create database ``name`` on ``postgres_server``, run ``schema`` there and dump it as
    plain SQL into ``directory``; yields (dump path, the database's DSN) and drops it after."""
    pg_dump = shutil.which("pg_dump")
    if pg_dump is None:
        pytest.skip("pg_dump is not on PATH")
    with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
        admin.execute(f"drop database if exists {name}")
        admin.execute(f"create database {name}")
    source = make_dsn(postgres_server.host, postgres_server.port, dbname=name)
    with psycopg.connect(source, autocommit=True) as conn:
        for statement in schema:
            conn.execute(statement)
    path = directory / "dump.sql"
    subprocess.run(
        [pg_dump, "--no-owner", "--no-privileges", "-f", str(path), source],
        check=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    try:
        yield path, source
    finally:
        with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
            admin.execute(f"drop database if exists {name}")
