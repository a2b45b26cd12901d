"""The systems under test: a nyala server, a throwaway PostgreSQL 15, in-process DuckDB.

nyala runs from this working tree exactly as ``nyala serve`` would, with its
defaults (fsync on).  PostgreSQL runs with its defaults except
``shared_buffers``; the settings that differ from PostgreSQL's built-in
defaults are read back from ``pg_settings`` and printed with the results.
DuckDB keeps its tables in a database file of its own, so its figures are
DuckDB on its own storage.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

import duckdb
import psycopg

from bench.measure import DUCKDB, NYALA, POSTGRES
from tests.support.servers import NyalaServer, PostgresServer

log = logging.getLogger(__name__)

POSTGRES_SETTINGS = {"shared_buffers": "1GB"}


class Systems:
    """Start, reach and stop the three systems of one benchmark run."""

    def __init__(self, workdir: Path | None = None) -> None:
        self._own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="nyala-bench-"))
        self.nyala = NyalaServer(self.workdir / "nyala")
        self.postgres = PostgresServer(POSTGRES_SETTINGS)
        self.duckdb: duckdb.DuckDBPyConnection | None = None

    def start(self) -> Systems:
        log.info("starting nyala (data in %s)", self.nyala.data_dir)
        self.nyala.start()
        log.info("starting PostgreSQL 15 (shared_buffers=1GB, otherwise defaults)")
        self.postgres.start()
        self.duckdb = duckdb.connect(str(self.workdir / "duckdb.db"))
        return self

    def close(self) -> None:
        if self.duckdb is not None:
            self.duckdb.close()
            self.duckdb = None
        self.nyala.close()
        self.postgres.stop()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Systems:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def dsn(self, system: str) -> str:
        return {NYALA: self.nyala.dsn, POSTGRES: self.postgres.dsn}[system]

    def connect(self, system: str, *, autocommit: bool = True) -> psycopg.Connection[Any]:
        return psycopg.connect(self.dsn(system), autocommit=autocommit)

    def duck(self) -> duckdb.DuckDBPyConnection:
        assert self.duckdb is not None, "systems not started"
        return self.duckdb

    def describe(self) -> dict[str, Any]:
        """Return versions and the non-default settings, for the report."""
        with self.connect(POSTGRES) as conn:
            pg_version = conn.execute("show server_version").fetchone()[0]
            pg_settings = {
                name: f"{setting}{unit or ''}"
                for name, setting, unit in conn.execute(
                    "select name, setting, unit from pg_settings "
                    "where source not in ('default', 'override', 'client', 'session') "
                    "order by name"
                )
            }
        with self.connect(NYALA) as conn:
            nyala_version = conn.execute("select version()").fetchone()[0]
        return {
            NYALA: {"version": nyala_version, "settings": {"fsync": "on (default)"}},
            POSTGRES: {"version": pg_version, "settings": pg_settings},
            DUCKDB: {"version": duckdb.__version__, "settings": {"storage": "database file"}},
        }
