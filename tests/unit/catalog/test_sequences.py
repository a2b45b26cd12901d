from __future__ import annotations

import json

import pytest

from catalog.catalog import HIDDEN_KEY, Catalog, SerialSpec
from catalog.sequences import CACHE, HIDDEN_CACHE, SequenceCounters, SequenceInfo
from catalog.store import CatalogStore
from storage import data_type as t
from storage.errors import NumericValueOutOfRange, SequenceGeneratorLimitExceeded, UndefinedTable
from tests.unit.catalog.test_catalog import EngineDouble

SMALL = SequenceInfo.for_type("s_id_seq", 0, "smallint")


def test_values_are_consecutive_and_the_limit_is_written_before_they_are_given(tmp_path):
    counters = SequenceCounters(tmp_path, fsync=False)
    assert counters.take("1.0", SMALL, 3).tolist() == [1, 2, 3]
    limit = json.loads((tmp_path / "sequences.json").read_text())["limits"]["1.0"]
    assert limit > 3
    assert counters.take("1.0", SMALL, 2).tolist() == [4, 5]


def test_after_a_restart_no_value_is_given_twice(tmp_path):
    first = SequenceCounters(tmp_path, fsync=False)
    given = first.take("k", SMALL, 10).tolist()
    again = SequenceCounters(tmp_path, fsync=False).take("k", SMALL, 1).tolist()
    assert again[0] > given[-1]
    assert again[0] <= given[-1] + CACHE + 1


def test_a_hidden_key_writes_its_limit_once_per_hidden_cache_values(tmp_path, monkeypatch):
    counters = SequenceCounters(tmp_path, fsync=False)
    hidden = SequenceInfo.for_type("h", 0, "bigint", hidden=True)
    saves: list[int] = []
    save = SequenceCounters._save
    monkeypatch.setattr(SequenceCounters, "_save", lambda self, b: (saves.append(1), save(self, b)))
    given = [counters.take("h", hidden, 1)[0] for _ in range(HIDDEN_CACHE)]
    assert given == list(range(1, HIDDEN_CACHE + 1))
    assert len(saves) == 1
    counters.take("h", hidden, 2)
    assert len(saves) == 2
    again = SequenceCounters(tmp_path, fsync=False).take("h", hidden, 1)[0]
    assert given[-1] + 2 < again <= given[-1] + 2 + HIDDEN_CACHE + 1


def test_a_block_larger_than_the_cache_is_reserved_whole(tmp_path):
    counters = SequenceCounters(tmp_path, fsync=False)
    values = counters.take("k", SequenceInfo.for_type("b", 0, "bigint"), 10_000)
    assert values[0] == 1 and values[-1] == 10_000
    restarted = SequenceCounters(tmp_path, fsync=False)
    assert restarted.take("k", SequenceInfo.for_type("b", 0, "bigint"), 1)[0] > 10_000


def test_the_maximum_is_2200H_and_setval_checks_bounds(tmp_path):
    counters = SequenceCounters(None)
    counters.set("k", SMALL, 32766, True)
    assert counters.take("k", SMALL, 1).tolist() == [32767]
    with pytest.raises(SequenceGeneratorLimitExceeded, match="reached maximum value"):
        counters.take("k", SMALL, 1)
    with pytest.raises(NumericValueOutOfRange, match=r"out of bounds .*\(1\.\.32767\)"):
        counters.set("k", SMALL, 0, True)
    counters.set("k", SMALL, 5, False)
    assert counters.take("k", SMALL, 1).tolist() == [5]


def test_restart_and_drop_start_over(tmp_path):
    counters = SequenceCounters(tmp_path, fsync=False)
    counters.take("k", SMALL, 5)
    counters.restart(["k"])
    assert counters.take("k", SMALL, 1).tolist() == [1]
    counters.drop(["k"])
    assert "k" not in json.loads((tmp_path / "sequences.json").read_text())["limits"]


def test_catalog_names_sequences_as_postgresql_and_hides_the_key_sequence(tmp_path):
    catalog = Catalog(
        EngineDouble(), CatalogStore(tmp_path, fsync=False), SequenceCounters(tmp_path)
    )
    serial = catalog.create_table(
        "t", [("id", t.INT32, False, None), ("v", t.STRING, True, None)], ["id"],
        serials=[SerialSpec("id", "integer")],
    )  # fmt: skip
    assert [s.name for s in serial.sequences] == ["t_id_seq"]
    assert serial.schema.find("id").default_sql == "nextval('t_id_seq'::regclass)"
    clash = catalog.create_table(
        "t_id", [("seq", t.INT64, False, None)], ["seq"], serials=[SerialSpec("seq", "bigint")]
    )
    assert clash.sequences[0].name == "t_id_seq_seq"
    hidden = catalog.create_table("h", [("v", t.STRING, True, None)], [])
    assert [c.name for c in hidden.columns] == ["v"]
    assert [c.name for c in hidden.schema.key_columns] == [HIDDEN_KEY]
    assert hidden.sequences[0].hidden and hidden.attnum(hidden.schema.key_columns[0].id) == 0
    assert catalog.nextval("t_id_seq", 2).tolist() == [1, 2]
    catalog.drop_table("t")
    with pytest.raises(UndefinedTable):
        catalog.nextval("t_id_seq")
    reopened = Catalog(
        EngineDouble(), CatalogStore(tmp_path, fsync=False), SequenceCounters(tmp_path)
    )
    assert reopened.get_table("h").sequences == hidden.sequences
