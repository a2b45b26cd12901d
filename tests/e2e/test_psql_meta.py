"""psql 15's describe meta-commands on nyala, side by side with PostgreSQL 15.

The same tables are made on both servers and each meta-command's output must
be the same text.  Known, documented differences are normalised before the
comparison: owners (nyala's one role owns everything, PostgreSQL 15's
``public`` schema belongs to ``pg_database_owner``), and the rows ``\\l`` and
``\\du`` show for databases and roles that exist only on PostgreSQL
(``postgres``, ``template0``, ``template1``).
"""

from __future__ import annotations

import re

import pytest

from tests.support.servers import NyalaServer, PostgresServer

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("psql")]

SETUP = [
    "create table meta_orders (id bigint primary key, customer_id integer not null, "
    "amount numeric(10,2) default 0, note varchar(50), created_at timestamptz, "
    "flag boolean, ratio double precision, body text)",
    "create table meta_lines (order_id bigint, line integer, qty smallint not null, "
    "primary key (order_id, line))",
    "create table meta_defaults (id integer primary key, s text default 'abc', "
    "v varchar(5) default 'x', n numeric(5,2) default 1.5, b boolean default true, "
    "d date default '2024-01-01', i bigint default -1, j integer default 7, "
    "f double precision default -0.5, t timestamp default '2024-01-02 03:04:05')",
    "comment on table meta_orders is 'every order'",
    "comment on column meta_orders.note is 'free text from the customer'",
]


@pytest.fixture(scope="module")
def tables(nyala_server: NyalaServer, postgres_server: PostgresServer) -> None:
    for server in (nyala_server, postgres_server):
        for table in ("meta_orders", "meta_lines", "meta_defaults"):
            server.psql(["-c", f"drop table if exists {table}"])
        args = [a for s in SETUP for a in ("-c", s)]
        server.psql(args, check=True)


def _normalise(text: str, user: str) -> str:
    """Owner names and sizes aside, the same text modulo column widths."""
    text = text.replace("pg_database_owner", user)
    text = re.sub(r"\b\d+ (bytes|kB|MB)\b", "SIZE", text)
    lines = [re.sub(r"-+", "-", re.sub(r"\s+", " ", line)).strip() for line in text.splitlines()]
    return "\n".join(lines)


def _both(nyala: NyalaServer, pg: PostgresServer, *commands: str) -> str:
    args = [a for c in commands for a in ("-c", c)]
    ours = nyala.psql(args)
    theirs = pg.psql(args)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    assert ours.stderr == "", ours.stderr
    assert _normalise(ours.stdout, "nyala") == _normalise(theirs.stdout, "nyala")
    return ours.stdout


@pytest.mark.usefixtures("tables")
@pytest.mark.parametrize(
    "command",
    [
        r"\dt meta_*",
        r"\d meta_orders",
        r"\d meta_lines",
        r"\d meta_defaults",
        r"\d+ meta_orders",
        r"\d+ meta_lines",
        r"\di meta_*",
        r"\dt+ meta_orders",
        r"\d meta_*",
    ],
)
def test_describe_commands_match_postgresql(nyala_server, postgres_server, command):
    _both(nyala_server, postgres_server, command)


@pytest.mark.usefixtures("tables")
def test_describe_table_shows_columns_key_and_comments(nyala_server, postgres_server):
    out = _both(nyala_server, postgres_server, r"\d+ meta_orders")
    assert re.search(r"amount\s+\| numeric\(10,2\)\s+\|\s+\|\s+\| 0 ", out)
    assert re.search(r"customer_id\s+\| integer\s+\|\s+\| not null \|", out)
    assert "free text from the customer" in out
    assert '"meta_orders_pkey" PRIMARY KEY, btree (id)' in out
    listed = _both(nyala_server, postgres_server, r"\dt+ meta_orders")
    assert "every order" in listed


@pytest.mark.usefixtures("tables")
def test_schemas_match_postgresql(nyala_server, postgres_server):
    out = _both(nyala_server, postgres_server, r"\dn")
    assert " public | " in out


def _rows_for(output: str, first_cell: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip().startswith(first_cell + " ")]


def test_database_and_role_lists_show_ours_as_postgresql_does(nyala_server, postgres_server):
    for command, first in ((r"\l", "nyala"), (r"\du", "nyala")):
        ours = nyala_server.psql(["-c", command], check=True).stdout
        theirs = postgres_server.psql(["-c", command], check=True).stdout
        header = [_normalise(line, "nyala") for line in ours.splitlines()[:3]]
        assert header == [_normalise(line, "nyala") for line in theirs.splitlines()[:3]]
        assert _rows_for(ours, first), ours
        if command == r"\du":
            mine = [_normalise(line, "nyala") for line in _rows_for(ours, first)]
            assert mine == [_normalise(line, "nyala") for line in _rows_for(theirs, first)]


def test_comment_on_an_unknown_column_is_42703(nyala_server):
    out = nyala_server.psql(["-c", "comment on column meta_orders.nope is 'x'"])
    assert out.returncode != 0
    assert 'column "nope" of relation "meta_orders" does not exist' in out.stderr


def test_comments_survive_a_restart(fresh_nyala_server):
    fresh_nyala_server.psql(
        ["-c", "create table kept (id int primary key)", "-c", "comment on table kept is 'kept'"],
        check=True,
    )
    fresh_nyala_server.restart()
    out = fresh_nyala_server.psql(["-c", r"\dt+ kept"], check=True).stdout
    assert re.search(r"^ public \| kept .*\| kept$", out, re.M), out


def test_describe_shows_nyala_partitioning_on_the_key_line(nyala_server):
    nyala_server.psql(
        [
            "-c",
            "drop table if exists meta_parted",
            "-c",
            "create table meta_parted (host text, ts bigint, v double precision, "
            "primary key (host, ts)) partition by hash (host) partitions 4, "
            "range (ts) (partition values < 100, partition 100 <= values < 200)",
        ],
        check=True,
    )
    out = nyala_server.psql(["-c", r"\d meta_parted"], check=True).stdout
    assert (
        '"meta_parted_pkey" PRIMARY KEY, btree (host, ts) PARTITION BY HASH (host) '
        "PARTITIONS 4, RANGE (ts) (PARTITION VALUES < 100, PARTITION 100 <= VALUES < 200)"
    ) in out, out
    assert re.search(r"^ host\s+\| text\s+\|\s+\| not null \|", out, re.M), out


def test_role_list_shows_the_roles_created(nyala_server, postgres_server):
    statements = [
        "create user meta_alice with password 'pw-alice'",
        "create role meta_bob with superuser login",
        "create role meta_carol",
    ]
    listed = []
    for server in (nyala_server, postgres_server):
        for name in ("meta_alice", "meta_bob", "meta_carol"):
            server.psql(["-c", f"drop role if exists {name}"])
        server.psql([a for s in statements for a in ("-c", s)], check=True)
        out = server.psql(["-c", r"\du meta_*"], check=True).stdout
        listed.append([_normalise(line, "nyala") for line in out.splitlines() if "meta_" in line])
        rows = server.psql(
            [
                "-At",
                "-c",
                "select rolname, rolsuper, rolcanlogin from pg_roles "
                "where rolname like 'meta%' order by 1",
            ],
            check=True,
        ).stdout
        listed.append(rows)
        for name in ("meta_alice", "meta_bob", "meta_carol"):
            server.psql(["-c", f"drop role {name}"], check=True)
    assert listed[0] == listed[2] and listed[1] == listed[3], listed
    assert len(listed[0]) == 3
