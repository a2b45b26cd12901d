"""Column defaults as PostgreSQL 15's deparser shows them in pg_get_expr(adbin) and
information_schema.columns: ``now()`` stays ``now()``, the SQL-standard words
(CURRENT_TIMESTAMP, CURRENT_DATE, LOCALTIMESTAMP) stay words, and function names are
lower case; an INSERT still fills them."""

from __future__ import annotations

import pytest

from tests.support.differential import Pair

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists dspell",
    """create table dspell (id int primary key, a timestamptz default now(),
       b timestamptz default current_timestamp, c date default current_date,
       d timestamp default localtimestamp, e timestamptz default transaction_timestamp())""",
]
SHOWN = [
    """select attname::text, pg_get_expr(adbin, adrelid) from pg_attrdef
       join pg_attribute on attrelid = adrelid and attnum = adnum
       where adrelid = 'dspell'::regclass order by attnum""",
    """select column_name::text, column_default::text from information_schema.columns
       where table_name = 'dspell' order by ordinal_position""",
]


@pytest.fixture(scope="module")
def pair(nyala_server, postgres_server):
    with Pair.connect(nyala_server.dsn, postgres_server.dsn, SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", SHOWN)
def test_defaults_shown_as_on_postgresql(pair, sql):
    pair.check(sql)


def test_set_default_now_shown_as_on_postgresql(pair):
    pair.run("alter table dspell alter column b set default now()")
    for sql in SHOWN:
        pair.check(sql)
    pair.run("alter table dspell alter column b set default current_timestamp")
    for sql in SHOWN:
        pair.check(sql)


def test_defaults_still_fill_an_insert(pair):
    pair.run("delete from dspell", "insert into dspell (id) values (1)")
    pair.check("select a = b, a = now(), c = current_date, e = now() from dspell")
