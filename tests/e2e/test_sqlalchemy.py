"""SQLAlchemy 2 (psycopg dialect) and pandas on nyala, side by side with PostgreSQL 15.

The dialect's first-connect initialisation, reflection through the emulated
pg_catalog (get_table_names, get_columns, get_pk_constraint, get_indexes), a
Core insert/select round trip and pandas read_sql/to_sql must give the same
answers on both servers.
"""

from __future__ import annotations

import decimal

import pandas as pd
import pytest
import sqlalchemy as sa

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _url(server) -> str:
    host, port = server.dsn.split("host=")[1].split()[0], server.dsn.split("port=")[1].split()[0]
    return f"postgresql+psycopg://nyala@{host}:{port}/nyala"


def _engine(server) -> sa.Engine:
    return sa.create_engine(_url(server))


def _reflection_and_round_trip(engine: sa.Engine) -> dict[str, object]:
    seen: dict[str, object] = {}
    meta = sa.MetaData()
    items = sa.Table(
        "sa_items",
        meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("name", sa.String(30), nullable=False),
        sa.Column("amount", sa.Numeric(10, 2)),
        sa.Column("note", sa.Text),
    )
    with engine.begin() as conn:
        conn.execute(sa.text("drop table if exists sa_items"))
        conn.execute(sa.text("drop table if exists sa_frame"))
        meta.create_all(conn)
        conn.execute(
            items.insert(),
            [
                {"id": 1, "name": "one", "amount": decimal.Decimal("1.50"), "note": None},
                {"id": 2, "name": "two", "amount": decimal.Decimal("20.25"), "note": "n"},
            ],
        )
        conn.execute(
            sa.text("create table sa_frame (k bigint primary key, label text, x double precision)")
        )
    with engine.connect() as conn:
        rows = conn.execute(sa.select(items).where(items.c.amount > 1).order_by(items.c.id)).all()
        seen["rows"] = [tuple(r) for r in rows]
        seen["filtered"] = (
            conn.execute(sa.select(items.c.name).where(items.c.name.in_(["two", "three"])))
            .scalars()
            .all()
        )
    inspector = sa.inspect(engine)
    seen["tables"] = sorted(t for t in inspector.get_table_names() if t.startswith("sa_"))
    seen["has_table"] = (inspector.has_table("sa_items"), inspector.has_table("sa_nope"))
    seen["columns"] = [
        (c["name"], str(c["type"]), c["nullable"], c["default"], c.get("comment"))
        for c in inspector.get_columns("sa_items")
    ]
    pk = inspector.get_pk_constraint("sa_items")
    seen["pk"] = (pk["constrained_columns"], pk["name"])
    seen["indexes"] = inspector.get_indexes("sa_items")
    seen["schemas"] = "public" in inspector.get_schema_names()
    frame = pd.DataFrame({"k": [1, 2, 3], "label": ["a", None, "c"], "x": [0.5, 1.25, None]})
    frame.to_sql("sa_frame", engine, if_exists="append", index=False)
    back = pd.read_sql("select k, label, x from sa_frame order by k", engine)
    seen["frame"] = back.astype(object).where(back.notna(), None).values.tolist()
    seen["frame_dtypes"] = [str(d) for d in back.dtypes]
    return seen


def test_sqlalchemy_and_pandas_match_postgresql(nyala_server, postgres_server):
    ours = _reflection_and_round_trip(_engine(nyala_server))
    theirs = _reflection_and_round_trip(_engine(postgres_server))
    assert ours == theirs
    assert ours["rows"] == [
        (1, "one", decimal.Decimal("1.50"), None),
        (2, "two", decimal.Decimal("20.25"), "n"),
    ]
    assert ours["tables"] == ["sa_frame", "sa_items"]
    assert ours["columns"][0][:3] == ("id", "INTEGER", False)
    assert ours["pk"] == (["id"], "sa_items_pkey")
    assert ours["frame"] == [[1, "a", 0.5], [2, None, 1.25], [3, "c", None]]


def test_default_engine_initialisation(nyala_server, postgres_server):
    """The dialect's default start-up probes hstore inside a SAVEPOINT."""
    for server in (nyala_server, postgres_server):
        engine = sa.create_engine(_url(server))
        with engine.connect() as conn:
            assert conn.execute(sa.text("select 1")).scalar() == 1
        assert engine.dialect.server_version_info[0] == 15
