"""bench.profiled_server: a measured phase's statistics are the difference of two snapshots."""

from __future__ import annotations

import cProfile
import time

from bench import profiled_server


def _work() -> int:
    return sum(range(100))


def _phase(times: int) -> None:
    for _ in range(times):
        _work()


def _calls(stats: dict, name: str) -> int:
    return sum(value[1] for func, value in stats.items() if func[2] == name)


def test_the_measured_phase_holds_only_the_calls_made_in_it(monkeypatch):
    profile = cProfile.Profile(time.thread_time)
    monkeypatch.setattr(profiled_server, "_profiles", [profile])
    profile.enable()
    _phase(3)  # setup: not to be counted
    base = profiled_server._snapshot()
    _phase(2)
    now = profiled_server._snapshot()
    profile.disable()
    measured = profiled_server._since(now, base)
    assert _calls(base, "_work") == 3
    assert _calls(measured, "_work") == 2
    (callers,) = [value[4] for func, value in measured.items() if func[2] == "_work"]
    assert [(func[2], value[0]) for func, value in callers.items()] == [("_phase", 2)]
    assert _calls(profiled_server._since(now, now), "_work") == 0
