"""uuid, json and jsonb columns through real clients, side by side with PostgreSQL 15.

psycopg must get ``uuid.UUID`` and parsed documents without any configuration, in
text and binary; COPY must round-trip all three in every format; SQLAlchemy must
reflect the types and run an ORM model keyed by a UUID with a JSONB column.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa
from psycopg.types.json import Json, Jsonb
from sqlalchemy import orm
from sqlalchemy.dialects import postgresql as pg

pytestmark = pytest.mark.e2e

KEY = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
DOCUMENTS = [
    '{"b": 1, "a": 1.0, "a": 1e3, "c": {"x": [1, "é", null]}}',
    "[1, 2.50, -0, 1E-2, true, false, null]",
    '"tab\\there \\u00e9"',
    '{"": 0, "aa": {"z": [], "y": {}}, "a": 12345678901234567890.5}',
]


def _answers(dsn: str) -> dict[str, object]:
    seen: dict[str, object] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("drop table if exists ju")
        conn.execute("create table ju (id uuid primary key, doc jsonb, raw json, n int)")
        for n, text in enumerate(DOCUMENTS):
            conn.execute(
                "insert into ju values (%s, %s::jsonb, %s::json, %s)",
                (uuid.UUID(int=n + 1), text, text, n),
            )
        conn.execute(
            "insert into ju values (%s, %s, %s, 9)", (KEY, Jsonb({"k": [1, 2]}), Json({"j": 1}))
        )
        for binary in (False, True):
            cur = conn.execute("select id, doc, raw from ju order by id", binary=binary)
            seen[f"rows_{binary}"] = cur.fetchall()
            seen[f"types_{binary}"] = [d.type_code for d in cur.description]
            seen[f"key_{binary}"] = conn.execute(
                "select n, doc -> 'k' from ju where id = %s", (KEY,), binary=binary
            ).fetchall()
        seen["text"] = conn.execute(
            "select id::text, doc::text, raw::text from ju order by n"
        ).fetchall()
        copied = []
        with conn.cursor().copy("copy ju to stdout") as copy:
            copied = [bytes(row) for row in copy]
        seen["copy_text"] = copied
        with conn.cursor().copy("copy ju to stdout (format csv)") as copy:
            seen["copy_csv"] = [bytes(row) for row in copy]
        with conn.cursor().copy("copy ju to stdout (format binary)") as copy:
            copy.set_types(["uuid", "jsonb", "json", "int4"])
            seen["copy_binary"] = list(copy.rows())
        conn.execute("create table ju2 (id uuid primary key, doc jsonb, raw json, n int)")
        with conn.cursor().copy("copy ju2 from stdin") as copy:
            for row in copied:
                copy.write(row)
        with conn.cursor().copy("copy ju2 (id, doc, raw, n) from stdin (format binary)") as copy:
            copy.set_types(["uuid", "jsonb", "json", "int4"])
            copy.write_row((uuid.UUID(int=99), Jsonb({"b": 1, "a": 2}), Json([3]), 99))
        with conn.cursor().copy("copy ju2 (id, doc, raw, n) from stdin (format csv)") as copy:
            copy.write(b'00000000-0000-0000-0000-0000000000AA,"{""z"": 1, ""z"": 2}","[ 1 ]",98\n')
        seen["copy_back"] = conn.execute(
            "select id::text, doc::text, raw::text, n from ju2 order by id"
        ).fetchall()
        conn.execute("drop table ju2")
        conn.execute("drop table ju")
    return seen


def test_psycopg_types_and_copy_match_postgresql(nyala_server, postgres_server):
    ours = _answers(nyala_server.dsn)
    theirs = _answers(postgres_server.dsn)
    assert ours == theirs
    assert ours["types_False"] == ours["types_True"] == [2950, 3802, 114]
    assert ours["key_True"] == [(9, [1, 2])]
    row = ours["rows_True"][-1]
    assert isinstance(row[0], uuid.UUID) and row[1] == {"k": [1, 2]}


@pytest.mark.parametrize(
    ("sql", "sqlstate"),
    [
        ("select 'nope'::uuid", "22P02"),
        ("select '{bad'::jsonb", "22P02"),
        ("select '[1,'::json", "22P02"),
        ("select 'NaN'::jsonb", "22P02"),
        ("select '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", "22P02"),
        ("select jsonb_array_length('{}')", "22023"),
        ("select '{\"a\":1}'::json = '{\"a\":1}'::json", "42883"),
    ],
)
def test_invalid_input_is_refused_as_postgresql_does(nyala_server, postgres_server, sql, sqlstate):
    for server in (nyala_server, postgres_server):
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            with pytest.raises(psycopg.Error) as raised:
                conn.execute(sql)
            assert raised.value.sqlstate == sqlstate, server
            assert conn.execute("select 1").fetchone() == (1,)


class _Base(orm.DeclarativeBase):
    pass


class _Item(_Base):
    __tablename__ = "orm_items"
    id: orm.Mapped[uuid.UUID] = orm.mapped_column(pg.UUID(as_uuid=True), primary_key=True)
    doc: orm.Mapped[dict] = orm.mapped_column(pg.JSONB)
    raw: orm.Mapped[dict | None] = orm.mapped_column(pg.JSON, nullable=True)


def _url(server) -> str:
    host, port = server.dsn.split("host=")[1].split()[0], server.dsn.split("port=")[1].split()[0]
    return f"postgresql+psycopg://nyala@{host}:{port}/nyala"


def _orm_answers(server) -> dict[str, object]:
    engine = sa.create_engine(_url(server))
    seen: dict[str, object] = {}
    with engine.begin() as conn:
        conn.execute(sa.text("drop table if exists orm_items"))
    _Base.metadata.create_all(engine)
    with orm.Session(engine) as session:
        session.add_all(
            [
                _Item(id=KEY, doc={"tags": ["a", "b"], "n": 1}, raw={"x": 1}),
                _Item(id=uuid.UUID(int=1), doc={"tags": [], "n": 2}, raw=None),
            ]
        )
        session.commit()
        item = session.get(_Item, KEY)
        assert item is not None
        seen["got"] = (item.id, item.doc, item.raw)
        item.doc = {**item.doc, "n": 10}
        session.commit()
        seen["tagged"] = session.scalars(
            sa.select(_Item.id).where(_Item.doc.contains({"tags": ["b"]}))
        ).all()
        seen["by_key"] = session.scalars(
            sa.select(_Item.doc["n"].as_integer()).order_by(_Item.id)
        ).all()
        seen["has_key"] = session.scalars(
            sa.select(_Item.id).where(_Item.doc.has_key("tags")).order_by(_Item.id)
        ).all()
    inspector = sa.inspect(engine)
    seen["columns"] = [
        (c["name"], type(c["type"]).__name__, c["nullable"])
        for c in inspector.get_columns("orm_items")
    ]
    with engine.begin() as conn:
        conn.execute(sa.text("drop table orm_items"))
    engine.dispose()
    return seen


def test_sqlalchemy_orm_and_reflection_match_postgresql(nyala_server, postgres_server):
    ours = _orm_answers(nyala_server)
    theirs = _orm_answers(postgres_server)
    assert ours == theirs
    assert ours["columns"] == [
        ("id", "UUID", False),
        ("doc", "JSONB", False),
        ("raw", "JSON", True),
    ]
    assert ours["by_key"] == [2, 10]
    assert ours["tagged"] == [KEY]


@pytest.mark.slow
def test_pgjdbc_get_object_matches_postgresql(tmp_path, nyala_server, postgres_server):
    jar = Path("/usr/share/java/postgresql.jar")
    javac = shutil.which("javac")
    if not jar.exists() or javac is None:
        pytest.skip("pgjdbc and javac (Java 17) are needed")
    source = Path(__file__).parent / "java" / "JdbcJsonUuid.java"
    subprocess.run([javac, "-cp", str(jar), "-d", str(tmp_path), str(source)], check=True)

    def run(server) -> list[str]:
        fields = dict(part.split("=", 1) for part in server.dsn.split())
        url = (
            f"jdbc:postgresql://{fields['host']}:{fields['port']}/{fields['dbname']}"
            f"?user={fields['user']}"
        )
        done = subprocess.run(
            ["java", "-cp", f"{jar}:{tmp_path}", "JdbcJsonUuid", url],
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, done.stderr + done.stdout
        return done.stdout.splitlines()

    ours, theirs = run(nyala_server), run(postgres_server)
    assert ours == theirs
    assert ours[-1].startswith("run 6: uuid=UUID(a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11)")


def test_psql_describe_matches_postgresql(nyala_server, postgres_server):
    setup = (
        "create table dj (id uuid primary key default gen_random_uuid(), doc jsonb not null,"
        " raw json, ref uuid); create index dj_ref on dj (ref)"
    )
    outputs = []
    for server in (nyala_server, postgres_server):
        server.psql(["-X", "-q", "-c", setup], check=True)
        try:
            outputs.append(server.psql(["-X", "-c", r"\d dj"]).stdout)
        finally:
            server.psql(["-X", "-q", "-c", "drop table dj"])
    assert outputs[0] == outputs[1]
    assert "| uuid  |" in outputs[0] and "| jsonb |" in outputs[0]
