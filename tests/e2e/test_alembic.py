"""An Alembic migration that fails halfway leaves the schema exactly as it was.

Alembic runs a PostgreSQL upgrade in one transaction (``transactional_ddl``),
so a migration that creates a table, adds a column and renames one before a
statement fails must leave no trace of any of it, on nyala as on PostgreSQL 15;
the next, fixed run of the same migration then applies cleanly.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from tests.support.servers import make_dsn

pytestmark = pytest.mark.e2e

ENV = """
from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None)
with context.begin_transaction():
    context.run_migrations()
"""

FIRST = """
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def upgrade():
    op.create_table(
        "account",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
    )
    op.execute("insert into account values (1, 'ada'), (2, 'grace')")


def downgrade():
    op.drop_table("account")
"""

SECOND = """
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade():
    op.create_table(
        "invoice",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("account_id", sa.Integer, nullable=False),
        sa.Column("total", sa.Numeric(10, 2), server_default="0"),
    )
    op.add_column("account", sa.Column("email", sa.Text))
    op.alter_column("account", "name", new_column_name="full_name")
    op.execute("insert into invoice (id, account_id) values (1, 1)")
    op.execute("update account set email = full_name || '@example.com'")
    op.execute({failing!r})


def downgrade():
    op.drop_table("invoice")
"""


@pytest.fixture(params=["nyala", "postgres"])
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "nyala":
        server = request.getfixturevalue("fresh_nyala_server")
        yield f"postgresql+psycopg://nyala@{server.host}:{server.port}/nyala"
        return
    server = request.getfixturevalue("postgres_server")
    name = f"alembic_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server.dsn, autocommit=True) as admin:
        admin.execute(f"create database {name}")
    try:
        dsn = make_dsn(server.host, server.port, dbname=name)
        info = psycopg.conninfo.conninfo_to_dict(dsn)
        yield f"postgresql+psycopg://{info['user']}@{server.host}:{server.port}/{name}"
    finally:
        with psycopg.connect(server.dsn, autocommit=True) as admin:
            admin.execute(f"drop database {name} with (force)")


def _scripts(root: Path, failing: str) -> Path:
    (root / "versions").mkdir(parents=True, exist_ok=True)
    (root / "env.py").write_text(ENV)
    (root / "script.py.mako").write_text("")
    (root / "versions" / "0001_account.py").write_text(FIRST)
    (root / "versions" / "0002_invoice.py").write_text(SECOND.replace("{failing!r}", repr(failing)))
    return root


def _upgrade(engine: sa.Engine, root: Path, target: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(root))
    with engine.connect() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, target)
        connection.commit()


def _schema(engine: sa.Engine) -> dict[str, object]:
    inspector = sa.inspect(engine)
    with engine.connect() as connection:
        return {
            "tables": sorted(inspector.get_table_names()),
            "columns": {
                t: [(c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(t)]
                for t in sorted(inspector.get_table_names())
            },
            "version": connection.execute(sa.text("select version_num from alembic_version")).all(),
            "accounts": connection.execute(sa.text("select * from account order by id")).all(),
        }


def test_a_failed_migration_leaves_the_schema_as_before(url, tmp_path):
    engine = sa.create_engine(url)
    try:
        root = _scripts(tmp_path / "migrations", "insert into account values (1, 'dup', null)")
        _upgrade(engine, root, "0001")
        before = _schema(engine)
        assert before["tables"] == ["account", "alembic_version"]

        with pytest.raises(sa.exc.IntegrityError) as info:
            _upgrade(engine, root, "head")
        assert info.value.orig.sqlstate == "23505"
        assert _schema(engine) == before

        fixed = _scripts(tmp_path / "fixed", "insert into invoice (id, account_id) values (2, 2)")
        _upgrade(engine, fixed, "head")
        after = _schema(engine)
        assert after["tables"] == ["account", "alembic_version", "invoice"]
        assert after["version"] == [("0002",)]
        assert after["accounts"] == [
            (1, "ada", "ada@example.com"),
            (2, "grace", "grace@example.com"),
        ]
    finally:
        engine.dispose()
