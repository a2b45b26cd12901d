"""psql's describe commands (``\\d`` and its family) on a database holding tables, keys,
defaults, checks, an index, a sequence, a view, a foreign key, a comment, a role and a
grant: nyala's output beside PostgreSQL 15's.

The commands listed in SAME print exactly what PostgreSQL prints.  The others differ for
reasons the README lists (objects nyala does not have: other databases, plpgsql, text
search configurations; casts it does not support; view text as written) but must still
answer without an error, and ``\\sf`` of a built-in function is 0A000 naming
pg_get_functiondef, never a DuckDB error text.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

SETUP = (
    "create table dd_items (id int primary key, name varchar(40) not null default 'x',"
    " price numeric(10,2), created timestamptz, flag boolean, qty bigint check (qty >= 0));"
    " create index dd_items_name on dd_items (name);"
    " create sequence dd_seq;"
    " create view dd_view as select id, name from dd_items;"
    " comment on table dd_items is 'items table';"
    " create table dd_child (id int primary key, item int references dd_items(id));"
    " drop role if exists dd_role; create role dd_role login;"
    " grant select on dd_items to dd_role;"
)
SAME = [
    r"\d dd_items", r"\d+ dd_items", r"\d dd_child", r"\dt dd_*", r"\di dd_*", r"\ds",
    r"\dv", r"\dm", r"\dT", r"\dD", r"\dc", r"\do", r"\dy", r"\dE", r"\des", r"\dRp",
    r"\drds", r"\d dd_view", r"\d dd_seq", r"\d dd_items_name", r"\dp dd_*", r"\du dd_*",
]  # fmt: skip
ANSWERED = [r"\dn", r"\l", r"\dx", r"\dC", r"\dF", r"\dL", r"\dconfig", r"\sv dd_view", r"\df"]


def _describe(server, command: str) -> tuple[int, str, str]:
    done = server.psql(["-X", "-c", command])
    return done.returncode, done.stdout, done.stderr


def test_psql_describe_commands_as_postgresql(nyala_server, postgres_server):
    for server in (nyala_server, postgres_server):
        server.psql(["-X", "-q", "-c", SETUP], check=True)
    try:
        for command in SAME:
            assert _describe(nyala_server, command) == _describe(postgres_server, command), command
        for command in ANSWERED:
            code, out, err = _describe(nyala_server, command)
            assert code == 0 and not err, (command, err)
        code, _, err = _describe(nyala_server, r"\sf now")
        assert "pg_get_functiondef is not supported" in err or "does not exist" in err, err
        sf = nyala_server.psql(["-X", "-v", "VERBOSITY=sqlstate", "-c", r"\sf nosuch"])
        theirs = postgres_server.psql(["-X", "-v", "VERBOSITY=sqlstate", "-c", r"\sf nosuch"])
        assert sf.stderr == theirs.stderr  # ERROR:  42883
    finally:
        for server in (nyala_server, postgres_server):
            server.psql(
                ["-X", "-q", "-c", "drop view dd_view; drop table dd_child; drop table dd_items;"
                 " drop sequence dd_seq; drop role dd_role"]
            )  # fmt: skip
