"""PostgreSQL's own ``pgbench``: select-only (-S) and TPC-B-like, -M prepared, 1 and 8 clients.

Both systems get the same tables, made with DDL equivalent to ``pgbench -i``
at scale 1 (1 branch, 10 tellers, 100,000 accounts): nyala does not accept
``pgbench -i`` yet (it adds primary keys with ALTER TABLE and uses char(n)),
so keys are declared in CREATE TABLE and fillers are varchar.  Each run is
``pgbench -n`` (no VACUUM) for ``mixed_seconds``; the figure is pgbench's
own tps, and a run with failed transactions or a non-zero exit fails the
benchmark, so a fast wrong answer cannot pass as a figure.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess

from bench.context import Context
from bench.measure import NYALA, POSTGRES

log = logging.getLogger(__name__)

ACCOUNTS = 100_000
CLIENTS = (1, 8)
SCRIPTS = {"select-only (-S)": ["-S"], "TPC-B-like": []}
DDL = (
    "drop table if exists pgbench_history",
    "drop table if exists pgbench_accounts",
    "drop table if exists pgbench_tellers",
    "drop table if exists pgbench_branches",
    "create table pgbench_branches (bid int primary key, bbalance int, filler varchar(88))",
    "create table pgbench_tellers (tid int primary key, bid int, tbalance int, filler varchar(84))",
    "create table pgbench_accounts (aid int primary key, bid int, abalance int, "
    "filler varchar(84))",
    "create table pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, "
    "filler varchar(22))",
    "insert into pgbench_branches values (1, 0, null)",
    "insert into pgbench_tellers select i, 1, 0, null from generate_series(1, 10) i",
    f"insert into pgbench_accounts select i, 1, 0, '' from generate_series(1, {ACCOUNTS}) i",
)
_TPS = re.compile(r"tps = ([0-9.]+) \(without initial connection time\)")
_FAILED = re.compile(r"number of failed transactions: (\d+)")


def pgbench(ctx: Context) -> None:
    """pgbench -S and TPC-B-like at 1 and 8 clients on both systems, turn by turn."""
    program = shutil.which("pgbench")
    if program is None:
        log.warning("pgbench is not installed: skipped")
        return
    seconds = max(1, round(ctx.mixed_seconds))
    for system in (NYALA, POSTGRES):
        with ctx.systems.connect(system) as conn:
            for statement in DDL:
                conn.execute(statement)
    for _ in range(ctx.repeats):
        for script, flags in SCRIPTS.items():
            for clients in CLIENTS:
                fig = ctx.figures.figure(
                    f"pgbench {script}, {clients} client{'s' if clients > 1 else ''}",
                    f"tps over {seconds} s (-M prepared)", "tps", higher_is_better=True,
                    note="pgbench's own tps; tables by DDL equivalent to pgbench -i, scale 1",
                )  # fmt: skip
                for system in (NYALA, POSTGRES):
                    fig.add(system, _run(ctx, program, system, [*flags, "-c", str(clients),
                                                                "-j", str(min(clients, 2)),
                                                                "-T", str(seconds)]))  # fmt: skip


def _run(ctx: Context, program: str, system: str, flags: list[str]) -> float:
    server = ctx.systems.nyala if system == NYALA else ctx.systems.postgres
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(PGHOST=server.host, PGPORT=str(server.port), PGUSER="nyala", PGDATABASE="nyala")
    result = subprocess.run(
        [program, "-n", "-M", "prepared", *flags],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    tps, failed = _TPS.search(result.stdout), _FAILED.search(result.stdout)
    if result.returncode != 0 or tps is None or failed is None or int(failed.group(1)):
        raise RuntimeError(f"pgbench {flags} on {system} failed:\n{result.stdout}{result.stderr}")
    return float(tps.group(1))
