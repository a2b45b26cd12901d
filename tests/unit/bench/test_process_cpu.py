"""bench.process_cpu: CPU seconds land on the kind of process that spent them, reaped children
included (PostgreSQL's backends exit and are reaped by the postmaster before a figure ends)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.process_cpu import KINDS, NYALA_SERVER, POSTGRES, ProcessCpu, postmaster_pid

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

_BURN = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"


def test_a_server_s_cpu_counts_as_the_server_s():
    child = subprocess.Popen([sys.executable, "-c", _BURN + "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)  # fmt: skip
    try:
        processes = ProcessCpu(nyala_pid=child.pid, postmaster_pid=None)
        since_start = dict.fromkeys(KINDS, 0.0)
        deadline = time.monotonic() + 60
        while processes.since(since_start)[NYALA_SERVER] < 0.25:  # it burns 0.3 s, then waits
            assert time.monotonic() < deadline, "the server's CPU never showed"
            time.sleep(0.05)
        assert processes.since(since_start)[POSTGRES] == 0.0
    finally:
        child.communicate(b"")


def test_children_a_postmaster_reaped_count_as_postgres(tmp_path):
    # The "postmaster" starts a backend that burns CPU and exits, reaps it, then waits.
    script = (
        "import subprocess, sys\n"
        f"subprocess.run([sys.executable, '-c', {_BURN!r}])\n"
        "print('reaped', flush=True)\n"
        "sys.stdin.read()\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        processes = ProcessCpu(nyala_pid=None, postmaster_pid=parent.pid)
        assert parent.stdout is not None and parent.stdout.readline() == "reaped\n"
        spent = processes.since(dict.fromkeys(KINDS, 0.0))
        assert spent[POSTGRES] >= 0.25
        assert spent[NYALA_SERVER] == 0.0
    finally:
        parent.communicate("")


def test_the_postmaster_pid_comes_from_its_pid_file(tmp_path):
    assert postmaster_pid(tmp_path) is None
    (tmp_path / "postmaster.pid").write_text("4242\n/var/lib/postgresql/data\n")
    assert postmaster_pid(tmp_path) == 4242
