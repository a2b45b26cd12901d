"""Plans reused by statement text, and never across a catalog change or for time travel."""

from __future__ import annotations

import pytest

from sql.session.database import Database
from sql.session.plan_cache import PlanCache


def test_lru_and_catalog_version():
    cache: PlanCache[str] = PlanCache(entries=2)
    cache.put("a", (), 1, "plan a")
    cache.put("b", (23,), 1, "plan b")
    assert cache.get("a", (), 1) == "plan a"
    assert cache.get("b", (), 1) is None  # other declared parameter types
    cache.put("c", (), 1, "plan c")  # evicts b, the least recently used
    assert cache.get("b", (23,), 1) is None
    assert cache.get("a", (), 2) is None  # the catalog changed
    assert cache.get("a", (), 1) is None


@pytest.fixture
def session(tmp_path):
    db = Database.open(tmp_path, fsync=False)
    s = db.session("nyala", "nyala", {})
    yield s
    s.close()
    db.close()


def rows(session, sql):
    return [
        tuple(r.values())
        for res in session.execute(sql)
        for b in res.batches
        for r in b.to_pylist()
    ]


def test_repeated_text_reuses_the_plan_until_ddl(session):
    rows(session, "create table pc (id int primary key, v text)")
    rows(session, "insert into pc values (1, 'a')")
    assert rows(session, "select * from pc") == [(1, "a")]
    hits = session._plan_cache.hits
    assert rows(session, "select * from pc") == [(1, "a")]
    assert session._plan_cache.hits == hits + 1
    rows(session, "drop table pc")
    rows(session, "create table pc (id int primary key, w int, v text)")
    rows(session, "insert into pc values (2, 7, 'b')")
    assert rows(session, "select * from pc") == [(2, 7, "b")]


def test_a_prepared_statement_whose_result_shape_changed_is_0a000(session):
    from storage.errors import FeatureNotSupported

    rows(session, "create table ps (id int primary key, v text)")
    rows(session, "insert into ps values (1, 'x')")
    stmt = session.prepare("select * from ps", [])
    rows(session, "alter table ps rename column v to w")
    result = session.execute_prepared(stmt, [])
    assert [tuple(r.values()) for b in result.batches for r in b.to_pylist()] == [(1, "x")]
    rows(session, "alter table ps add column n int")
    with pytest.raises(FeatureNotSupported, match="cached plan must not change result type"):
        session.execute_prepared(stmt, [])
