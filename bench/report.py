"""The run's outputs: a Markdown table, a JSON file and a PNG chart of the ratios."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from bench.measure import DUCKDB, NYALA, POSTGRES, SYSTEMS, Figure, Figures

README_BEGIN = "<!-- bench:begin -->"
README_END = "<!-- bench:end -->"


def table(figures: Figures) -> str:
    """Return the figures as a Markdown table: medians [min-max] and nyala's ratios."""
    lines = [
        "| workload | figure | nyala | PostgreSQL | DuckDB | nyala/PG | nyala/DuckDB |",
        "|---|---|--:|--:|--:|--:|--:|",
    ]
    for fig in figures:
        better = "higher is better" if fig.higher_is_better else "lower is better"
        cells = [_cell(fig, system) for system in SYSTEMS]
        ratios = [_ratio(fig, other) for other in (POSTGRES, DUCKDB)]
        lines.append(
            f"| {fig.workload} | {fig.metric} ({better}) | " + " | ".join(cells + ratios) + " |"
        )
    return "\n".join(lines)


def _cell(fig: Figure, system: str) -> str:
    values = fig.values.get(system)
    if not values:
        return ""
    median = fig.median(system)
    assert median is not None
    if len(values) == 1:
        return _number(median)
    return f"{_number(median)} [{_number(min(values))}-{_number(max(values))}]"


def _ratio(fig: Figure, other: str) -> str:
    ratio = fig.ratio(NYALA, other)
    if ratio is None:
        return ""
    speedup = fig.speedup(NYALA, other)
    mark = "" if speedup is None else (" ✓" if speedup >= 1 else "")
    return f"{ratio:.3g}{mark}"


def _number(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def to_json(figures: Figures, facts: dict[str, Any]) -> dict[str, Any]:
    return {**facts, "figures": [fig.to_json() for fig in figures]}


def write_json(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n")


def chart(figures: Figures, path: Path, title: str) -> None:
    """Draw nyala's speed relative to PostgreSQL and DuckDB per figure, on a log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [fig for fig in figures if fig.unit != "errors"]
    labels = [f"{fig.workload}: {fig.metric}" for fig in rows]
    height = 0.38
    fig_height = max(3.0, 0.32 * len(rows) + 1.5)
    figure, axes = plt.subplots(figsize=(11, fig_height))
    for offset, other, colour in (
        (-height / 2, POSTGRES, "#336791"),
        (height / 2, DUCKDB, "#e0a800"),
    ):
        values = [fig.speedup(NYALA, other) for fig in rows]
        positions = [i + offset for i, v in enumerate(values) if v is not None]
        widths = [v for v in values if v is not None]
        axes.barh(positions, widths, height=height, color=colour, label=f"vs {_name(other)}")
    axes.axvline(1.0, color="black", linewidth=0.8)
    axes.set_xscale("log")
    axes.set_yticks(range(len(rows)), labels, fontsize=7)
    axes.invert_yaxis()
    axes.set_xlabel("nyala's speed relative to the other system (log scale; > 1: nyala faster)")
    axes.set_title(title, fontsize=9)
    axes.legend(loc="lower right", fontsize=8)
    finite = [v for fig in rows for o in (POSTGRES, DUCKDB) if (v := fig.speedup(NYALA, o))]
    if finite:
        low, high = min(finite), max(finite)
        axes.set_xlim(min(low, 1.0) / 2, max(high, 1.0) * 2)
        if not math.isfinite(low):
            axes.set_xlim(auto=True)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)


def _name(system: str) -> str:
    return {NYALA: "nyala", POSTGRES: "PostgreSQL 15", DUCKDB: "DuckDB"}[system]


def update_readme(readme: Path, section: str) -> None:
    """Replace the text between the bench markers in the README with ``section``."""
    text = readme.read_text()
    pattern = re.compile(re.escape(README_BEGIN) + ".*?" + re.escape(README_END), re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"{readme} has no {README_BEGIN} ... {README_END} markers")
    replacement = f"{README_BEGIN}\n{section.strip()}\n{README_END}"
    readme.write_text(pattern.sub(lambda _: replacement, text))
