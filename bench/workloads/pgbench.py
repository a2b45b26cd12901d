"""PostgreSQL's own ``pgbench``: select-only (-S) and TPC-B-like, -M prepared, 1 and 8 clients.

Both systems get the same tables from ``pgbench -i -I dtgvp -s 1`` (drop, create, load
client-side with COPY ... FREEZE, VACUUM, then primary keys by ALTER TABLE: 1 branch, 10
tellers, 100,000 accounts, char(n) fillers, fillfactor 100), the steps pgbench runs by
default, spelled out so a new default cannot make the systems differ.  Scale 1 is
pgbench's smallest, so the tables do not shrink with ``--scale``.  Each run is
``pgbench -n`` (no VACUUM) for ``mixed_seconds``; the figure is pgbench's own tps, and a
run with failed transactions or a non-zero exit fails the benchmark, so a fast wrong
answer cannot pass as a figure.
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

CLIENTS = (1, 8)
SCRIPTS = {"select-only (-S)": ["-S"], "TPC-B-like": []}
INIT = ["-i", "-I", "dtgvp", "-s", "1", "-q"]
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
        _pgbench(ctx, program, system, INIT)
    for _ in range(ctx.repeats):
        for script, flags in SCRIPTS.items():
            for clients in CLIENTS:
                fig = ctx.figures.figure(
                    f"pgbench {script}, {clients} client{'s' if clients > 1 else ''}",
                    f"tps over {seconds} s (-M prepared)", "tps", higher_is_better=True,
                    note="pgbench's own tps; tables by pgbench -i, scale 1",
                )  # fmt: skip
                for system in (NYALA, POSTGRES):
                    fig.add(system, _run(ctx, program, system, [*flags, "-c", str(clients),
                                                                "-j", str(min(clients, 2)),
                                                                "-T", str(seconds)]))  # fmt: skip


def _run(ctx: Context, program: str, system: str, flags: list[str]) -> float:
    result = _pgbench(ctx, program, system, ["-n", "-M", "prepared", *flags])
    tps, failed = _TPS.search(result.stdout), _FAILED.search(result.stdout)
    if result.returncode != 0 or tps is None or failed is None or int(failed.group(1)):
        raise RuntimeError(f"pgbench {flags} on {system} failed:\n{result.stdout}{result.stderr}")
    return float(tps.group(1))


def _pgbench(
    ctx: Context, program: str, system: str, flags: list[str]
) -> subprocess.CompletedProcess[str]:
    """Run pgbench with ``flags`` against ``system``; a failed ``pgbench -i`` fails the bench."""
    server = ctx.systems.nyala if system == NYALA else ctx.systems.postgres
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(PGHOST=server.host, PGPORT=str(server.port), PGUSER="nyala", PGDATABASE="nyala")
    result = subprocess.run(
        [program, *flags], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    if flags[0] == "-i" and result.returncode != 0:
        raise RuntimeError(f"pgbench {flags} on {system} failed:\n{result.stderr}")
    return result
