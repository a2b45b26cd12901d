from __future__ import annotations

import pytest

from bench import report
from bench.measure import NYALA, POSTGRES, Figures


def _figures() -> Figures:
    figures = Figures()
    fig = figures.figure("scan", "seconds", "s", higher_is_better=False)
    for value in (1.0, 2.0, 3.0):
        fig.add(NYALA, value)
        fig.add(POSTGRES, value * 4)
    return figures


def test_table_shows_medians_ranges_and_ratios():
    text = report.table(_figures())
    row = text.splitlines()[2]
    assert row.startswith("| scan | seconds (lower is better) | 2 [1-3] | 8 [4-12] |  | 0.25 ✓ |")


def test_chart_writes_a_png(tmp_path):
    path = tmp_path / "chart.png"
    report.chart(_figures(), path, "title")
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_update_readme_replaces_between_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"a\n{report.README_BEGIN}\nold\n{report.README_END}\nb\n")
    report.update_readme(readme, "new table")
    assert readme.read_text() == f"a\n{report.README_BEGIN}\nnew table\n{report.README_END}\nb\n"
    readme.write_text("no markers")
    with pytest.raises(ValueError):
        report.update_readme(readme, "x")
