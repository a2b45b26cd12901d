"""``python -m bench.profiled_server OUT serve ...``: the nyala server under cProfile on every thread.

The event loop thread and every statement thread get their own profiler, timed
by the thread's CPU clock (a loaded machine's waits do not count);
at exit their statistics are merged into OUT (pstats), so a profile shows
the work a statement costs wherever it ran.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import threading
import time
from typing import Any

_profiles: list[cProfile.Profile] = []
_lock = threading.Lock()
_run = threading.Thread.run


def _profiled_run(self: threading.Thread) -> None:
    profile = cProfile.Profile(time.thread_time)
    with _lock:
        _profiles.append(profile)
    profile.enable()
    try:
        _run(self)
    finally:
        profile.disable()


def main() -> int:
    out, argv = sys.argv[1], sys.argv[2:]
    threading.Thread.run = _profiled_run  # type: ignore[method-assign]
    from server.__main__ import main as serve

    main_profile = cProfile.Profile(time.thread_time)
    main_profile.enable()
    try:
        return serve(argv)
    finally:
        main_profile.disable()
        stats: Any = pstats.Stats(main_profile)
        with _lock:
            for profile in _profiles:
                profile.disable()
                try:
                    stats.add(profile)
                except TypeError:
                    continue  # a thread that never ran Python under the profiler
        stats.dump_stats(out)


if __name__ == "__main__":
    raise SystemExit(main())
