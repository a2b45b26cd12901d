"""``python -m bench.profiled_server OUT serve ...``: the nyala server under cProfile on every thread.

The event loop thread and every statement thread get their own profiler, timed
by the thread's CPU clock (a loaded machine's waits do not count).  SIGUSR1
marks the start of a measured phase (OUT.marked appears once it is taken)
and SIGUSR2 its end: at SIGUSR2 the
statistics gathered between the two marks (the difference of two snapshots of
every profiler, so setup such as loading and flushing rows is left out) are
merged into OUT (pstats).  Without the marks, OUT holds the whole run at exit.
"""

from __future__ import annotations

import cProfile
import marshal
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

_profiles: list[cProfile.Profile] = []
_lock = threading.Lock()
_run = threading.Thread.run

# pstats' raw form: (file, line, function) -> (primitive calls, calls, own time,
# cumulative time, {caller: (primitive calls, calls, own time, cumulative time)})
_Stats = dict[tuple[str, int, str], tuple[Any, ...]]


def _profiled_run(self: threading.Thread) -> None:
    profile = cProfile.Profile(time.thread_time)
    with _lock:
        _profiles.append(profile)
    profile.enable()
    try:
        _run(self)
    finally:
        profile.disable()


def _snapshot() -> _Stats:
    """Every profiler's statistics so far, merged, without stopping any of them."""
    merged: _Stats = {}
    with _lock:
        profiles = list(_profiles)
    for profile in profiles:
        profile.snapshot_stats()  # reads the counters; does not disable the profiler
        for func, (cc, nc, tt, ct, callers) in profile.stats.items():  # type: ignore[attr-defined]
            if func in merged:
                mcc, mnc, mtt, mct, mcallers = merged[func]
                for caller, value in callers.items():
                    old = mcallers.get(caller)
                    mcallers[caller] = value if old is None else _add(old, value)
                merged[func] = (mcc + cc, mnc + nc, mtt + tt, mct + ct, mcallers)
            else:
                merged[func] = (cc, nc, tt, ct, dict(callers))
    return merged


def _add(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(x + y for x, y in zip(a, b, strict=True))


def _since(now: _Stats, base: _Stats) -> _Stats:
    """What happened between snapshot ``base`` and snapshot ``now``."""
    out: _Stats = {}
    for func, (cc, nc, tt, ct, callers) in now.items():
        old = base.get(func)
        if old is None:
            out[func] = (cc, nc, tt, ct, callers)
            continue
        if nc == old[1]:
            continue
        old_callers = old[4]
        new_callers = {}
        for caller, value in callers.items():
            before = old_callers.get(caller)
            if before is None:
                new_callers[caller] = value
            elif value[0] != before[0]:
                new_callers[caller] = tuple(x - y for x, y in zip(value, before, strict=True))
        out[func] = (cc - old[0], nc - old[1], tt - old[2], ct - old[3], new_callers)
    return out


def _watch_marks(out: Path) -> None:
    """Wait for SIGUSR1/SIGUSR2 (blocked in every thread, so only this one takes them)."""
    base: _Stats = {}
    while True:
        signum = signal.sigwait({signal.SIGUSR1, signal.SIGUSR2})
        if signum == signal.SIGUSR1:
            base = _snapshot()
            out.with_suffix(".marked").touch()
        else:
            partial = out.with_suffix(".partial")
            partial.write_bytes(marshal.dumps(_since(_snapshot(), base)))
            partial.replace(out)


def main() -> int:
    out, argv = Path(sys.argv[1]), sys.argv[2:]
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGUSR2})
    threading.Thread(target=_watch_marks, args=(out,), name="profile-marks", daemon=True).start()
    threading.Thread.run = _profiled_run  # type: ignore[method-assign]
    from server.__main__ import main as serve

    main_profile = cProfile.Profile(time.thread_time)
    with _lock:
        _profiles.append(main_profile)
    main_profile.enable()
    try:
        return serve(argv)
    finally:
        main_profile.disable()
        if not out.exists():
            with _lock:
                profiles = list(_profiles)
            for profile in profiles:
                profile.disable()
            out.write_bytes(marshal.dumps(_snapshot()))


if __name__ == "__main__":
    raise SystemExit(main())
