"""CPU seconds of the processes behind a Spark figure, read from /proc around each run.

On a machine other people's test suites keep busy, a wall-clock figure says
little about where a read or write spends its work; the CPU time each
process used does.  A run is split by process kind: the nyala server,
PostgreSQL (the postmaster and the backends it reaped), Spark's JVM, and
Spark's Python worker daemons (with the workers they forked and reaped).
Linux only; elsewhere every figure is empty.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

NYALA_SERVER = "nyala server"
POSTGRES = "PostgreSQL"
SPARK_JVM = "Spark JVM"
PYTHON_WORKERS = "Spark Python workers"
KINDS = (NYALA_SERVER, POSTGRES, SPARK_JVM, PYTHON_WORKERS)
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class ProcessCpu:
    """Which processes count as what: the bench's own descendants, plus the PostgreSQL
    postmaster (pg_ctl starts it outside the bench's process tree)."""

    def __init__(self, nyala_pid: int | None, postmaster_pid: int | None) -> None:
        self.nyala_pid = nyala_pid
        self.postmaster_pid = postmaster_pid

    def snapshot(self) -> dict[str, float]:
        """CPU seconds used so far by each kind of process (the processes alive now)."""
        table = {
            pid: (parent, command, own, reaped)
            for pid, parent, command, own, reaped in _processes()
        }
        jvms = {
            pid for pid, (parent, command, _, _) in table.items()
            if parent == os.getpid() and "java" in command
        }  # fmt: skip
        daemons = {
            pid for pid, (parent, command, _, _) in table.items()
            if parent in jvms and "spark.daemon" in command
        }  # fmt: skip
        totals = dict.fromkeys(KINDS, 0.0)
        for pid, (parent, _, own, reaped) in table.items():
            if pid == self.nyala_pid:
                totals[NYALA_SERVER] += own
            elif self.postmaster_pid is not None and self.postmaster_pid in (pid, parent):
                totals[POSTGRES] += own + (reaped if pid == self.postmaster_pid else 0.0)
            elif pid in jvms:
                totals[SPARK_JVM] += own  # its reaped children are Python daemons
            elif pid in daemons or parent in daemons:
                totals[PYTHON_WORKERS] += own + reaped
        return totals

    def since(self, before: dict[str, float]) -> dict[str, float]:
        after = self.snapshot()
        return {kind: round(max(0.0, after[kind] - before.get(kind, 0.0)), 2) for kind in KINDS}


def postmaster_pid(data_dir: Path) -> int | None:
    """The PostgreSQL postmaster's pid, from the first line of ``postmaster.pid``."""
    try:
        return int((data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _processes() -> Iterator[tuple[int, int, str, float, float]]:
    """(pid, parent pid, command line, own CPU s, reaped children's CPU s) of every process."""
    proc = Path("/proc")
    if not proc.is_dir():
        return
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
        yield (
            int(entry.name),
            int(fields[1]),
            command,
            (utime + stime) / _TICKS,
            (cutime + cstime) / _TICKS,
        )
