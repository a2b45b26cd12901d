from __future__ import annotations

import pyarrow as pa
import pytest

from sql.dml.conflict import DO_UPDATE, EXISTS, ConflictAction, split
from storage import data_type as t
from storage import errors
from tests.unit.sql.conftest import make_table


def _rows(keys, exists, do_update=None):
    data = {"a": pa.array(keys, pa.int32()), "b": pa.array([f"v{k}" for k in keys])}
    data[EXISTS] = pa.array(exists)
    if do_update is not None:
        data["__nyala_new_0"] = pa.array(keys, pa.int32())
        data["__nyala_new_1"] = pa.array(["new"] * len(keys))
        data[DO_UPDATE] = pa.array(do_update)
    return pa.table(data)


TABLE = make_table(1, "t", [("a", t.INT32), ("b", t.STRING)])


def test_do_nothing_inserts_new_keys_once_and_skips_live_ones():
    inserts, updates = split(
        TABLE, _rows([1, 2, 2, 3], [False, True, True, False]), ConflictAction(False)
    )
    assert inserts.column("a").to_pylist() == [1, 3] and updates is None
    inserts, _ = split(TABLE, _rows([4, 4], [False, False]), ConflictAction(False))
    assert inserts.column("a").to_pylist() == [4]


def test_do_update_updates_live_rows_where_the_condition_holds():
    rows = _rows([1, 2, 3], [False, True, True], [True, True, False])
    inserts, updates = split(TABLE, rows, ConflictAction(True))
    assert inserts.column("a").to_pylist() == [1]
    assert updates.to_pylist() == [{"a": 2, "b": "new"}]


def test_do_update_of_one_key_twice_is_21000():
    with pytest.raises(errors.CardinalityViolation):
        split(TABLE, _rows([1, 1], [False, False], [True, True]), ConflictAction(True))
