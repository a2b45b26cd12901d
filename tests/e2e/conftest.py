"""Fixtures for end-to-end tests: nyala server processes, a reference PostgreSQL, psql.

- ``nyala_server``: one server per test module, shared by its tests (use
  distinct table names, or drop what you create).
- ``fresh_nyala_server``: a server of the test's own, on an empty data
  directory; it can be stopped, killed and started again.
- ``nyala_server_factory``: make more servers (e.g. on a given data
  directory); all are ended when the test ends.
- ``postgres_server``: a throwaway PostgreSQL 15 for the whole session, with
  the same DSN shape (user ``nyala``, database ``nyala``), to compare with.
- ``psql``: skips the test if the psql client is missing.

When a test fails, the log of every nyala server it used is added to the
report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.psql import psql_path
from tests.support.servers import NyalaServer, PostgresServer, missing_postgres_reason


class NyalaServerFactory:
    """Starts nyala servers on request and ends them all at teardown."""

    def __init__(self, make_data_dir: Callable[[], Path]) -> None:
        self._make_data_dir = make_data_dir
        self.servers: list[NyalaServer] = []

    def __call__(
        self, data_dir: Path | None = None, *, start: bool = True, **options: object
    ) -> NyalaServer:
        server = NyalaServer(data_dir or self._make_data_dir(), **options)  # type: ignore[arg-type]
        self.servers.append(server)
        return server.start() if start else server

    def close(self) -> None:
        for server in self.servers:
            server.close()


@pytest.fixture(scope="module")
def nyala_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NyalaServer]:
    with NyalaServer(tmp_path_factory.mktemp("nyala-data")) as server:
        yield server


@pytest.fixture
def fresh_nyala_server(tmp_path: Path) -> Iterator[NyalaServer]:
    with NyalaServer(tmp_path / "nyala-data") as server:
        yield server


@pytest.fixture
def nyala_server_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NyalaServerFactory]:
    factory = NyalaServerFactory(lambda: tmp_path_factory.mktemp("nyala-data"))
    yield factory
    factory.close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    reason = missing_postgres_reason()
    if reason is not None:
        pytest.skip(reason)
    with PostgresServer() as server:
        yield server


@pytest.fixture(scope="session")
def psql() -> str:
    path = psql_path()
    if path is None:
        pytest.skip("psql is not on PATH")
    return path


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if report.failed:
        for name, value in getattr(item, "funcargs", {}).items():
            servers = value.servers if isinstance(value, NyalaServerFactory) else [value]
            for server in servers:
                if isinstance(server, NyalaServer):
                    report.sections.append((f"nyala server log ({name})", server.log_tail()))
    return report
