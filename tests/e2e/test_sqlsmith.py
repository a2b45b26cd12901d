"""sqlsmith against nyala over the bench tables: no crash, no XX000, no hang past statement_timeout.

sqlsmith (Debian's ``sqlsmith``) starts by reading pg_type, pg_proc,
pg_operator and pg_aggregate, then builds random queries, DML included, from
the functions and operators they list.  ``tests/support/sqlsmith.py`` sends
each query in a rolled-back transaction with ``statement_timeout`` = 1 s and
keeps its SQLSTATE.  ``NYALA_SQLSMITH_SECONDS`` sets how long it runs (``make
fuzz`` runs it for minutes); ``NYALA_SQLSMITH_REPORT`` names a file that gets
the outcomes by SQLSTATE and, when a PostgreSQL 15 is at hand, how many
queries got another SQLSTATE there.
"""

from __future__ import annotations

import os

import pytest

from tests.support import sqlsmith
from tests.support.servers import NyalaServer, PostgresServer, missing_postgres_reason

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sqlsmith.available(), reason="sqlsmith is not installed"),
]

SECONDS = float(os.environ.get("NYALA_SQLSMITH_SECONDS", "25"))
REPORT = os.environ.get("NYALA_SQLSMITH_REPORT")
SEED = int(os.environ.get("NYALA_SQLSMITH_SEED", "1"))


def test_sqlsmith_queries_never_crash_fail_internally_or_hang(
    fresh_nyala_server: NyalaServer,
) -> None:
    sqlsmith.create_tables(fresh_nyala_server.dsn)
    reference = None
    if REPORT and missing_postgres_reason() is None:
        reference = PostgresServer().start()
        sqlsmith.create_tables(reference.dsn)
    try:
        report = sqlsmith.run(
            fresh_nyala_server.dsn,
            seconds=SECONDS,
            is_alive=lambda: fresh_nyala_server.is_running,
            reference_dsn=reference.dsn if reference is not None else None,
            first_seed=SEED,
        )
    finally:
        if reference is not None:
            reference.stop()
    if REPORT:
        with open(REPORT, "a", encoding="utf-8") as out:
            out.write(report.render() + "\n")
    assert not report.crashed, fresh_nyala_server.log_tail()
    assert report.internal_errors == [], report.internal_errors[:3]
    assert report.hangs == [], report.hangs[:3]
    assert report.queries >= 20, report.render()
    # What sqlsmith builds from nyala's catalogs runs (many more time out on a busy machine).
    assert report.by_sqlstate["ok"] >= 10, report.render()
    assert "Traceback" not in fresh_nyala_server.log
