"""pgjdbc from JVMs in other time zones: date, timestamp and timestamptz values round-trip
exactly, as on PostgreSQL 15.

``java/JdbcTimeScenario.java`` writes values with java.sql and java.time types (around DST
changes, at the ends of the range) and reads them back in text and, past pgjdbc's fifth
execution, binary; its output on nyala must equal its output on PostgreSQL.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_pgjdbc import JAR, _url

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SOURCE = Path(__file__).parent / "java" / "JdbcTimeScenario.java"


@pytest.fixture(scope="module")
def time_scenario(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert JAR.exists(), "make installs libpostgresql-jdbc-java; run the tests through make"
    javac = shutil.which("javac")
    assert javac is not None, "javac (Java 17) is needed"
    out = tmp_path_factory.mktemp("jdbc_time")
    subprocess.run([javac, "-cp", str(JAR), "-d", str(out), str(SOURCE)], check=True)
    return out


def _run(classes: Path, server, zone: str) -> list[str]:
    done = subprocess.run(
        ["java", f"-Duser.timezone={zone}", "-cp", f"{JAR}:{classes}", "JdbcTimeScenario",
         _url(server)],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout.splitlines()


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Kolkata", "UTC", "Pacific/Chatham"])
def test_pgjdbc_round_trips_dates_and_times_as_on_postgresql(
    time_scenario, nyala_server, postgres_server, zone
):
    theirs = _run(time_scenario, postgres_server, zone)
    ours = _run(time_scenario, nyala_server, zone)
    assert ours == theirs
    assert f"TimeZone: {zone}" in ours
    assert any(line.startswith("round 6: [1|") for line in ours)
