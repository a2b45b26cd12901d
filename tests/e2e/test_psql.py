"""psql against a real nyala server: ``-c``, ``-f``, stdin, output formats and errors.

Every script runs on nyala and on a throwaway PostgreSQL 15, and psql's
output must be the same text; the literal expected text is spelled out as
well, so a change in both at once is still caught.  The two servers are
shared by the module (nyala) and the session (PostgreSQL), so each test
uses table names of its own.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.support.servers import REPO_ROOT, NyalaServer, PostgresServer

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("psql")]


def _setup_sql(prefix: str) -> list[str]:
    """Return statements that build and change a composite-key table and a lookup table."""
    return [
        f"create table {prefix}_metrics (host text, metric varchar(16), ts bigint, "
        f"value double precision, primary key (host, metric, ts))",
        f"create table {prefix}_hosts (host text primary key, dc text not null)",
        f"insert into {prefix}_hosts values ('h1', 'eu'), ('h2', 'eu'), ('h3', 'us')",
        f"insert into {prefix}_metrics values ('h1', 'cpu', 1, 0.5), ('h1', 'cpu', 2, 0.75), "
        f"('h2', 'cpu', 1, 0.25), ('h2', 'mem', 1, 512), ('h3', 'cpu', 1, 1)",
        f"update {prefix}_metrics set value = value * 2 where host = 'h1' and metric = 'cpu'",
        f"delete from {prefix}_metrics where host = 'h2' and metric = 'mem'",
    ]


def _report_sql(prefix: str) -> str:
    """Return a join with aggregates over the tables ``_setup_sql`` builds."""
    return (
        f"select h.dc, count(*) as samples, sum(m.value) as total, max(m.ts) as last_ts "
        f"from {prefix}_metrics m join {prefix}_hosts h on h.host = m.host "
        f"group by h.dc order by h.dc"
    )


def _lines(*lines: str) -> str:
    """Return psql output text: the lines, each ended by a newline."""
    return "".join(f"{line}\n" for line in lines)


SETUP_TAGS = _lines(
    "CREATE TABLE", "CREATE TABLE", "INSERT 0 3", "INSERT 0 5", "UPDATE 2", "DELETE 1"
)
# psql pads a header cell to the column's width, so header lines end in a space.
REPORT_ALIGNED = _lines(
    " dc | samples | total | last_ts ",
    "----+---------+-------+---------",
    " eu |       3 |  2.75 |       2",
    " us |       1 |     1 |       1",
    "(2 rows)",
    "",
)
ROWS_ALIGNED = _lines(
    " host | metric | ts | value ",
    "------+--------+----+-------",
    " h1   | cpu    |  1 |     1",
    " h1   | cpu    |  2 |   1.5",
    " h2   | cpu    |  1 |  0.25",
    " h3   | cpu    |  1 |     1",
    "(4 rows)",
    "",
)


def _on_both(
    nyala: NyalaServer, pg: PostgresServer, args: list[str], input: str | None = None
) -> str:
    """Run psql with the same arguments on both servers; require success and equal output."""
    ours = nyala.psql(args, input)
    theirs = pg.psql(args, input)
    assert theirs.returncode == 0, f"reference PostgreSQL failed:\n{theirs.stderr}"
    assert ours.returncode == 0, f"psql exited {ours.returncode}:\n{ours.stderr}"
    assert ours.stdout == theirs.stdout
    return ours.stdout


def _command_args(statements: list[str]) -> list[str]:
    return [arg for statement in statements for arg in ("-c", statement)]


def test_psql_c_creates_changes_and_queries_a_composite_key_table(nyala_server, postgres_server):
    statements = [*_setup_sql("c"), _report_sql("c"), "select * from c_metrics order by 1, 2, 3"]
    output = _on_both(nyala_server, postgres_server, _command_args(statements))
    assert output == SETUP_TAGS + REPORT_ALIGNED + ROWS_ALIGNED


def test_psql_f_runs_a_script_of_several_statements(nyala_server, postgres_server, tmp_path):
    script = tmp_path / "script.sql"
    script.write_text(
        "-- comments, multi-line statements and several statements per line\n"
        + ";\n".join(_setup_sql("f"))
        + ";\n"
        + _report_sql("f").replace(" from ", "\nfrom ").replace(" group by", "\ngroup by")
        + ";\nselect count(*) from f_metrics; select 'two statements' as on_one_line;\n"
    )
    output = _on_both(nyala_server, postgres_server, ["-f", str(script)])
    assert output == SETUP_TAGS + REPORT_ALIGNED + _lines(
        " count ",
        "-------",
        "     4",
        "(1 row)",
        "",
        "  on_one_line   ",
        "----------------",
        " two statements",
        "(1 row)",
        "",
    )


def test_psql_reads_a_script_from_standard_input(nyala_server, postgres_server):
    script = ";\n".join([*_setup_sql("stdin"), _report_sql("stdin")]) + ";\n"
    output = _on_both(nyala_server, postgres_server, [], input=script)
    assert output == SETUP_TAGS + REPORT_ALIGNED


@pytest.fixture(scope="module")
def report_tables(nyala_server, postgres_server) -> str:
    """Build the ``fmt_`` tables on both servers once; return the report query."""
    for server in (nyala_server, postgres_server):
        server.psql(_command_args(_setup_sql("fmt")), check=True)
    return _report_sql("fmt")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["-A", "-t"], "eu|3|2.75|2\nus|1|1|1\n"),
        (["-A"], "dc|samples|total|last_ts\neu|3|2.75|2\nus|1|1|1\n(2 rows)\n"),
        (["-A", "-t", "-F", ","], "eu,3,2.75,2\nus,1,1,1\n"),
        (["--csv"], "dc,samples,total,last_ts\neu,3,2.75,2\nus,1,1,1\n"),
        (["-t"], " eu |       3 |  2.75 |       2\n us |       1 |     1 |       1\n\n"),
        ([], REPORT_ALIGNED),
    ],
    ids=["unaligned-tuples-only", "unaligned", "field-separator", "csv", "tuples-only", "aligned"],
)
def test_output_formats_match_postgresql(
    nyala_server, postgres_server, report_tables, options, expected
):
    output = _on_both(nyala_server, postgres_server, [*options, "-c", report_tables])
    assert output == expected


def test_values_of_every_type_print_as_postgresql_prints_them(
    nyala_server, postgres_server, tmp_path
):
    script = tmp_path / "types.sql"
    script.write_text(
        """
        create table types_shown (
            id integer primary key, b boolean, i2 smallint, i8 bigint, f4 real,
            f8 double precision, n numeric(12,3), v varchar(10), t text,
            d date, ts timestamp, tz timestamptz
        );
        insert into types_shown values
            (1, true, -32768, 9223372036854775807, 1.5, 0.1, -123456789.125, 'abc',
             'héllo ✓', '2024-02-29', '2024-01-02 03:04:05.678901', '2024-01-02 03:04:05+00'),
            (2, null, null, null, null, null, null, null, null, null, null, null),
            (3, false, 0, -1, -0.25, 1e100, 0.001, '', '', '1970-01-01',
             '1999-12-31 23:59:59', '2000-01-01 00:00:00+00');
        select * from types_shown order by id;
        """
    )
    aligned = _on_both(nyala_server, postgres_server, ["-f", str(script)])
    assert "héllo ✓" in aligned and "(3 rows)" in aligned
    _on_both(nyala_server, postgres_server, ["-A", "-t", "-c", "select * from types_shown"])


def test_bytea_values_print_as_postgresql_prints_them(nyala_server, postgres_server):
    statements = [
        "create table bytea_shown (id integer primary key, b bytea)",
        r"insert into bytea_shown values (1, '\x00ff'), (2, 'abc'), (3, '\\'), (4, '')",
        "select id, b, length(b) from bytea_shown order by id",
    ]
    output = _on_both(nyala_server, postgres_server, _command_args(statements))
    assert "\\x00ff" in output


def test_single_transaction_script_with_an_error_changes_nothing(
    nyala_server, postgres_server, tmp_path
):
    script = tmp_path / "atomic.sql"
    script.write_text(
        "insert into atomic_t values (2);\n"
        "insert into atomic_t values (1);\n"  # duplicate key: the whole file rolls back
        "insert into atomic_t values (3);\n"
    )
    for server in (nyala_server, postgres_server):
        server.psql(["-c", "create table atomic_t (id integer primary key)",
                     "-c", "insert into atomic_t values (1)"], check=True)  # fmt: skip
        result = server.psql(["-1", "-f", str(script)])
        assert result.returncode == 3, result.stderr
        assert "ERROR:" in result.stderr
        after = server.psql(["-A", "-t", "-c", "select id from atomic_t order by id"], check=True)
        assert after.stdout == "1\n", server


@pytest.fixture(scope="module")
def error_table(nyala_server, postgres_server) -> str:
    for server in (nyala_server, postgres_server):
        server.psql(
            ["-c", "create table err_t (id integer primary key, name varchar(5) not null)",
             "-c", "insert into err_t values (1, 'one')"],
            check=True,
        )  # fmt: skip
    return "err_t"


ERRORS = [
    ("select * from no_such_table", "42P01"),
    ("select no_such_column from err_t", "42703"),
    ("selec 1", "42601"),
    ("insert into err_t values (1, 'dup')", "23505"),
    ("insert into err_t (id) values (2)", "23502"),
    ("insert into err_t values (2, 'too long')", "22001"),
    ("insert into err_t values (2147483648, 'big')", "22003"),
    ("select 1 / 0", "22012"),
]


@pytest.mark.parametrize(("sql", "sqlstate"), ERRORS, ids=[code for _, code in ERRORS])
def test_error_shows_its_sqlstate_and_stops_psql(
    nyala_server, postgres_server, error_table, sql, sqlstate
):
    args = ["-c", r"\set VERBOSITY verbose", "-c", sql, "-c", "select 'not reached'"]
    for server in (nyala_server, postgres_server):
        result = server.psql(args)
        assert result.returncode == 1, (server, result.stdout, result.stderr)
        assert result.stderr.startswith(f"ERROR:  {sqlstate}: "), (server, result.stderr)
        assert "not reached" not in result.stdout
        after = server.psql(["-A", "-t", "-c", f"select id, name from {error_table}"], check=True)
        assert after.stdout == "1|one\n"


def test_error_in_a_script_names_file_and_line_and_stops(
    nyala_server, postgres_server, tmp_path: Path
):
    script = tmp_path / "broken.sql"
    script.write_text(
        "\\set VERBOSITY verbose\n"
        "create table broken_t (id integer primary key);\n"
        "insert into broken_t values (1);\n"
        "select * from broken_missing;\n"
        "insert into broken_t values (2);\n"
    )
    outputs = []
    for server in (nyala_server, postgres_server):
        result = server.psql(["-f", str(script)])
        assert result.returncode == 3, (server, result.stderr)
        assert result.stderr.startswith(f"psql:{script}:4: ERROR:  42P01: "), result.stderr
        after = server.psql(["-A", "-t", "-c", "select id from broken_t"], check=True)
        assert after.stdout == "1\n"
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1] == "CREATE TABLE\nINSERT 0 1\n"


_PROMPT = re.compile(r"^nyala=[>#] ")


def _readme_session() -> list[tuple[str, list[str]]]:
    """Return (statement, expected output lines) pairs from the README's psql session."""
    text = (REPO_ROOT / "README.md").read_text()
    block = text.split("```console\n$ psql -h 127.0.0.1 -p 5433 -U nyala -d nyala\n", 1)[1]
    lines = block.split("\n```\n", 1)[0].split("\n")
    pairs: list[tuple[str, list[str]]] = []
    statement: list[str] = []
    for line in lines:
        if _PROMPT.match(line) or (statement and not statement[-1].endswith(";")):
            statement.append(_PROMPT.sub("", line))
            if statement[-1].endswith(";"):
                pairs.append(("\n".join(statement), []))
        elif pairs:
            statement = []
            pairs[-1][1].append(line)
    return pairs


def test_readme_psql_session_prints_what_the_readme_shows(nyala_server):
    session = _readme_session()
    assert len(session) >= 8, "the README's psql session was not found"
    for statement, expected in session:
        result = nyala_server.psql(["-c", statement])
        printed = [line.rstrip() for line in (result.stdout + result.stderr).split("\n")]
        assert "\n".join(printed).rstrip() == "\n".join(expected).rstrip(), statement


def test_nyala_console_script_configured_by_environment_serves_psql(nyala_server_factory, tmp_path):
    script = Path(sys.executable).with_name("nyala")
    if not script.exists():
        pytest.skip("the nyala console script is not installed (make test installs it)")
    server = nyala_server_factory(
        tmp_path / "env-data", database="envdb", program=[str(script)], configure_by_env=True
    )
    result = server.psql(["-A", "-t", "-c", "select current_database()"], check=True)
    assert result.stdout == "envdb\n"
    assert (tmp_path / "env-data").is_dir()
