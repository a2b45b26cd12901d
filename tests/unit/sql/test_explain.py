from __future__ import annotations

import pytest

from sql.session.database import Database
from storage import errors


@pytest.fixture
def session(tmp_path):
    db = Database.open(tmp_path, fsync=False)
    s = db.session("nyala", "nyala", {})
    for sql in (
        "create table t (k int, j int, v text, primary key (k, j)) partition by hash (k) partitions 3",
        "insert into t select g, g, 'x' from generate_series(1, 30) g",
    ):
        for result in s.execute(sql):
            list(result.batches)
    yield s
    s.close()
    db.close()


def plan(session, sql):
    (result,) = list(session.execute(sql))
    assert result.command_tag == "EXPLAIN" and result.columns[0].name == "QUERY PLAN"
    return [row["QUERY PLAN"] for b in result.batches for row in b.to_pylist()]


def test_explain_names_tablets_pushdown_and_key_bounds(session):
    lines = plan(session, "explain select v from t where k = 4 and j > 1")
    assert lines[0] == "Direct read: the scan answers the query, no DuckDB"
    assert lines[1].endswith(": 1 of 3 tablets")
    assert lines[2:] == [
        "     Pushed predicates: k = 4 AND j > 1",
        "     Columns: k, j, v",
        "     Primary-key bounds on: k, j",
    ]


def test_explain_analyze_runs_and_counts_rows_per_tablet(session):
    lines = plan(session, "explain (analyze, costs off) select count(*) from t")
    read = [line for line in lines if line.startswith("Tablet ")]
    assert len(read) == 3 and sum(int(line.split(": ")[1].split()[0]) for line in read) == 30
    assert "Rows: 1" in lines and lines[-1].startswith("Execution Time: ")


def test_explain_analyze_of_a_write_applies_it(session):
    lines = plan(session, "explain analyze delete from t where k = 5")
    assert lines[0] == "DELETE on t, applied by primary key" and "Rows: 1" in lines
    (result,) = list(session.execute("select count(*) from t"))
    assert [list(r.values()) for b in result.batches for r in b.to_pylist()] == [[29]]


def test_bad_explain_options_are_syntax_errors(session):
    with pytest.raises(errors.SqlSyntaxError):
        plan(session, "explain (nonsense) select 1")
    with pytest.raises(errors.SqlSyntaxError):
        plan(session, "explain")
