import datetime as dt
import threading

from storage.timestamp import (
    LOGICAL_BITS,
    HybridClock,
    from_datetime,
    from_micros,
    logical_part,
    to_datetime,
    to_micros,
)


def test_micros_round_trip_through_hybrid_time():
    ts = from_micros(1_700_000_000_123_456, logical=7)
    assert to_micros(ts) == 1_700_000_000_123_456
    assert logical_part(ts) == 7
    assert ts == (1_700_000_000_123_456 << LOGICAL_BITS) | 7


def test_datetime_round_trip_is_utc():
    when = dt.datetime(2024, 2, 29, 12, 30, 1, 5, tzinfo=dt.UTC)
    assert to_datetime(from_datetime(when)) == when
    assert from_datetime(when.replace(tzinfo=None)) == from_datetime(when)


def test_now_increases_strictly_when_wall_clock_stalls_or_steps_back():
    readings = iter([100, 100, 100, 50, 200])
    clock = HybridClock(lambda: next(readings))
    stamps = [clock.now() for _ in range(5)]
    assert stamps == sorted(set(stamps))
    assert to_micros(stamps[2]) == 100 and logical_part(stamps[2]) == 2
    assert stamps[4] == from_micros(200)


def test_update_moves_clock_past_a_replayed_timestamp():
    clock = HybridClock(lambda: 10)
    future = from_micros(1_000)
    clock.update(future)
    assert clock.now() > future
    assert clock.last() > future


def test_now_is_unique_across_threads():
    clock = HybridClock()
    results: list[list[int]] = [[] for _ in range(4)]

    def issue(out: list[int]) -> None:
        out.extend(clock.now() for _ in range(2_000))

    threads = [threading.Thread(target=issue, args=(out,)) for out in results]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [ts for out in results for ts in out]
    assert len(set(every)) == len(every)
    assert all(out == sorted(out) for out in results)
