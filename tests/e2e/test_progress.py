"""pg_stat_progress_copy beside PostgreSQL 15, and nyala_progress_maintenance.

A COPY FROM STDIN is held open half-way (the client has sent part of its
data) and a COPY TO STDOUT half-read (the client stops reading), while a
second session reads the progress view on each server.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from tests.support.servers import run_on_each

pytestmark = pytest.mark.e2e

_WAIT_S = 20.0
_ROW = "12345\t" + "x" * 90 + "\n"
_PROGRESS = (
    "select command, type, relid = 'progress_rows'::regclass, bytes_total,"
    " tuples_excluded, bytes_processed > 0, tuples_processed > 0, datname = current_database()"
    " from pg_stat_progress_copy where pid = %s"
)


README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_statement() -> str:
    section = README.read_text().split("## Progress of a COPY", 1)[1]
    return section.split("```sql\n", 1)[1].split("```", 1)[0].strip().rstrip(";")


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + _WAIT_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _columns(server) -> list[tuple[str, int]]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        cur = conn.execute("select * from pg_stat_progress_copy limit 0")
        return [(c.name, c.type_code) for c in cur.description]


def test_the_copy_progress_view_has_postgresql_15s_columns(nyala_server, postgres_server):
    same = {19: 25}  # name columns are sent as text by nyala's catalogs
    nyala, postgres = _columns(nyala_server), _columns(postgres_server)
    assert nyala == [(n, same.get(t, t)) for n, t in postgres]


def _copy_from_progress(server) -> tuple[object, ...]:
    run_on_each(
        [server],
        [
            "drop table if exists progress_rows",
            "create table progress_rows (a int, b text)",
        ],
    )
    with (
        psycopg.connect(server.dsn, autocommit=True) as monitor,
        psycopg.connect(server.dsn, autocommit=True) as loader,
    ):
        pid = loader.info.backend_pid
        seen: list[tuple[object, ...]] = []

        def progressed() -> bool:
            row = monitor.execute(_PROGRESS, (pid,)).fetchone()
            if row is not None and row[5] and row[6]:
                seen.append(row)
            return bool(seen)

        with loader.cursor() as cur, cur.copy("copy progress_rows from stdin") as copy:
            chunk = _ROW * 10_000  # about 1 MB a write, past a COPY batch
            for _ in range(40):
                copy.write(chunk)
                if progressed():
                    break
            _until(progressed, "the COPY's progress to show")
            readme = [
                (str(r[1]), r[2]) for r in monitor.execute(_readme_statement()) if r[0] == pid
            ]
        assert monitor.execute(_PROGRESS, (pid,)).fetchone() is None  # gone once it ended
        return (*seen[0], readme)


def test_a_running_copy_from_stdin_shows_its_progress(nyala_server, postgres_server):
    nyala = _copy_from_progress(nyala_server)
    assert nyala == _copy_from_progress(postgres_server)
    assert nyala[:-1] == ("COPY FROM", "PIPE", True, 0, 0, True, True, True)
    assert nyala[-1] == [("progress_rows", "COPY FROM")]


def _copy_to_progress(server) -> tuple[object, ...]:
    run_on_each(
        [server],
        [
            "drop table if exists progress_rows",
            "create table progress_rows (a int, b text)",
            "insert into progress_rows select i, repeat('y', 200) from generate_series(1, 200000) i",
        ],
    )
    with (
        psycopg.connect(server.dsn, autocommit=True) as monitor,
        psycopg.connect(server.dsn, autocommit=True) as reader,
    ):
        pid = reader.info.backend_pid
        with reader.cursor() as cur, cur.copy("copy progress_rows to stdout") as copy:
            next(iter(copy))  # read a little, then stop reading: the server has to wait

            def running() -> tuple[object, ...] | None:
                row = monitor.execute(_PROGRESS, (pid,)).fetchone()
                return row if row is not None and row[6] else None

            _until(lambda: running() is not None, "the COPY TO to show")
            row = running()
            for _ in copy:
                pass
        assert row is not None
        return row[:5] + row[6:]


def test_a_copy_to_stdout_shows_the_rows_sent(nyala_server, postgres_server):
    nyala = _copy_to_progress(nyala_server)
    assert nyala == _copy_to_progress(postgres_server)
    assert nyala == ("COPY TO", "PIPE", True, 0, 0, True, True)


def test_the_maintenance_progress_view_has_its_columns(nyala_server):
    """What it lists is tested in tests/unit/sql/test_system_views.py (a running op cannot be
    caught reliably here)."""
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        cur = conn.execute("select * from nyala_progress_maintenance")
        assert [c.name for c in cur.description] == [
            "table_name", "tablet_id", "op", "kind", "reason", "started_at", "elapsed_ms",
        ]  # fmt: skip
