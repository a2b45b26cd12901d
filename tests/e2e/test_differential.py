"""The differential corpus (``tests/sql/corpus``): every statement that agreed with
PostgreSQL 15 when the baseline was recorded must still agree, none may be XX000, and each
that does not agree says why in a ``-- differs:`` comment (tests/support/differential.py)."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.differential import (
    compare_file,
    corpus_files,
    describe,
    read_baseline,
    regressions,
)
from tests.support.servers import make_dsn

pytestmark = pytest.mark.e2e

FILES = corpus_files()


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_corpus_file_agrees_as_recorded(path, fresh_nyala_server, postgres_server):
    name = f"corpus_{path.stem}"
    with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
        admin.execute(f'drop database if exists "{name}"')
        admin.execute(f'create database "{name}"')
    try:
        dsn = make_dsn(postgres_server.host, postgres_server.port, dbname=name)
        verdicts = compare_file(path, fresh_nyala_server.dsn, dsn)
    finally:
        with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
            admin.execute(f'drop database if exists "{name}"')
    lost = regressions(verdicts, read_baseline())
    assert not lost, "no longer answered as PostgreSQL 15 does:\n" + "\n".join(
        describe(v) for v in lost
    )
    internal = [v for v in verdicts if v.nyala.sqlstate == "XX000"]
    assert not internal, "internal errors (XX000):\n" + "\n".join(describe(v) for v in internal)
    unexplained = [v for v in verdicts if not v.agrees and not v.statement.reason]
    assert not unexplained, "disagreeing without a '-- differs:' reason:\n" + "\n".join(
        describe(v) for v in unexplained
    )
