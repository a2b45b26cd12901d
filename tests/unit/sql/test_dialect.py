from __future__ import annotations

import pytest
from sqlglot import exp

from sql.frontend import parser
from storage.errors import SqlSyntaxError


def test_adjacent_parameters_are_not_a_dollar_quote():
    (statement,) = parser.parse("insert into t values ($1,$2,$13,$14)")
    params = [p.this.name for p in statement.ast.find_all(exp.Parameter)]
    assert params == ["1", "2", "13", "14"]


def test_dollar_quoted_strings_still_work():
    (statement,) = parser.parse("select $$a b$$, $tag$x$tag$")
    assert [e.name for e in statement.ast.expressions] == ["a b", "x"]


def test_kudu_partition_by_parses_hash_levels_and_ranges():
    from sql.frontend.dialect import HashPartitionLevel, NyalaPartitionBy, RangePartitionLevel

    (statement,) = parser.parse(
        "create table t (a int, b text, primary key (a, b)) partition by hash (a) partitions 4, "
        "hash partitions 2, range (a) (partition values < 5, partition 5 < values <= 9, "
        "partition value = 100, partition 200 <= values)"
    )
    clause = statement.ast.find(NyalaPartitionBy)
    first, second, ranged = clause.expressions
    assert isinstance(first, HashPartitionLevel) and first.args["buckets"].this == "4"
    assert isinstance(second, HashPartitionLevel) and not second.expressions
    assert isinstance(ranged, RangePartitionLevel)
    below, between, exact, above = ranged.args["partitions"]
    assert below.args.get("lower") is None and below.args["upper_inclusive"] is False
    assert between.args["lower_inclusive"] is False and between.args["upper_inclusive"] is True
    assert exact.args["lower"].this == exact.args["upper"].this == "100"
    assert above.args.get("upper") is None


def test_alter_range_partitions_detach_upsert_and_column_attributes():
    from sql.frontend.dialect import (
        AlterRangePartitions,
        ColumnCompression,
        ColumnEncoding,
        DetachPartition,
        Upsert,
    )

    (alter,) = parser.parse(
        "alter table t add range partition 1 <= values < 5, drop range partition values < 1"
    )
    assert isinstance(alter.ast, AlterRangePartitions)
    assert len(alter.ast.args["add"]) == 1 and len(alter.ast.args["drop"]) == 1
    (detach,) = parser.parse("alter table t detach partition p")
    assert isinstance(detach.ast, DetachPartition) and detach.ast.expression.name == "p"
    (other,) = parser.parse("alter table t add column c int")
    assert isinstance(other.ast, exp.Alter)
    (upsert,) = parser.parse("upsert into t (a) values (1)")
    assert isinstance(upsert.ast, Upsert)
    (create,) = parser.parse("create table t (a int primary key encoding rle compression lz4)")
    kinds = [c.kind for c in create.ast.find(exp.ColumnDef).constraints]
    assert isinstance(kinds[1], ColumnEncoding) and kinds[1].name.upper() == "RLE"
    assert isinstance(kinds[2], ColumnCompression) and kinds[2].name.upper() == "LZ4"


def test_insert_overriding_clause_is_kept_on_the_insert():
    cases = {
        "insert into t (id, v) overriding system value values (1, 'a')": "SYSTEM",
        "insert into t overriding user value select 1, 2 returning id": "USER",
        "with x as (select 1) insert into t (id) select * from x": None,
    }
    for sql, expected in cases.items():
        (statement,) = parser.parse(sql)
        insert = (
            statement.ast
            if isinstance(statement.ast, exp.Insert)
            else statement.ast.find(exp.Insert)
        )
        assert insert.args.get("overriding") == expected, sql


def test_overriding_needs_system_or_user_value():
    with pytest.raises(SqlSyntaxError, match="nothing"):
        parser.parse("insert into t (id) overriding nothing values (1)")
