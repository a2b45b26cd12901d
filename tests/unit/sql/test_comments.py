from __future__ import annotations

import pytest
import sqlglot

from sql.ddl.comments import Comments
from sql.frontend import parser
from storage import errors
from storage import types as t
from tests.unit.sql.conftest import CatalogDouble, make_table

T = make_table(1, "t", [("id", t.INT32), ("note", t.STRING)])


def parse(sql: str):
    (statement,) = parser.parse(sql)
    return statement.ast


def _comment(sql: str):
    return sqlglot.parse_one(sql, read="postgres")


def test_comments_on_tables_and_columns_are_kept_durably(tmp_path):
    comments = Comments(tmp_path, fsync=False)
    catalog = CatalogDouble([T])
    comments.apply(_comment("comment on table t is 'a table'"), catalog)
    comments.apply(_comment("comment on column public.t.note is 'a note'"), catalog)
    assert comments.all() == {(T.oid, 0): "a table", (T.oid, 2): "a note"}
    assert comments.version == 2
    assert Comments(tmp_path).all() == comments.all()
    comments.apply(_comment("comment on table t is ''"), catalog)
    assert Comments(tmp_path).all() == {(T.oid, 2): "a note"}


def test_unknown_targets_are_refused(tmp_path):
    comments = Comments(None)
    catalog = CatalogDouble([T])
    with pytest.raises(errors.UndefinedTable):
        comments.apply(_comment("comment on table nope is 'x'"), catalog)
    with pytest.raises(errors.UndefinedColumn):
        comments.apply(_comment("comment on column t.nope is 'x'"), catalog)


def test_is_null_drops_a_comment(tmp_path):
    comments = Comments(tmp_path, fsync=False)
    catalog = CatalogDouble([T])
    comments.apply(parse("comment on column t.note is 'x'"), catalog)
    comments.apply(parse("COMMENT ON COLUMN t.note IS NULL;"), catalog)
    assert comments.all() == {}
    with pytest.raises(errors.SqlSyntaxError):
        parse("comment on")
