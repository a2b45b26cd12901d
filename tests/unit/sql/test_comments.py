from __future__ import annotations

import pytest
import sqlglot

from catalog.comments import Comments
from sql.ddl.comments import comment_on
from sql.frontend import parser
from storage import data_type as t
from storage import errors
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
    comment_on(_comment("comment on table t is 'a table'"), comments, catalog)
    comment_on(_comment("comment on column public.t.note is 'a note'"), comments, catalog)
    assert comments.all() == {(T.oid, 0): "a table", (T.oid, 2): "a note"}
    assert comments.version == 2
    assert Comments(tmp_path).all() == comments.all()
    comment_on(_comment("comment on table t is ''"), comments, catalog)
    assert Comments(tmp_path).all() == {(T.oid, 2): "a note"}


def test_unknown_targets_are_refused(tmp_path):
    comments = Comments(None)
    catalog = CatalogDouble([T])
    with pytest.raises(errors.UndefinedTable):
        comment_on(_comment("comment on table nope is 'x'"), comments, catalog)
    with pytest.raises(errors.UndefinedColumn):
        comment_on(_comment("comment on column t.nope is 'x'"), comments, catalog)


def test_is_null_drops_a_comment(tmp_path):
    comments = Comments(tmp_path, fsync=False)
    catalog = CatalogDouble([T])
    comment_on(parse("comment on column t.note is 'x'"), comments, catalog)
    comment_on(parse("COMMENT ON COLUMN t.note IS NULL;"), comments, catalog)
    assert comments.all() == {}
    with pytest.raises(errors.SqlSyntaxError):
        parse("comment on")
