"""A data directory written before delta files went per-column (tablet metadata format 2) opens.

``tests/support/data/format2-data-dir`` was written by nyala at commit
70ba906^ (the last with ``.arrow`` whole-row delta files) from this script::

    create table t (k bigint primary key, v bigint, s text);
    insert into t select g, g * 10, 's' || g from generate_series(1, 2000) g;
    checkpoint;
    update t set v = v + 1 where k % 7 = 0;
    delete from t where k % 11 = 0;
    checkpoint;
    alter table t add column w int default 5;
    insert into t select g, g * 10, 's' || g, 1 from generate_series(2001, 2500) g;
    update t set s = 'u' || k, w = 9 where k % 13 = 0;
    insert into t values (22, 220, 'back', 2);
    checkpoint;
    update t set v = -1 where k = 1000;
    checkpoint;

so it holds UNDO files, REDO files of updates, deletes and a re-insert, and
REDO files written before a column was added.  The answers below are what that
nyala returned.  Opening it converts the delta files; it must answer the same,
before and after a restart, with no format-2 file left.
"""

from __future__ import annotations

import json
import shutil

import psycopg

from tests.support.servers import REPO_ROOT

FIXTURE = REPO_ROOT / "tests" / "support" / "data" / "format2-data-dir"
TOTALS = (2320, 29441169, 10591, 10469, 2320, 1, 2500)
ROWS = [
    (22, 220, "back", 2),
    (26, 260, "u26", 9),
    (1000, -1, "s1000", 5),
    (2002, 20020, "u2002", 9),
    (2006, 20060, "s2006", 1),
]


def _answers(server) -> tuple[tuple, list[tuple]]:
    with psycopg.connect(server.dsn) as conn:
        totals = conn.execute(
            "select count(*), sum(v), sum(length(s)), sum(w), count(distinct s), min(k), max(k) "
            "from t"
        ).fetchone()
        rows = conn.execute(
            "select * from t where k in (22, 26, 77, 1000, 2002, 2006) order by k"
        ).fetchall()
    return tuple(totals), rows


def test_a_format2_data_dir_is_converted_on_open_and_answers_the_same(
    nyala_server_factory, tmp_path
):
    data_dir = tmp_path / "data"
    shutil.copytree(FIXTURE, data_dir)
    server = nyala_server_factory(data_dir, extra_args=("--maintenance-threads", "0"))
    assert "converted 5 delta files" in server.log
    assert _answers(server) == (TOTALS, ROWS)
    tablet_dir = data_dir / "tablets" / "1"
    assert not list(tablet_dir.rglob("*.arrow"))
    assert len(list(tablet_dir.rglob("*.delta"))) == 5
    assert json.loads((tablet_dir / "metadata.json").read_text())["format_version"] == 3
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("update t set v = v + 1 where k = 26")
        conn.execute("checkpoint")
    server.restart()
    totals, rows = _answers(server)
    assert totals == (TOTALS[0], TOTALS[1] + 1, *TOTALS[2:])
    assert rows[1] == (26, 261, "u26", 9)
