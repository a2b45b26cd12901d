"""An Alembic migration history with foreign keys, indexes and unique constraints upgrades
and downgrades against nyala as against PostgreSQL 15: each step leaves the same schema as
SQLAlchemy reflects it (foreign keys, indexes, unique constraints), and the keys are enforced
in between."""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config

pytestmark = pytest.mark.e2e

ENV = """
from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None)
with context.begin_transaction():
    context.run_migrations()
"""

REVISIONS = {
    "0001_author.py": """
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def upgrade():
    op.create_table(
        "author",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("email", sa.Text, nullable=False),
        sa.UniqueConstraint("email", name="author_email_key"),
    )


def downgrade():
    op.drop_table("author")
""",
    "0002_book.py": """
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade():
    op.create_table(
        "book",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("author_id", sa.Integer, sa.ForeignKey("author.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("title", sa.Text),
    )
    op.create_index("book_author", "book", ["author_id"])


def downgrade():
    op.drop_index("book_author", table_name="book")
    op.drop_table("book")
""",
    "0003_review.py": """
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade():
    op.create_table(
        "review",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("book_id", sa.Integer),
        sa.Column("reviewer", sa.Text),
    )
    op.create_foreign_key("review_book", "review", "book", ["book_id"], ["id"],
                          ondelete="SET NULL")
    op.create_foreign_key("review_reviewer", "review", "author", ["reviewer"], ["email"],
                          onupdate="CASCADE")
    op.create_unique_constraint("review_once", "review", ["book_id", "reviewer"])


def downgrade():
    op.drop_constraint("review_once", "review", type_="unique")
    op.drop_constraint("review_reviewer", "review", type_="foreignkey")
    op.drop_constraint("review_book", "review", type_="foreignkey")
    op.drop_table("review")
""",
}


def _scripts(root: Path) -> Path:
    (root / "versions").mkdir(parents=True, exist_ok=True)
    (root / "env.py").write_text(ENV)
    (root / "script.py.mako").write_text("")
    for name, text in REVISIONS.items():
        (root / "versions" / name).write_text(text)
    return root


def _run(engine: sa.Engine, root: Path, step: str, target: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(root))
    with engine.connect() as connection:
        config.attributes["connection"] = connection
        getattr(command, step)(config, target)
        connection.commit()


def _schema(engine: sa.Engine) -> dict[str, object]:
    inspector = sa.inspect(engine)
    tables = sorted(t for t in inspector.get_table_names() if t != "alembic_version")
    return {
        t: {
            "foreign_keys": sorted(inspector.get_foreign_keys(t), key=lambda k: str(k["name"])),
            "indexes": sorted(inspector.get_indexes(t), key=lambda i: str(i["name"])),
            "unique": sorted(inspector.get_unique_constraints(t), key=lambda u: str(u["name"])),
        }
        for t in tables
    }


EXPECTED_TABLES = {
    "0001": ["author"],
    "0002": ["author", "book"],
    "0003": ["author", "book", "review"],
}


def _history(url: str, root: Path) -> list[dict[str, object]]:
    engine = sa.create_engine(url)
    seen = []
    try:
        for target in ("0001", "0002", "0003"):
            _run(engine, root, "upgrade", target)
            seen.append(_schema(engine))
            assert sorted(seen[-1]) == EXPECTED_TABLES[target]
        with engine.begin() as conn:
            conn.execute(sa.text("insert into author values (1, 'a@x'), (2, 'b@x')"))
            conn.execute(sa.text("insert into book values (10, 1, 't'), (11, 2, 'u')"))
            conn.execute(sa.text("insert into review values (100, 10, 'b@x')"))
        with pytest.raises(sa.exc.IntegrityError) as info, engine.begin() as conn:
            conn.execute(sa.text("insert into review values (101, 99, 'a@x')"))
        assert info.value.orig.sqlstate == "23503"
        with engine.begin() as conn:
            conn.execute(sa.text("update author set email = 'bb@x' where id = 2"))
            conn.execute(sa.text("delete from author where id = 1"))
            rows = conn.execute(sa.text("select id, book_id, reviewer from review")).all()
            seen.append({"after cascades": [tuple(r) for r in rows]})
        for target in ("0002", "0001", "base"):
            _run(engine, root, "downgrade", target)
            seen.append(_schema(engine))
    finally:
        engine.dispose()
    return seen


def test_migration_history_with_foreign_keys_matches_postgres(
    fresh_nyala_server, postgres_server, tmp_path
):
    root = _scripts(tmp_path / "migrations")
    ours = _history(f"postgresql+psycopg://nyala@{fresh_nyala_server.host}:"
                    f"{fresh_nyala_server.port}/nyala", root)  # fmt: skip
    name = f"alembic_fk_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
        admin.execute(f"create database {name}")
    try:
        info = psycopg.conninfo.conninfo_to_dict(postgres_server.dsn)
        theirs = _history(
            f"postgresql+psycopg://{info['user']}@{postgres_server.host}:"
            f"{postgres_server.port}/{name}",
            root,
        )
    finally:
        with psycopg.connect(postgres_server.dsn, autocommit=True) as admin:
            admin.execute(f"drop database {name} with (force)")
    assert ours == theirs
    assert ours[3] == {"after cascades": [(100, None, "bb@x")]}
    assert ours[-1] == {}
