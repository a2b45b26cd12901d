"""Arrays as clients receive them, nyala beside PostgreSQL 15: psycopg's lists in the text
and binary formats with the array type OIDs, pgjdbc's getArray past its switch to binary
results (``java/JdbcArrays.java``), and psql's text of arrays and ``relacl``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import psycopg
import pytest

pytestmark = pytest.mark.e2e

JAR = Path("/usr/share/java/postgresql.jar")
SOURCE = Path(__file__).parent / "java" / "JdbcArrays.java"

SETUP = [
    "DROP TABLE IF EXISTS arr_out",
    "CREATE TABLE arr_out (id int PRIMARY KEY, s text, b boolean, f float8, n numeric(6,2),"
    " d date, ts timestamptz)",
    "INSERT INTO arr_out VALUES (1, 'a b', true, 1.5, 1.25, '2020-01-02', '2020-01-01 10:00+00'),"
    " (2, NULL, NULL, NULL, NULL, NULL, NULL), (3, 'q\"q\\', false, -2, -3.50, '1999-12-31',"
    " '1999-12-31 23:59:59.25+00')",
    "GRANT SELECT ON arr_out TO PUBLIC",
]
QUERIES = [
    "SELECT id, ARRAY[id, NULL], ARRAY[id::bigint], ARRAY[id::smallint], ARRAY[s, '', 'NULL'],"
    " ARRAY[b], ARRAY[f], ARRAY[n], ARRAY[d], ARRAY[ts], ARRAY[[id, 2], [3, 4]] FROM arr_out ORDER BY id",
    "SELECT array_agg(s ORDER BY id), array_agg(n ORDER BY id), ARRAY[]::int[] FROM arr_out",
]
ACL_QUERY = "SELECT relacl, ARRAY[relname::text] FROM pg_class WHERE relname = 'arr_out'"


def _setup(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET TimeZone = 'UTC'")
        for sql in SETUP:
            conn.execute(sql)


def _observe(dsn: str, binary: bool) -> list[object]:
    out: list[object] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET TimeZone = 'UTC'")
        # aclitem has no binary form on PostgreSQL: relacl is read as text only.
        for sql in QUERIES if binary else [*QUERIES, ACL_QUERY]:
            cur = conn.cursor(binary=binary)
            rows = cur.execute(sql).fetchall()
            assert cur.description is not None
            out.append(([c.type_code for c in cur.description], rows))
    return out


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_psycopg_gets_the_same_arrays(nyala_server, postgres_server, binary):
    for server in (nyala_server, postgres_server):
        _setup(server.dsn)
    assert _observe(nyala_server.dsn, binary) == _observe(postgres_server.dsn, binary)


def test_psql_prints_the_same_array_text(nyala_server, postgres_server):
    sql = (
        "SET TimeZone = 'UTC';"
        " SELECT id, ARRAY[s, ''], ARRAY[ts], ARRAY[n]::text, format('%s', ARRAY[b]) FROM arr_out ORDER BY id;"
        " SELECT relacl, relacl::text FROM pg_class WHERE relname = 'arr_out';"
    )
    outputs = []
    for server in (nyala_server, postgres_server):
        _setup(server.dsn)
        done = server.psql(["-X", "-A", "-c", sql])
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert "{nyala=arwdDxt/nyala,=r/nyala}|{nyala=arwdDxt/nyala,=r/nyala}" in outputs[0]


@pytest.mark.slow
def test_pgjdbc_get_array_matches_postgresql(nyala_server, postgres_server, tmp_path):
    assert JAR.exists(), "make installs libpostgresql-jdbc-java; run the tests through make"
    javac = shutil.which("javac")
    assert javac is not None, "javac (Java 17) is needed"
    subprocess.run([javac, "-cp", str(JAR), "-d", str(tmp_path), str(SOURCE)], check=True)
    outputs = []
    for server in (nyala_server, postgres_server):
        fields = dict(part.split("=", 1) for part in server.dsn.split())
        url = f"jdbc:postgresql://{fields['host']}:{fields['port']}/{fields['dbname']}?user={fields['user']}"
        done = subprocess.run(
            ["java", "-cp", f"{JAR}:{tmp_path}", "JdbcArrays", url],
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, done.stderr + done.stdout
        outputs.append(done.stdout.splitlines())
    assert outputs[0] == outputs[1]
    assert any("_int4 {1,10,NULL} [1, 10, null]" in line for line in outputs[0])
    assert any(line.startswith("run 7: | _aclitem") for line in outputs[0])
    assert "param run 7: 1 3" in outputs[0] and "param run 7: 3" in outputs[0]
