"""The README's "Connecting" examples, run as written against a nyala server.

Each example's address (127.0.0.1:5433) is pointed at the test server; the
tables are those of the README's first psql session.  An example that stops
working fails here, so the README stays true.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.usefixtures("psql")]

README = Path(__file__).resolve().parents[2] / "README.md"
JAR = Path("/usr/share/java/postgresql.jar")
SETUP = [
    "create table hosts (host text primary key, dc text not null)",
    "create table metrics (host text, metric varchar(32), ts timestamp, "
    "value double precision, primary key (host, metric, ts))",
    "insert into hosts values ('web-1', 'eu-west'), ('web-2', 'eu-west'), ('db-1', 'us-east')",
    "insert into metrics values ('web-1', 'cpu', '2024-05-01 12:00', 0.42), "
    "('web-1', 'cpu', '2024-05-01 12:01', 0.61), ('web-2', 'cpu', '2024-05-01 12:00', 0.31), "
    "('db-1', 'cpu', '2024-05-01 12:00', 0.88)",
]


def _section() -> str:
    text = README.read_text()
    start = text.index("## Connecting")
    return text[start : text.index("\n### ", start)]


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", _section(), re.S)


def _at(text: str, port: int) -> str:
    return text.replace("port=5433", f"port={port}").replace(":5433/", f":{port}/")


@pytest.fixture
def server(fresh_nyala_server):
    with psycopg.connect(fresh_nyala_server.dsn, autocommit=True) as conn:
        for statement in SETUP:
            conn.execute(statement)
    return fresh_nyala_server


def _python(code: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _port(server) -> int:
    return int(re.search(r"port=(\d+)", server.dsn).group(1))


def test_psql_examples(server, tmp_path):
    port = _port(server)
    line = _blocks("sh")[0].splitlines()[0].split("#")[0].split()
    listed = subprocess.run(
        [*_at(" ".join(line), port).replace("-p 5433", f"-p {port}").split(), "-c", r"\dt"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "metrics" in listed.stdout
    (tmp_path / "metrics.csv").write_text(
        "host,metric,ts,value\nweb-9,cpu,2024-05-02 00:00:00,0.75\n"
    )
    for command in _blocks("sql")[0].strip().splitlines():
        for name in ("metrics.csv", "hot.csv"):
            command = command.replace(f"'{name}'", f"'{tmp_path / name}'")
        server.psql(["-c", command], check=True)
    hot = (tmp_path / "hot.csv").read_text().splitlines()
    assert hot[0] == "host,metric,ts,value"
    assert "web-9,cpu,2024-05-02 00:00:00,0.75" in hot
    assert len(hot) == 1 + 3


def test_psycopg_and_sqlalchemy_examples(server, tmp_path):
    psycopg_code, sqlalchemy_code = _blocks("python")[:2]
    printed = _python(_at(psycopg_code, _port(server)), tmp_path)
    assert printed.count("datetime.datetime") == 2
    printed = _python(_at(sqlalchemy_code, _port(server)), tmp_path)
    assert "'name': 'value'" in printed
    with psycopg.connect(server.dsn) as conn:
        assert conn.execute("select count(*) from metrics_copy").fetchone() == (4,)
        assert conn.execute("select dc from hosts where host = 'web-3'").fetchone() == ("us-east",)


def test_jdbc_url(server, tmp_path):
    url = re.search(r"`(jdbc:postgresql://[^`]+)`", _section()).group(1)
    source = tmp_path / "ReadmeUrl.java"
    source.write_text(
        "import java.sql.*;\n"
        "public class ReadmeUrl { public static void main(String[] a) throws Exception {\n"
        "  try (Connection c = DriverManager.getConnection(a[0]);\n"
        '       ResultSet r = c.createStatement().executeQuery("select count(*) from metrics")) {\n'
        "    r.next(); System.out.println(r.getLong(1)); } } }\n"
    )
    java = shutil.which("java")
    assert java is not None and JAR.exists(), "make installs Java and pgjdbc"
    done = subprocess.run(
        [java, "-cp", str(JAR), str(source), _at(url, _port(server))],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4"


def test_pyspark_example(server, tmp_path):
    code = _at(_blocks("python")[2], _port(server)) + "\nspark.stop()\n"
    _python(code, tmp_path)
    with psycopg.connect(server.dsn) as conn:
        hot = conn.execute("select host, value from hot_metrics order by host, value").fetchall()
        assert hot == [("db-1", 0.88), ("db-1", 0.88), ("web-1", 0.61), ("web-1", 0.61)]
        keyed = conn.execute("select count(*) from hot_keyed").fetchone()
        assert keyed == (2,)
        tablets = conn.execute(
            "select count(*) from nyala_tablets where table_name = 'hot_keyed'"
        ).fetchone()
        assert tablets == (4,)
