"""The README's "COPY in Arrow" example, run as written against a nyala server."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

README = Path(__file__).resolve().parents[2] / "README.md"


def test_arrow_copy_example_prints_what_it_says(nyala_server):
    text = README.read_text()
    start = text.index("### COPY in Arrow")
    section = text[start : text.index("\n## ", start)]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    expected = re.search(r"# (\{.*\})", code).group(1)
    code = code.replace("host=127.0.0.1 port=5433 user=nyala dbname=nyala", nyala_server.dsn)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == expected
