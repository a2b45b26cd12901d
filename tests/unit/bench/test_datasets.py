from __future__ import annotations

from decimal import Decimal

import pyarrow as pa

from bench import datasets


def test_metrics_keys_are_distinct_and_deterministic():
    table = datasets.metrics(5_000)
    keys = datasets.metrics_keys(table)
    assert len(set(keys)) == 5_000
    assert datasets.metrics(5_000).equals(table)


def test_lineitem_has_the_tpch_ranges_and_a_unique_key():
    table = datasets.lineitem(10_000)
    assert table.num_rows == 10_000
    rows = table.to_pylist()
    assert len({(r["l_orderkey"], r["l_linenumber"]) for r in rows}) == 10_000
    assert {r["l_linenumber"] for r in rows} <= set(range(1, 8))
    assert all(Decimal("1") <= r["l_quantity"] <= Decimal("50") for r in rows)
    assert all(Decimal("0") <= r["l_discount"] <= Decimal("0.10") for r in rows)
    assert all(r["l_shipdate"] < r["l_receiptdate"] for r in rows)
    assert table.schema.field("l_extendedprice").type == pa.decimal128(15, 2)


def test_q6_answer_matches_a_plain_python_computation():
    table = datasets.lineitem(20_000)
    expected = sum(
        (
            r["l_extendedprice"] * r["l_discount"]
            for r in table.to_pylist()
            if str(r["l_shipdate"]) >= "1994-01-01"
            and str(r["l_shipdate"]) < "1995-01-01"
            and Decimal("0.05") <= r["l_discount"] <= Decimal("0.07")
            and r["l_quantity"] < 24
        ),
        Decimal(0),
    )
    assert expected > 0
    assert datasets.q6_answer(table) == expected


def test_copy_text_is_tab_separated_rows():
    table = pa.table({"a": [1, 2], "b": ["x y", "z"], "c": [Decimal("1.50"), Decimal("2.00")]})
    assert b"".join(datasets.copy_text(table)) == b"1\tx y\t1.50\n2\tz\t2.00\n"


def test_insert_batches_flatten_rows():
    table = pa.table(
        {
            "a": list(range(datasets.INSERT_BATCH_ROWS + 1)),
            "b": ["v"] * (datasets.INSERT_BATCH_ROWS + 1),
        }
    )
    batches = datasets.insert_batches(table)
    assert [len(b) for b in batches] == [2 * datasets.INSERT_BATCH_ROWS, 2]
    assert batches[0][:4] == [0, "v", 1, "v"]
