"""Suite-wide test configuration: markers by location and hypothesis settings.

Tests under ``tests/e2e/`` are marked ``e2e`` here, so ``pytest -m e2e`` and
``pytest -m "not e2e"`` split the suite without each file having to say so.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

E2E_DIR = Path(__file__).parent / "e2e"

# CI machines have 2 cores and run servers beside the tests: wall-clock
# deadlines would make property tests flaky, not stricter.
settings.register_profile(
    "nyala", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("nyala")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E_DIR in item.path.parents:
            item.add_marker(pytest.mark.e2e)
