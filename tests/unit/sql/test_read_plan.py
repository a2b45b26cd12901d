"""A prepared read's ``ReadPlan`` gives exactly what the general path gives: the same
description, rows, batch schemas and errors, for values that take the plan's path and for
those that leave it (NULL, a value not of the column's type, out of range, a bpchar).
Each statement runs with its plan and then with plans turned off, on rows in the
MemRowSet, flushed to DiskRowSets, updated and deleted after the flush."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from sql.common.result import ShortRows, arrow_batch
from sql.execution import read_plan
from sql.session.database import Database
from storage.errors import DbError

SETUP = (
    "create table kv (k bigint primary key, v bigint, s text)",
    "insert into kv select i, i * 3, 's' || (i % 5) from generate_series(1, 60) as g(i)",
    "create table comp (a int, b text, c bigint, primary key (a, b))",
    "insert into comp select i % 7, 'b' || (i % 4), i from generate_series(1, 60) as g(i)"
    " on conflict do nothing",
    "create table looked (id bigint primary key, code int, name varchar(8), ch char(4),"
    " payload text)",
    "insert into looked select i, i % 9, 'n' || i, 'c' || (i % 3), 'p' || i"
    " from generate_series(1, 60) as g(i)",
    "create index looked_code on looked (code)",
    "create unique index looked_name on looked (name)",
    "create index looked_ch on looked (ch)",
    "create index looked_code_pay on looked (code, payload)",
    "checkpoint",
    "insert into kv select i, -i, null from generate_series(61, 80) as g(i)",
    "insert into looked select i, i % 9, 'n' || i, null, null from generate_series(61, 80) g(i)",
    "update kv set v = v + 1 where k % 4 = 0",
    "delete from kv where k % 10 = 3",
    "update looked set code = code + 1 where id % 5 = 0",
    "delete from looked where id % 11 = 2",
)

PLANNED = (
    ("select v from kv where k = $1", 1),
    ("select k, s, v, k from kv where k = $1", 1),
    ("select v from kv where k = $1 and s = $2", 2),
    ("select s from kv where k = $1 and k = $2", 2),
    ("select c from comp where b = $1 and a = $2", 2),
    ("select a, b, c from comp where a = $1 and b = $2 and c = $3", 3),
    ("select id, payload from looked where code = $1", 1),
    ("select payload from looked where code = $1 and payload = $2", 2),
    ("select id from looked where payload = $1 and code = $2", 2),
    ("select id, ch from looked where name = $1", 1),
    ("select id from looked where code = $1 and code = $2", 2),
    ("select id from looked where id = $1 and code = $2", 2),
)
UNPLANNED = (
    ("select id from looked where ch = $1", 1),  # a bpchar value's encoding is not exact
    ("select v from kv where k = $1 limit 1", 1),
    ("select v from kv where k > $1 and k < $2", 2),
    ("select id from looked where code = $1 and payload > $2", 2),
)
_VALUES: tuple[Any, ...] = (
    0, 1, 2, 3, 5, 8, 13, 40, 63, 70, 79, 99, -1, 2**31, 2**40, 2**70, True, 1.5, None,
    "s1", "s3", "b2", "b0", "n4", "n66", "p12", "c1", "c1  ", "x\x00", "", "7",
)  # fmt: skip


@pytest.fixture
def session(tmp_path: Any) -> Iterator[Any]:
    db = Database.open(tmp_path, fsync=False)
    s = db.session("nyala", "nyala", {})
    for sql in SETUP:
        for _ in s.execute(sql):
            pass
    yield s
    s.close()
    db.close()


def _outcome(session: Any, stmt: Any, params: list[Any]) -> tuple[Any, ...]:
    try:
        result = session.execute_prepared(stmt, params)
        batches = list(result.batches)
    except DbError as error:
        for _ in session.execute("rollback"):
            pass
        return ("error", type(error).sqlstate)
    columns = [(c.name, c.type_oid, c.typmod, c.table_oid, c.attnum) for c in result.columns]
    for item in batches:
        if isinstance(item, ShortRows):  # the values the server frames are the batch's
            values = item.values()
            batch = item.batch()
            by_column = [c.to_pylist() for c in batch.columns]
            expected = list(zip(*by_column, strict=True)) if by_column else [()] * batch.num_rows
            assert values is None or values == expected
    batches = [arrow_batch(b) for b in batches]
    rows = sorted((tuple(r.values()) for b in batches for r in b.to_pylist()), key=repr)
    schemas = {str(b.schema) for b in batches if b.num_rows}
    return ("rows", columns, rows, schemas)


def _compare(
    session: Any, statements: tuple[tuple[str, int], ...], planned: bool
) -> tuple[int, int]:
    """How many executions took a plan's path, and how many of those found rows."""
    rng = random.Random(11)
    taken = found = 0
    for sql, count in statements:
        stmt = session.prepare(sql, [])
        for _ in range(120):
            params = [rng.choice(_VALUES) for _ in range(count)]
            fast = _outcome(session, stmt, params)
            compiled = stmt.plan.query
            plan = read_plan.of(compiled)
            assert (plan is not None) == planned, sql
            if plan is not None and plan.values(params) is not None:
                taken += 1
                found += fast[0] == "rows" and bool(fast[2])
            compiled.read_plan = read_plan._UNPLANNED
            try:
                general = _outcome(session, stmt, params)
            finally:
                compiled.read_plan = None
            assert fast == general, (sql, params)
    return taken, found


def test_planned_reads_give_what_the_general_path_gives(session: Any) -> None:
    taken, found = _compare(session, PLANNED, planned=True)
    assert taken > 300 and found > 50


def test_reads_the_plan_does_not_cover_keep_the_general_path(session: Any) -> None:
    _compare(session, UNPLANNED, planned=False)


def test_a_plan_follows_ddl(session: Any) -> None:
    stmt = session.prepare("select id from looked where code = $1", [])
    before = _outcome(session, stmt, [4])
    for sql in ("drop index looked_code", "drop index looked_code_pay"):
        for _ in session.execute(sql):
            pass
    stmt = session.prepare("select id from looked where code = $1", [])
    assert _outcome(session, stmt, [4]) == before
    assert read_plan.of(stmt.plan.query) is None  # no index now: a scan, not a plan
