"""docker/compose.yaml is a valid compose file (``docker compose config``), where docker runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

COMPOSE = Path(__file__).resolve().parents[2] / "docker" / "compose.yaml"


def test_compose_file_is_valid():
    try:
        version = subprocess.run(
            ["docker", "compose", "version"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        pytest.skip("docker is not installed")
    if version.returncode != 0:
        pytest.skip("docker compose is not installed")
    result = subprocess.run(
        ["docker", "compose", "-f", str(COMPOSE), "config", "--quiet"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
