"""What every workload gets: the systems, where figures go, and the run's knobs."""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from bench.datasets import LoadMethod
from bench.measure import Figures
from bench.systems import Systems

log = logging.getLogger(__name__)


@dataclasses.dataclass
class Context:
    systems: Systems
    figures: Figures
    scale: float
    repeats: int
    mixed_seconds: float
    op_seconds: float
    load_method: LoadMethod
    rng: np.random.Generator = dataclasses.field(default_factory=lambda: np.random.default_rng(42))
    facts: dict[str, object] = dataclasses.field(default_factory=dict)
    """Things a workload learned that later ones use (e.g. the keys of the loaded metrics)."""

    def rows(self, at_scale_1: int, minimum: int = 10) -> int:
        """Return a workload's row count: its size at scale 1 times the scale."""
        return max(minimum, int(at_scale_1 * self.scale))
