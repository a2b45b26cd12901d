"""Server processes for end-to-end tests: a nyala server and a throwaway PostgreSQL 15.

``NyalaServer`` runs ``python -m server serve --port 0`` as a child process,
reads the bound port from its ``listening on HOST:PORT`` log line, and keeps
the whole log so a failing test can show it.  It can be stopped (SIGTERM),
killed (SIGKILL) and started again on the same data directory, which is
what the durability tests need.

``PostgresServer`` is a real PostgreSQL 15 in a temporary directory, used as
the reference where nyala means to behave as PostgreSQL does.  Its binaries
refuse to run as root, so as root they run as the ``postgres`` user (through
``runuser``) on a directory that user owns.  It listens on 127.0.0.1 only
and has a ``nyala`` superuser and a ``nyala`` database, so both servers are
reached with the same DSN shape.

Every process is ended by its PID, never by name.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import psycopg

from tests.support.psql import run_psql
from tests.support.server_fork import ENABLED as FORK_SERVERS
from tests.support.server_fork import ForkedProcess, ForkServer

REPO_ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
USER = "nyala"
DATABASE = "nyala"
LOG_LINES_KEPT = 20_000
_LISTENING = re.compile(r"listening on (\S+):(\d+)")
PG_BIN_DIRS = ("/usr/lib/postgresql/15/bin",)
DEFAULT_PROGRAM = (sys.executable, "-m", "server")


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def make_dsn(host: str, port: int, user: str = USER, dbname: str = DATABASE) -> str:
    """Return a libpq key/value connection string."""
    return f"host={host} port={port} user={user} dbname={dbname}"


def _child_env() -> dict[str, str]:
    """Return the environment for a server process: no NYALA_* or PG* leaking in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NYALA_", "PG"))}
    env["PYTHONUNBUFFERED"] = "1"
    return env


_FORK_SERVER: ForkServer | None = None
_FORK_SERVER_LOCK = threading.Lock()


def _fork_server() -> ForkServer:
    """Return the session's fork server (``tests.support.server_fork``), made on first use."""
    global _FORK_SERVER
    with _FORK_SERVER_LOCK:
        if _FORK_SERVER is None:
            _FORK_SERVER = ForkServer(REPO_ROOT, _child_env())
            atexit.register(_FORK_SERVER.close)
        return _FORK_SERVER


