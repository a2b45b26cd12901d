"""A plain-SQL dump written by PostgreSQL 15's pg_dump of tables with foreign keys (composite,
self-referencing, referencing a UNIQUE constraint, with actions, deferrable, NOT VALID)
restores into nyala with ``psql -v ON_ERROR_STOP=1 -f``: pg_dump loads the data first and adds
the keys after with ``ALTER TABLE ONLY ... ADD CONSTRAINT ... FOREIGN KEY``, which validates
the rows.  The rows, the keys in pg_constraint and psql's ``\\d`` then match PostgreSQL's, and
the restored keys are enforced."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.pg_dumps import dumped_database
from tests.support.psql import run_psql, without_layout
from tests.support.servers import PostgresServer

pytestmark = pytest.mark.e2e

SOURCE_DB = "dump_fk_source"
SCHEMA = (
    "create table account (id int primary key, email text unique, name text)",
    "create table region (country text, code int, name text, primary key (country, code))",
    "create table category (id int primary key, parent int references category "
    "on delete cascade, name text)",
    "create table shop (id int primary key, owner int not null references account "
    "on delete restrict, contact text references account (email) on update cascade "
    "on delete set null, country text, code int, category int, "
    "constraint shop_region foreign key (country, code) references region "
    "match full on update cascade deferrable initially deferred)",
    "alter table shop add constraint shop_category foreign key (category) "
    "references category not valid",
    "insert into account select i, 'a' || i || '@x', 'n' || i from generate_series(1, 30) i",
    "insert into region values ('se', 1, 'Stockholm'), ('se', 2, 'Uppsala'), ('no', 1, 'Oslo')",
    "insert into category values (1, null, 'root'), (2, 1, 'food'), (3, 2, 'fruit')",
    "insert into shop select i, 1 + i % 30, 'a' || (1 + i % 7) || '@x', "
    "case when i % 3 = 0 then null else 'se' end, case when i % 3 = 0 then null else 1 + i % 2 end, "
    "1 + i % 3 from generate_series(1, 60) i",
)
TABLES = ("account", "region", "category", "shop")


@pytest.fixture(scope="module")
def dump_file(postgres_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory):
    directory = tmp_path_factory.mktemp("dump")
    with dumped_database(postgres_server, directory, SOURCE_DB, SCHEMA) as dump:
        yield dump


def test_pg_dump_with_foreign_keys_restores_into_nyala(dump_file, fresh_nyala_server):
    path, source = dump_file
    assert "FOREIGN KEY" in path.read_text()
    fresh_nyala_server.psql(["-v", "ON_ERROR_STOP=1", "-f", str(path)], check=True)
    keys = (
        "select conname, conrelid::regclass::text, confrelid::regclass::text, "
        "array_to_string(conkey, ','), array_to_string(confkey, ','), confupdtype, "
        "confdeltype, confmatchtype, condeferrable, condeferred, convalidated, "
        "pg_get_constraintdef(oid) from pg_constraint where contype = 'f' order by conname"
    )
    with psycopg.connect(fresh_nyala_server.dsn) as ours, psycopg.connect(source) as theirs:
        for table in TABLES:
            query = f"select * from {table} order by 1"
            assert ours.execute(query).fetchall() == theirs.execute(query).fetchall(), table
        assert ours.execute(keys).fetchall() == theirs.execute(keys).fetchall()
        # The restored keys are enforced, with their actions.
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            ours.execute("insert into shop (id, owner) values (999, 999)")
        ours.rollback()
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            ours.execute("delete from account where id = 2")
        ours.rollback()
        ours.execute("insert into category values (4, 1, 'x'), (5, 4, 'y')")
        ours.execute("delete from category where id = 4")
        assert ours.execute("select id from category order by id").fetchall() == [(1,), (2,), (3,)]
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            ours.execute("delete from category where id = 2")  # cascades to 3, which a shop uses
        ours.rollback()
    for table in TABLES:
        mine = fresh_nyala_server.psql(["-c", rf"\d {table}"], check=True).stdout
        real = run_psql(source, ["-c", rf"\d {table}"], check=True).stdout
        assert without_layout(mine) == without_layout(real), table
