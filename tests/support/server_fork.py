"""Start nyala server processes by forking one that has already imported the server.

A ``python -m server serve`` spends about 1.7 s of CPU importing its modules
(pandas, duckdb, pyarrow, sqlglot and nyala's own) before it opens the data
directory, and the e2e suite starts a server some 270 times.  This module runs
once per test session as ``python -m tests.support.server_fork SOCKET``: it
imports ``server.__main__`` and then, for each request, forks a child that runs
the same ``main()`` with the request's argv, environment and working directory,
its stdout and stderr on the pipe the test process sent, stdin on /dev/null.
The child leaves the request loop and ends as ``python -m server`` does
(``sys.exit(main())``: atexit handlers, non-daemon threads joined).

The fork server reaps its children and sends each exit status (as
``Popen.returncode`` spells it) on the request's connection, so
``ForkedProcess`` answers ``poll`` and ``wait`` as ``subprocess.Popen`` does.
It exits when its stdin (a pipe from the test process) closes.

Only servers that a plain ``python -m server`` with the default test
environment would run come from here (``NyalaServer`` decides);
``NYALA_TEST_FORK_SERVERS=0`` turns it off.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

ENABLED = os.environ.get("NYALA_TEST_FORK_SERVERS", "1") != "0"
_MAX_MESSAGE = 1 << 20


class ForkedProcess:
    """The part of ``subprocess.Popen`` that ``NyalaServer`` uses, for a forked server."""

    def __init__(self, conn: socket.socket, pid: int, stdout: io.TextIOWrapper) -> None:
        self._conn = conn
        self.pid = pid
        self.stdout = stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._receive(timeout=0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._receive(timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(f"nyala server pid {self.pid}", timeout or 0)
        return self.returncode

    def _receive(self, timeout: float | None) -> None:
        # select.select refuses descriptors past 1023, which a long test session reaches.
        with selectors.DefaultSelector() as selector:
            selector.register(self._conn, selectors.EVENT_READ)
            if not selector.select(timeout):
                return
        message = self._conn.recv(_MAX_MESSAGE)
        if not message:
            raise RuntimeError(f"the fork server ended before nyala server pid {self.pid}")
        self.returncode = json.loads(message)["exit"]
        self._conn.close()


class ForkServer:
    """The test process's side: one fork server process, started on first use."""

    def __init__(self, repo_root: Path, env: Mapping[str, str]) -> None:
        self._repo_root = repo_root
        self._env = dict(env)
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._dir: str | None = None
        self._socket_path = ""

    def spawn(self, argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> ForkedProcess:
        """Fork a server running ``python -m server *argv``; its output is on ``.stdout``."""
        self._ensure_started()
        read_fd, write_fd = os.pipe()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            conn.connect(self._socket_path)
            request = {"argv": list(argv), "env": dict(env), "cwd": str(cwd)}
            socket.send_fds(conn, [json.dumps(request).encode()], [write_fd])
            os.close(write_fd)
            write_fd = -1
            reply = conn.recv(_MAX_MESSAGE)
            if not reply:
                raise RuntimeError("the fork server closed the connection without forking")
            pid = json.loads(reply)["pid"]
        except BaseException:
            conn.close()
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)
            raise
        stdout = open(read_fd, encoding="utf-8", errors="replace", buffering=1)  # noqa: SIM115
        return ForkedProcess(conn, pid, stdout)

    def close(self) -> None:
        with self._lock:
            process, self._process = self._process, None
            if process is not None:
                assert process.stdin is not None
                process.stdin.close()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)
            if self._dir is not None:
                with contextlib.suppress(OSError):
                    os.unlink(self._socket_path)
                    os.rmdir(self._dir)
                self._dir = None

    def _ensure_started(self) -> None:
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                return
            self._dir = tempfile.mkdtemp(prefix="nyala-fork-")
            self._socket_path = os.path.join(self._dir, "socket")
            self._process = subprocess.Popen(
                [sys.executable, "-m", "tests.support.server_fork", self._socket_path],
                cwd=self._repo_root, env=self._env, stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=None,
            )  # fmt: skip
            # The fork server creates the socket once it has imported the server.
            for _ in range(12_000):
                if os.path.exists(self._socket_path):
                    return
                if self._process.poll() is not None:
                    raise RuntimeError(f"fork server exited with {self._process.returncode}")
                time.sleep(0.01)
            raise RuntimeError("fork server did not start within 120 s")


# -- the fork server process ----------------------------------------------------------------


def _serve(socket_path: str) -> dict:
    """Fork a child per request; return the request in the child, never in the parent."""
    import server.__main__  # noqa: F401  (what every child would import first)

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(socket_path + ".tmp")
    listener.listen(64)
    os.rename(socket_path + ".tmp", socket_path)
    waiting: dict[int, socket.socket] = {}
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(sys.stdin, selectors.EVENT_READ)
    while True:
        readable = [key.fileobj for key, _ in selector.select(0.01)]
        for pid, conn in list(waiting.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                del waiting[pid]
                with contextlib.suppress(OSError):
                    conn.send(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode())
                conn.close()
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 4096):
            return {}
        if listener not in readable:
            continue
        conn, _ = listener.accept()
        message, fds, _, _ = socket.recv_fds(conn, _MAX_MESSAGE, 1)
        request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            selector.close()
            listener.close()
            for other in waiting.values():
                other.close()
            conn.close()
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            os.dup2(fds[0], 1)
            os.dup2(fds[0], 2)
            os.close(devnull)
            os.close(fds[0])
            return request
        os.close(fds[0])
        conn.send(json.dumps({"pid": pid}).encode())
        waiting[pid] = conn


def _run_child(request: dict) -> None:
    from server.__main__ import main

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = [str(Path(request["cwd"]) / "server" / "__main__.py"), *request["argv"]]
    sys.exit(main(request["argv"]))


if __name__ == "__main__":
    _request = _serve(sys.argv[1])
    if not _request:
        sys.exit(0)
    _run_child(_request)
