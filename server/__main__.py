"""The ``nyala`` command: build the Config, open the database, serve until SIGTERM or SIGINT.

Usage: ``nyala serve [flags]`` or ``python -m server serve [flags]``; see
``nyala serve --help`` for the flags and their NYALA_* environment variables.
``nyala check --data-dir D`` verifies a stopped server's files offline
(``storage.integrity``) and exits 1 if any is damaged.
Once the server listens it logs one line containing ``listening on HOST:PORT``
with the port actually bound (tests read it when they pass ``--port 0``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from server.auth import Authenticator, ScramAuthenticator, TrustAuthenticator
from server.config import Config, add_arguments, from_namespace
from server.server import Server
from server.status_http import StatusServer
from sql.session.database import Database
from storage.errors import DbError
from storage.integrity import check_data_dir

log = logging.getLogger("server")

PASSWORD_VARIABLE = "NYALA_PASSWORD"

GIL_SWITCH_INTERVAL_S = 0.0005
"""How long a thread may keep the GIL while another asks for it (Python's default is 5 ms).
Every statement hops between the event loop and a session thread, and each hop, like every
socket read or write, gives the GIL up and asks for it back; with eight busy sessions each
ask waited out another thread's whole interval, so a transaction holding a hot row lock
spent most of its time queued for the GIL while the row's waiters queued behind it (a
convoy: eight clients did less than one)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``nyala`` console script."""
    parser = argparse.ArgumentParser(prog="nyala", description="nyala SQL database server")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = commands.add_parser("serve", help="run the server", description="Run the server.")
    check = commands.add_parser(
        "check",
        help="verify a data directory's checksums offline",
        description="Verify every checksum and structural invariant of a stopped server's "
        "data directory, read-only, and print a report; exit 1 if anything is damaged.",
    )
    check.add_argument("--data-dir", type=Path, required=True, help="the data directory")
    try:
        add_arguments(serve)
        namespace = parser.parse_args(argv)
        if namespace.command == "check":
            return _check(namespace.data_dir)
        config = from_namespace(namespace)
    except ValueError as exc:
        parser.error(str(exc))
    logging.basicConfig(
        level=config.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    return asyncio.run(_serve(config))


def _check(data_dir: Path) -> int:
    if not data_dir.is_dir():
        sys.stderr.write(f"nyala check: {data_dir} is not a directory\n")
        return 2
    report = check_data_dir(data_dir)
    sys.stdout.write("\n".join(report.lines()) + "\n")
    return 0 if report.is_clean else 1


async def _serve(config: Config) -> int:
    loop = asyncio.get_running_loop()
    try:
        database = await loop.run_in_executor(
            None,
            lambda: Database.open(
                data_dir=config.data_dir, name=config.database, options=config.storage_options()
            ),
        )
    except DbError as exc:
        log.critical(
            "could not open the database in %s: %s (SQLSTATE %s); `nyala check --data-dir %s` "
            'lists every damaged file and the README ("Reliability") says how to recover',
            config.data_dir,
            exc.message,
            exc.sqlstate,
            config.data_dir,
        )
        return 1
    database.limit_query_memory(config.query_memory_limit_mb)
    database.buffered_rows_limit = config.buffered_rows_limit
    database.server_parameters.update(
        max_connections=str(config.max_connections),
        superuser_reserved_connections=str(config.superuser_reserved_connections),
    )
    server = Server(database, config, _authenticator(config, database))
    try:
        host, port = await server.start()
    except OSError as exc:
        log.error("cannot listen on %s:%d: %s", config.host, config.port, exc)
        database.close()
        return 1
    status: StatusServer | None = None
    if config.http_port >= 0:
        status = StatusServer(database, config.http_host, config.http_port)
        try:
            http_host, http_port = await status.start()
        except OSError as exc:
            log.error("cannot listen on %s:%d: %s", config.http_host, config.http_port, exc)
            await server.shutdown()
            database.close()
            return 1
        log.info("status page on http://%s:%d/ (metrics at /metrics)", http_host, http_port)
    try:
        stop = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        log.info(
            "listening on %s:%d (database %r, data directory %s)",
            host,
            port,
            config.database,
            config.data_dir,
        )
        await server.serve_until(stop)
    finally:
        if status is not None:
            await status.close()
        database.close()
    log.info("stopped")
    return 0


def _authenticator(config: Config, database: Database) -> Authenticator:
    """Create the first superuser on a new data directory; pick the --auth method."""
    roles = database.roles
    assert roles is not None, "an opened database has a role store"
    password = os.environ.get(PASSWORD_VARIABLE) or None
    if roles.bootstrap(config.superuser, password):
        log.info(
            "created superuser %r %s",
            config.superuser,
            "with the password from " + PASSWORD_VARIABLE if password else "without a password",
        )
    if config.auth == "password":
        if not any(r.password for r in roles.all()):
            log.warning(
                "--auth password: no role has a password; set %s on the first start or"
                " ALTER ROLE ... PASSWORD under --auth trust",
                PASSWORD_VARIABLE,
            )
        return ScramAuthenticator(roles)
    return TrustAuthenticator()


if __name__ == "__main__":
    sys.exit(main())
