"""Eight client threads, half point selects and half updates by key, for a fixed time."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import numpy as np
import psycopg

from bench.context import Context
from bench.measure import NYALA, POSTGRES

log = logging.getLogger(__name__)

THREADS = 8
SELECT = "select value from metrics where host = %s and metric = %s and time = %s"
UPDATE = "update metrics set value = value + 1 where host = %s and metric = %s and time = %s"


def mixed(ctx: Context) -> None:
    keys: list[tuple[str, str, int]] = ctx.facts["live_keys"]  # type: ignore[assignment]
    seconds = ctx.mixed_seconds
    ops = ctx.figures.figure(
        f"{THREADS} threads, 50/50 point select + update", f"ops/s over {seconds:g} s", "ops/s",
        higher_is_better=True,
    )  # fmt: skip
    errors = ctx.figures.figure(
        f"{THREADS} threads, 50/50 point select + update", "errors", "errors",
        higher_is_better=False,
    )  # fmt: skip
    for repeat in range(ctx.repeats):
        for system in (NYALA, POSTGRES):
            done, failed, messages = _run(ctx, system, keys, seconds, seed=repeat)
            ops.add(system, done / seconds)
            errors.add(system, failed)
            for message in sorted(set(messages))[:5]:
                log.warning("%s mixed workload error: %s", system, message)


def _run(
    ctx: Context, system: str, keys: list[Any], seconds: float, seed: int
) -> tuple[int, int, list[str]]:
    connections = [ctx.systems.connect(system) for _ in range(THREADS)]
    counts = [0] * THREADS
    failures = [0] * THREADS
    messages: list[str] = []
    start = threading.Barrier(THREADS + 1)
    deadline = [0.0]

    def worker(index: int) -> None:
        rng = np.random.default_rng(1000 * seed + index)
        conn = connections[index]
        with conn.cursor() as cur:
            start.wait()
            while time.monotonic() < deadline[0]:
                key = keys[int(rng.integers(len(keys)))]
                try:
                    if rng.random() < 0.5:
                        cur.execute(SELECT, key, prepare=True).fetchall()
                    else:
                        cur.execute(UPDATE, key, prepare=True)
                    counts[index] += 1
                except psycopg.Error as exc:
                    failures[index] += 1
                    messages.append(f"{exc.sqlstate}: {exc}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    deadline[0] = time.monotonic() + seconds
    start.wait()
    for thread in threads:
        thread.join()
    for conn in connections:
        conn.close()
    return sum(counts), sum(failures), messages
