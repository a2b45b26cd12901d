from __future__ import annotations

import pyarrow as pa

from server import answers
from server import messages as m
from sql.common.result import Result, ResultColumn
from storage.errors import UndefinedTable


def test_row_description_carries_source_table_type_size_and_format():
    description = answers.row_description(
        (ResultColumn("id", 23, -1, 16385, 1), ResultColumn("v", 1043, 9)), (1, 0)
    )
    first, second = description.fields
    assert (first.table_oid, first.column_attnum, first.type_size, first.format_code) == (
        16385,
        1,
        4,
        1,
    )
    assert (second.type_oid, second.type_size, second.type_modifier, second.format_code) == (
        1043,
        -1,
        9,
        0,
    )


def test_no_rows_answer_runs_the_statement_and_completes_it():
    pulled = []

    def batches():
        pulled.append(True)
        yield pa.record_batch({"x": [1]})

    data = answers.no_rows_answer(Result(batches=batches(), command_tag="INSERT 0 1"))
    assert pulled and b"INSERT 0 1" in data
    assert answers.no_rows_answer(Result(is_empty_query=True)) == b"I\x00\x00\x00\x04"


def test_notices_keep_their_severity():
    data = answers.notices(Result(notices=[UndefinedTable("skipping", severity="NOTICE")]))
    assert data.startswith(m.NoticeResponse.TYPE) and b"SNOTICE" in data
