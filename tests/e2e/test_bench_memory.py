"""bench.memory loads through COPY, checks the count and reports RSS (no memory limit asserted:
the figure is measured by ``make bench-memory``, not judged by a test)."""

from __future__ import annotations

import pytest

from bench.memory import run

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_memory_run_reports_every_figure(tmp_path):
    result = run(1_200, tmp_path, log=False)
    assert [s[0] for s in result.samples] == [1_200]
    assert result.peak_rss_mb > 0 and result.rss_after_checkpoint_mb > 0
    assert result.rss_after_count_mb > 0 and result.load_seconds >= 0
