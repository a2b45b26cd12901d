"""pgjdbc 42.5 (Debian's libpostgresql-jdbc-java, Java 17) on nyala, side by side with PostgreSQL 15.

``java/JdbcScenario.java`` prints everything a JDBC application can observe,
one fact a line; it is compiled here and run against both servers, and the
two outputs must be the same.  It covers PreparedStatement with every type
past pgjdbc's switch to a named statement and binary results (the 5th
execution), executeBatch with and without reWriteBatchedInserts=true,
setAutoCommit(false) transactions, ResultSetMetaData and DatabaseMetaData
(getTables, getColumns, getTablePrivileges, getColumnPrivileges, getPrimaryKeys,
getIndexInfo, getSchemas, getCatalogs, getTypeInfo).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

JAR = Path("/usr/share/java/postgresql.jar")
SOURCE = Path(__file__).parent / "java" / "JdbcScenario.java"


@pytest.fixture(scope="module")
def scenario_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert JAR.exists(), "make installs libpostgresql-jdbc-java; run the tests through make"
    javac = shutil.which("javac")
    assert javac is not None, "javac (Java 17) is needed"
    out = tmp_path_factory.mktemp("jdbc")
    subprocess.run([javac, "-cp", str(JAR), "-d", str(out), str(SOURCE)], check=True)
    return out


def _url(server) -> str:
    fields = dict(part.split("=", 1) for part in server.dsn.split())
    return f"jdbc:postgresql://{fields['host']}:{fields['port']}/{fields['dbname']}?user={fields['user']}"


def _run(classes: Path, server, *jvm_options: str) -> list[str]:
    done = subprocess.run(
        ["java", *jvm_options, "-cp", f"{JAR}:{classes}", "JdbcScenario", _url(server)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout.splitlines()


def test_pgjdbc_scenario_matches_postgresql(scenario_classes, nyala_server, postgres_server):
    theirs = _run(scenario_classes, postgres_server)
    ours = _run(scenario_classes, nyala_server)
    assert ours == theirs
    assert "plain batch: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]" in ours
    assert "rewritten batch: [-2, -2, -2, -2, -2, -2, -2, -2, -2, -2]" in ours
    assert "primary key: jdbc_types id 1 jdbc_types_pkey" in ours
    assert "table privilege: jdbc_types nyala PUBLIC SELECT NO" in ours
    assert "column privilege: jdbc_types v nyala PUBLIC UPDATE NO" in ours


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Kolkata"])
def test_pgjdbc_in_another_time_zone_round_trips_as_on_postgresql(
    scenario_classes, nyala_server, postgres_server, zone
):
    """pgjdbc sends the JVM's zone as the TimeZone startup parameter; nyala takes it."""
    option = f"-Duser.timezone={zone}"
    theirs = _run(scenario_classes, postgres_server, option)
    ours = _run(scenario_classes, nyala_server, option)
    assert ours == theirs
