"""Views through psql and SQLAlchemy, side by side with PostgreSQL 15."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from tests.support.psql import without_layout
from tests.support.servers import NyalaServer, PostgresServer, run_on_each

pytestmark = pytest.mark.e2e

SETUP = (
    "drop view if exists shown_v cascade",
    "drop table if exists shown_t cascade",
    "create table shown_t (id int primary key, name varchar(20), code char(3), amount numeric(8,2))",
    "create view shown_v as select id, name, code, amount * 2 as doubled from shown_t",
)


@pytest.fixture(scope="module")
def servers(nyala_server: NyalaServer, postgres_server: PostgresServer) -> list[str]:
    run_on_each((nyala_server, postgres_server), SETUP)
    return [nyala_server.dsn, postgres_server.dsn]


@pytest.mark.parametrize("command", [r"\dv shown_*", r"\d shown_v", r"\d shown_*"])
def test_psql_describes_views_as_postgresql(servers, nyala_server, postgres_server, command):
    ours = nyala_server.psql(["-c", command], check=True).stdout
    theirs = postgres_server.psql(["-c", command], check=True).stdout
    assert without_layout(ours) == without_layout(theirs)
    assert "shown_v" in ours


def test_sqlalchemy_lists_views(servers):
    answers = []
    for dsn in servers:
        params = dict(part.split("=", 1) for part in dsn.split())
        url = sa.URL.create(
            "postgresql+psycopg", username=params["user"], host=params["host"],
            port=int(params["port"]), database=params["dbname"],
        )  # fmt: skip
        engine = sa.create_engine(url)
        try:
            inspector = sa.inspect(engine)
            columns = [(c["name"], str(c["type"])) for c in inspector.get_columns("shown_v")]
            answers.append(("shown_v" in inspector.get_view_names(), columns))
        finally:
            engine.dispose()
    assert answers[0] == answers[1]
    assert answers[0][0]
