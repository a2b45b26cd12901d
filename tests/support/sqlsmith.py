"""Drive sqlsmith (Debian's ``sqlsmith``) against a server and count what its queries provoke.

sqlsmith reads the server's catalogs (pg_type, pg_proc, pg_operator, pg_aggregate
...) and generates random queries over its tables and functions.  It runs here
with ``--dry-run`` in batches of seeded queries, and this module sends each one
itself, inside a transaction it rolls back, so every outcome is kept with its
SQLSTATE: a report by SQLSTATE, the internal errors (``XX000``), the queries
that outlived ``statement_timeout`` by a wide margin (hangs), and whether the
server died.  With a PostgreSQL 15 holding the same tables, each query also
runs there and the SQLSTATEs that differ are counted.
"""

from __future__ import annotations

import collections
import contextlib
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg

SQLSMITH = "sqlsmith"
STATEMENT_TIMEOUT_S = 1.0
BATCH = 100

# The bench's tables (bench/datasets.py), small, and one column of every type nyala stores.
TABLES_DDL = (
    "create table metrics (host text, metric text, time bigint, value double precision, "
    "primary key (host, metric, time))",
    "create table lineitem (l_orderkey bigint not null, l_linenumber integer not null, "
    "l_quantity numeric(15,2) not null, l_extendedprice numeric(15,2), l_discount numeric(15,2), "
    "l_returnflag varchar(1), l_shipdate date, l_shipmode varchar(10), l_comment varchar(44), "
    "primary key (l_orderkey, l_linenumber))",
    "create table typed (id int primary key, b bool, i2 smallint, i8 bigint, f4 real, "
    "f8 double precision, n numeric(12,3), t text, v varchar(20), c char(5), by bytea, d date, "
    "ts timestamp, tz timestamptz)",
)
TABLES_DATA = (
    "insert into metrics select 'h' || (i % 7), 'cpu.' || (i % 3), i, i * 0.5 "
    "from generate_series(1, 300) as g(i)",
    "insert into lineitem select i / 4, i % 4, (i % 50) + 0.25, i * 1.5, 0.05, "
    "case when i % 2 = 0 then 'R' else 'A' end, date '1995-01-01' + (i % 1000)::int, 'AIR', 'quickly ' || i "
    "from generate_series(1, 300) as g(i)",
    "insert into typed values (1, true, 1, 10, 1.5, 2.5, 3.25, 'one', 'uno', 'a', '\\x01', "
    "'2020-01-01', '2020-01-01 01:02:03', '2020-01-01 01:02:03+00'), "
    "(2, false, -2, -20, -0.5, 1e10, -7.125, 'two', 'dos', 'bb', '\\xff00', '1999-12-31', "
    "'1999-12-31 23:59:59', '1999-12-31 23:59:59+00'), "
    "(3, null, null, null, null, null, null, null, null, null, null, null, null, null)",
)


def available() -> bool:
    return shutil.which(SQLSMITH) is not None


def create_tables(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in (*TABLES_DDL, *TABLES_DATA):
            conn.execute(statement)


def generate(dsn: str, seed: int, count: int = BATCH) -> list[str]:
    """``count`` queries sqlsmith builds from the server's catalogs, seeded."""
    done = subprocess.run(
        [
            SQLSMITH,
            f"--target={dsn}",
            "--dry-run",
            "--exclude-catalog",
            f"--seed={seed}",
            f"--max-queries={count}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0 and not done.stdout:
        raise RuntimeError(f"sqlsmith failed: {done.stderr[-2000:]}")
    return [q.strip() for q in done.stdout.split(";\n") if q.strip()]


@dataclass
class Report:
    queries: int = 0
    by_sqlstate: collections.Counter[str] = field(default_factory=collections.Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    internal_errors: list[tuple[str, str]] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    crashed: bool = False
    # (nyala's SQLSTATE, PostgreSQL's) for the queries where they differ.
    differences: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    difference_examples: dict[tuple[str, str], str] = field(default_factory=dict)

    def record(self, state: str, message: str, query: str) -> None:
        self.by_sqlstate[state] += 1
        kept = self.examples.setdefault(state, [])
        if len(kept) < 3 and message not in kept:
            kept.append(message)
        if state == "XX000":
            self.internal_errors.append((message, query))

    def render(self) -> str:
        lines = [f"sqlsmith: {self.queries} queries, server crashed: {self.crashed}, "
                 f"hangs past statement_timeout: {len(self.hangs)}"]  # fmt: skip
        for state, count in self.by_sqlstate.most_common():
            lines.append(f"  {state}: {count}")
            lines.extend(f"      {m[:160]}" for m in self.examples.get(state, []) if state != "ok")
        if self.differences:
            total = sum(self.differences.values())
            lines.append(f"SQLSTATE differing from PostgreSQL 15: {total} queries")
            for (ours, theirs), count in self.differences.most_common():
                example = self.difference_examples[(ours, theirs)]
                lines.append(f"  nyala {ours} / PostgreSQL {theirs}: {count}  {example[:160]}")
        return "\n".join(lines)


def _outcome(conn: psycopg.Connection, query: str) -> tuple[str, str]:
    try:
        conn.execute(query)
        return "ok", ""
    except psycopg.Error as exc:
        diag = exc.diag
        return (exc.sqlstate or "08000", (diag.message_primary or str(exc)).strip())
    finally:
        if not conn.closed:
            with contextlib.suppress(psycopg.Error):
                conn.rollback()


def _connect(dsn: str) -> psycopg.Connection:
    conn = psycopg.connect(dsn)
    conn.execute(f"set statement_timeout = '{int(STATEMENT_TIMEOUT_S * 1000)}ms'")
    conn.commit()
    return conn


def run(
    dsn: str,
    *,
    seconds: float,
    is_alive: Callable[[], bool],
    reference_dsn: str | None = None,
    first_seed: int = 1,
    hang_after_s: float = 30.0,
) -> Report:
    """Send sqlsmith's queries for ``seconds``; stop early if the server dies."""
    report = Report()
    conn = _connect(dsn)
    reference = _connect(reference_dsn) if reference_dsn else None
    deadline = time.monotonic() + seconds
    seed = first_seed
    try:
        while time.monotonic() < deadline and not report.crashed:
            for query in generate(dsn, seed):
                if time.monotonic() >= deadline:
                    break
                hung = threading.Event()

                def cancel(c: psycopg.Connection = conn, flag: threading.Event = hung) -> None:
                    flag.set()
                    c.cancel()

                watchdog = threading.Timer(hang_after_s, cancel)
                watchdog.start()
                try:
                    state, message = _outcome(conn, query)
                finally:
                    watchdog.cancel()
                report.queries += 1
                if hung.is_set():
                    report.hangs.append(query)
                if conn.closed or conn.broken:
                    if not is_alive():
                        report.crashed = True
                        report.record(state, message, query)
                        break
                    conn = _connect(dsn)
                report.record(state, message, query)
                if reference is not None:
                    theirs, _ = _outcome(reference, query)
                    if theirs != state:
                        report.differences[(state, theirs)] += 1
                        report.difference_examples.setdefault((state, theirs), query)
                    if reference.closed or reference.broken:
                        reference = _connect(reference_dsn or "")
            seed += 1
    finally:
        conn.close()
        if reference is not None:
            reference.close()
    return report
