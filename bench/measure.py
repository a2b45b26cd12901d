"""Figures: what one workload measured on each system, repeat by repeat.

A figure is one number per repeat per system (rows/s, a latency, seconds).
The report shows the median of the repeats with their min and max, and the
ratios of nyala's median to the others'.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

NYALA = "nyala"
POSTGRES = "postgres"
DUCKDB = "duckdb"
SYSTEMS = (NYALA, POSTGRES, DUCKDB)


@dataclasses.dataclass
class Figure:
    """One measured quantity, e.g. point-select p99 latency, on every system that ran it."""

    workload: str
    metric: str
    unit: str
    higher_is_better: bool
    values: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    note: str = ""

    @property
    def key(self) -> str:
        return f"{self.workload}: {self.metric}"

    def add(self, system: str, value: float) -> None:
        self.values.setdefault(system, []).append(float(value))

    def median(self, system: str) -> float | None:
        values = self.values.get(system)
        return statistics.median(values) if values else None

    def ratio(self, system: str, other: str) -> float | None:
        """Return median(system) / median(other), the figure's own ratio."""
        mine, theirs = self.median(system), self.median(other)
        if mine is None or theirs is None or theirs == 0:
            return None
        return mine / theirs

    def speedup(self, system: str, other: str) -> float | None:
        """Return how many times better ``system`` did than ``other`` (>1: better)."""
        ratio = self.ratio(system, other)
        if ratio is None or ratio == 0:
            return None
        return ratio if self.higher_is_better else 1.0 / ratio

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = dataclasses.asdict(self)
        out["median"] = {s: self.median(s) for s in self.values}
        out["ratio_to_postgres"] = self.ratio(NYALA, POSTGRES)
        out["ratio_to_duckdb"] = self.ratio(NYALA, DUCKDB)
        return out


class Figures:
    """The figures of one run, in the order they were first measured."""

    def __init__(self) -> None:
        self._by_key: dict[str, Figure] = {}

    def figure(
        self, workload: str, metric: str, unit: str, *, higher_is_better: bool, note: str = ""
    ) -> Figure:
        key = f"{workload}: {metric}"
        fig = self._by_key.get(key)
        if fig is None:
            fig = self._by_key[key] = Figure(workload, metric, unit, higher_is_better, note=note)
        return fig

    def __iter__(self) -> Iterator[Figure]:
        return iter(self._by_key.values())

    def __len__(self) -> int:
        return len(self._by_key)


@contextmanager
def stopwatch() -> Iterator[Callable[[], float]]:
    """Time a block: ``with stopwatch() as elapsed: ...; elapsed()`` gives seconds."""
    start = time.perf_counter()
    end: list[float] = []
    yield lambda: (end[0] if end else time.perf_counter()) - start
    end.append(time.perf_counter())


def latencies_ms(samples_s: list[float]) -> tuple[float, float]:
    """Return (p50, p99) in milliseconds of per-operation latencies given in seconds."""
    arr = np.asarray(samples_s) * 1000.0
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 99))
