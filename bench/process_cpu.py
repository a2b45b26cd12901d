"""CPU seconds of the processes behind a figure, read from /proc around each run.

On a machine other people's test suites keep busy, a wall-clock figure says
little about where a read or write spends its work; the CPU time each
process used does.  A run is split by process kind: the nyala server,
PostgreSQL (the postmaster and the backends it reaped), Spark's JVM, and
Spark's Python worker daemons (with the workers they forked and reaped).
Linux only; elsewhere every figure is empty.

``measured_server`` and ``server_cpu`` serve the per-statement and per-row benches
(``bench.statement_cost``, ``bench.batch_cost``): a nyala server, optionally under
cProfile (``bench.profiled_server``), and its own CPU over one block of work.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from tests.support.servers import NyalaServer

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


def cpu_seconds(pid: int) -> float:
    """CPU seconds process ``pid`` has used itself (user and system, not its children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def settle(pid: int, timeout_s: float = 60.0) -> None:
    """Wait until the server's background work (flushes of the loaded rows) has ended, so
    it is not counted as the measured work's CPU."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        time.sleep(0.5)
        if cpu_seconds(pid) - before < 0.02:
            return


@dataclasses.dataclass
class Measured:
    """What ``server_cpu`` measured, once its block has ended."""

    cpu_s: float = 0.0
    wall_s: float = 0.0


@contextlib.contextmanager
def measured_server(data_dir: Path, pstats: Path | None = None) -> Iterator[NyalaServer]:
    """A nyala server on ``data_dir`` for the block, under cProfile writing to ``pstats``
    (``bench.profiled_server``) when given."""
    program: tuple[str, ...] = (sys.executable, "-m", "server")
    if pstats is not None:
        pstats.parent.mkdir(parents=True, exist_ok=True)
        program = (sys.executable, "-m", "bench.profiled_server", str(pstats.resolve()))
    server = NyalaServer(data_dir, program=program).start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def server_cpu(server: NyalaServer, pstats: Path | None = None) -> Iterator[Measured]:
    """The server's own CPU seconds (and the wall seconds) over the block; with ``pstats``
    (the ``measured_server`` profiled there), its cProfile statistics of the block alone
    land in that file."""
    pid = server.pid
    assert pid is not None
    if pstats is not None:
        marked = pstats.with_suffix(".marked")
        pstats.unlink(missing_ok=True)
        marked.unlink(missing_ok=True)
        os.kill(pid, signal.SIGUSR1)
        _wait_for(marked)
        marked.unlink()
    measured = Measured()
    before, started = cpu_seconds(pid), time.perf_counter()
    yield measured
    measured.cpu_s = cpu_seconds(pid) - before
    measured.wall_s = time.perf_counter() - started
    if pstats is not None:
        os.kill(pid, signal.SIGUSR2)
        _wait_for(pstats)


def _wait_for(path: Path, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the profiled server wrote no {path}")
        time.sleep(0.05)