class _Server:
    """What both kinds of server offer tests: a DSN, and psql pointed at it."""

    @property
    def dsn(self) -> str:
        raise NotImplementedError

    def psql(
        self, args: Sequence[str] = (), input: str | None = None, *, check: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """Run the real psql against this server (see ``tests.support.psql.run_psql``)."""
        return run_psql(self.dsn, args, input, check=check)


class NyalaServer(_Server):
    """One nyala server process on one data directory, restartable.

    Invariants: ``port`` and ``pid`` describe the running process, if any;
    ``log`` holds every line the process (and earlier processes on this
    object) wrote to stdout and stderr, each run introduced by a marker line.
    """

    def __init__(
        self,
        data_dir: Path | str,
        *,
        host: str = HOST,
        database: str = DATABASE,
        extra_args: Sequence[str] = (),
        program: Sequence[str] = DEFAULT_PROGRAM,
        configure_by_env: bool = False,
        startup_timeout_s: float = 60.0,
    ) -> None:
        """Describe a server; ``start()`` runs it.

        Args:
            program: what runs before ``serve``, e.g. the ``nyala`` console script.
            configure_by_env: pass host, port, data dir and database as ``NYALA_*``
                environment variables instead of flags.
        """
        self.data_dir = Path(data_dir)
        self.host = host
        self.database = database
        self.extra_args = tuple(extra_args)
        self.program = tuple(program)
        self.configure_by_env = configure_by_env
        self.startup_timeout_s = startup_timeout_s
        self.port: int | None = None
        self._process: subprocess.Popen[str] | ForkedProcess | None = None
        self._drainer: threading.Thread | None = None
        self._log: collections.deque[str] = collections.deque(maxlen=LOG_LINES_KEPT)
        self._log_lock = threading.Lock()
        self._ready = threading.Event()
        self._runs = 0

    # -- what tests use -------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def dsn(self) -> str:
        return make_dsn(self.host, self._require_port(), USER, self.database)

    @property
    def url(self) -> str:
        return f"postgresql://{USER}@{self.host}:{self._require_port()}/{self.database}"

    @property
    def log(self) -> str:
        with self._log_lock:
            return "\n".join(self._log)

    def log_tail(self, lines: int = 200) -> str:
        with self._log_lock:
            return "\n".join(list(self._log)[-lines:])

    def command(self) -> list[str]:
        """Return the command line that starts this server."""
        if self.configure_by_env:
            return [*self.program, "serve", *self.extra_args]
        return [
            *self.program, "serve",
            "--host", self.host, "--port", "0",
            "--data-dir", str(self.data_dir),
            *(("--database", self.database) if self.database != DATABASE else ()),
            *self.extra_args,
        ]  # fmt: skip

    def environment(self) -> dict[str, str]:
        """Return the environment this server runs in."""
        env = _child_env()
        if self.configure_by_env:
            env.update(
                NYALA_HOST=self.host,
                NYALA_PORT="0",
                NYALA_DATA_DIR=str(self.data_dir),
                NYALA_DATABASE=self.database,
            )
        return env

    def start(self) -> NyalaServer:
        """Start the server and wait until it listens; raise with its log if it does not."""
        if self.is_running:
            raise RuntimeError(f"nyala server already running as pid {self.pid}")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._runs += 1
        self._append(f"---- nyala run {self._runs}: {' '.join(self.command())}")
        self._ready.clear()
        self.port = None
        self._process = self._spawn()
        self._drainer = threading.Thread(
            target=self._drain,
            args=(self._process,),
            name=f"nyala-log-{self._process.pid}",
            daemon=True,
        )
        self._drainer.start()
        deadline = time.monotonic() + self.startup_timeout_s
        while not self._ready.wait(timeout=0.05):
            if self._process.poll() is not None:
                self._drainer.join(timeout=5)
                raise RuntimeError(
                    f"nyala server exited with code {self._process.returncode} before "
                    f"listening\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                self._end(signal.SIGKILL, timeout_s=10)
                raise RuntimeError(
                    f"nyala server did not log 'listening on' within "
                    f"{self.startup_timeout_s:.0f}s\n{self.log_tail()}"
                )
        return self

    def stop(self, timeout_s: float = 30.0) -> int | None:
        """Stop the server with SIGTERM and wait; SIGKILL if it hangs. Return its exit code."""
        return self._end(signal.SIGTERM, timeout_s=timeout_s)

    def kill9(self) -> int | None:
        """Kill the server with SIGKILL, as a crash would, and wait for it to be gone."""
        return self._end(signal.SIGKILL, timeout_s=30.0)

    def restart(self) -> NyalaServer:
        """Stop the server (gracefully) and start it again on the same data directory."""
        self.stop()
        return self.start()

    def close(self) -> None:
        """End the process if it still runs (fixture teardown)."""
        self._end(signal.SIGTERM, timeout_s=15.0)

    def __enter__(self) -> NyalaServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"NyalaServer(pid={self.pid}, port={self.port}, data_dir={str(self.data_dir)!r})"

    # -- internals ------------------------------------------------------------------------

    def _spawn(self) -> subprocess.Popen[str] | ForkedProcess:
        """Fork the process from the fork server when it would be the default one."""
        env = self.environment()
        # The server reads NYALA_* when it runs; anything else could matter at start-up.
        interpreter_env = {k: v for k, v in env.items() if not k.startswith("NYALA_")}
        if FORK_SERVERS and self.program == DEFAULT_PROGRAM and interpreter_env == _child_env():
            return _fork_server().spawn(self.command()[len(self.program) :], env, REPO_ROOT)
        return subprocess.Popen(
            self.command(),
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
        )

    def _require_port(self) -> int:
        if self.port is None:
            raise RuntimeError("nyala server is not running")
        return self.port

    def _append(self, line: str) -> None:
        with self._log_lock:
            self._log.append(line)

    def _drain(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None, "stdout is a pipe"
        for raw in process.stdout:
            line = raw.rstrip("\n")
            self._append(line)
            if not self._ready.is_set():
                match = _LISTENING.search(line)
                if match:
                    self.port = int(match.group(2))
                    self._ready.set()
        process.stdout.close()

    def _end(self, sig: signal.Signals, *, timeout_s: float) -> int | None:
        process = self._process
        if process is None:
            return None
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, sig)
            try:
                process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self._append(f"---- pid {process.pid} ignored {sig.name} for {timeout_s}s: SIGKILL")
                os.kill(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        if self._drainer is not None:
            self._drainer.join(timeout=10)
        self._append(f"---- pid {process.pid} exited with code {process.returncode}")
        self._ready.clear()
        self.port = None
        self._process = None
        return process.returncode


def find_pg_binary(name: str) -> str | None:
    """Return the path of a PostgreSQL 15 server binary, or None."""
    for directory in PG_BIN_DIRS:
        candidate = Path(directory) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def missing_postgres_reason() -> str | None:
    """Return why a PostgreSQL server cannot be started here, or None if it can."""
    for name in ("initdb", "pg_ctl", "postgres"):
        if find_pg_binary(name) is None:
            return f"PostgreSQL server binary {name!r} not found"
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "running as root and runuser is missing"
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run PostgreSQL as"
    return None


TEST_SETTINGS = {"timezone": "'UTC'", "fsync": "off", "synchronous_commit": "off"}
"""What tests run PostgreSQL with: nyala's time zone, and fast rather than durable."""


class PostgresServer(_Server):
    """A throwaway PostgreSQL 15 cluster on 127.0.0.1, trust auth.

    ``settings`` are appended to postgresql.conf (later lines win); tests use
    ``TEST_SETTINGS``, the benchmark PostgreSQL's defaults plus shared_buffers.
    """

    def __init__(self, settings: Mapping[str, str] = TEST_SETTINGS) -> None:
        self.settings = dict(settings)
        self.host = HOST
        self.port: int | None = None
        self.database = DATABASE
        self.base_dir: Path | None = None
        self._as_owner = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    @property
    def data_dir(self) -> Path:
        assert self.base_dir is not None, "PostgreSQL server not started"
        return self.base_dir / "data"

    @property
    def log_file(self) -> Path:
        assert self.base_dir is not None, "PostgreSQL server not started"
        return self.base_dir / "postgres.log"

    @property
    def dsn(self) -> str:
        assert self.port is not None, "PostgreSQL server not started"
        return make_dsn(self.host, self.port, USER, self.database)

    @property
    def url(self) -> str:
        return f"postgresql://{USER}@{self.host}:{self.port}/{self.database}"

    @property
    def log(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")
        except (OSError, AssertionError):
            return ""

    def start(self) -> PostgresServer:
        """initdb, start on a free port, create the nyala role and database."""
        # Not under pytest's tmp dirs (mode 0700, owned by root) nor $TMPDIR, which the
        # postgres user may not be able to enter: /tmp is open to every user.
        self.base_dir = Path(
            tempfile.mkdtemp(prefix="nyala-pg-", dir="/tmp" if self._as_owner else None)
        )
        if self._as_owner:
            shutil.chown(self.base_dir, "postgres", "postgres")
        self._run_as_owner(
            find_pg_binary("initdb"), "-D", self.data_dir, "--auth=trust", "-U", "postgres",
            "--encoding=UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        with (self.data_dir / "postgresql.conf").open("a") as conf:
            conf.write("\n" + "".join(f"{k} = {v}\n" for k, v in self.settings.items()))
        self.port = free_port()
        options = f"-h {self.host} -p {self.port} -k {self.base_dir}"
        self._run_as_owner(
            find_pg_binary("pg_ctl"), "start", "-D", self.data_dir, "-l", self.log_file,
            "-w", "-t", "60", "-o", options,
        )  # fmt: skip
        run_psql(
            make_dsn(self.host, self.port, "postgres", "postgres"),
            [
                "-c",
                f"create role {USER} superuser login",
                "-c",
                f"create database {DATABASE} owner {USER}",
            ],
            check=True,
        )
        return self

    def stop(self) -> None:
        """Stop the cluster (fast shutdown) and remove its directory."""
        if self.base_dir is None:
            return
        try:
            if (self.data_dir / "postmaster.pid").exists():
                self._run_as_owner(
                    find_pg_binary("pg_ctl"), "stop", "-D", self.data_dir, "-m", "fast", "-w",
                    "-t", "60",
                )  # fmt: skip
        finally:
            self._kill_leftover_postmaster()
            shutil.rmtree(self.base_dir, ignore_errors=True)
            self.base_dir = None
            self.port = None

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _run_as_owner(self, *args: object) -> None:
        command = [*self._as_owner, *(str(arg) for arg in args)]
        result = subprocess.run(
            command, cwd=self.base_dir, env=_child_env(), stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if result.returncode != 0:
            raise RuntimeError(
                f"{' '.join(command)} failed with code {result.returncode}\n"
                f"{result.stdout}\n{result.stderr}\n{self.log}"
            )

    def _kill_leftover_postmaster(self) -> None:
        """SIGKILL the postmaster named in postmaster.pid, if pg_ctl stop left it running."""
        try:
            pid = int((self.data_dir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def run_on_each(servers: Sequence[NyalaServer | PostgresServer], statements: Sequence[str]) -> None:
    """Run the same set-up statements, in autocommit, on each server of a side-by-side test."""
    for server in servers:
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)
