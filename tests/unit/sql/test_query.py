from __future__ import annotations

import pytest

from sql.frontend import parser
from sql.planner.compiled_query import compile_query
from sql.session.database import Database


@pytest.fixture
def session(tmp_path):
    db = Database.open(tmp_path, fsync=False)
    s = db.session("nyala", "nyala", {})
    for _ in s.execute("create table t (id int primary key, v varchar(3))"):
        pass
    yield s
    s.close()
    db.close()


def test_describe_does_not_run_and_run_streams_wire_ready_batches(session):
    runner = session._runner
    bound = runner.bind(parser.parse("select id, v, id::bigint * 2 from t")[0].ast)
    compiled = compile_query(bound, session._facts)
    described = runner.describe(compiled)
    assert [(c.name, c.type_oid) for c in described] == [("id", 23), ("v", 1043), ("?column?", 20)]
    txn = session._db.engine.begin()
    txn.insert(session._db.catalog.get_table("t").tablet_ids[0], _row(session, 1, "x"))
    columns, batches = runner.run(compiled, txn, [], None)
    assert columns == described
    assert [r for b in batches for r in b.to_pylist()] == [{"id": 1, "v": "x", "?column?": 2}]
    txn.rollback()


def _row(session, ident, value):
    import pyarrow as pa

    table = session._db.catalog.get_table("t")
    arrays = {
        str(c.id): pa.array([ident if c.name == "id" else value], c.type.arrow_type)
        for c in table.schema.columns
    }
    return pa.RecordBatch.from_pydict(arrays)
