from __future__ import annotations

from bench.measure import DUCKDB, NYALA, POSTGRES, Figures, latencies_ms


def test_ratio_and_speedup_follow_the_figure_direction():
    figures = Figures()
    rate = figures.figure("w", "rows/s", "rows/s", higher_is_better=True)
    for value in (10, 30, 20):
        rate.add(NYALA, value)
    rate.add(POSTGRES, 40)
    assert rate.median(NYALA) == 20
    assert rate.ratio(NYALA, POSTGRES) == 0.5
    assert rate.speedup(NYALA, POSTGRES) == 0.5
    seconds = figures.figure("w", "seconds", "s", higher_is_better=False)
    seconds.add(NYALA, 1.0)
    seconds.add(DUCKDB, 4.0)
    assert seconds.ratio(NYALA, DUCKDB) == 0.25
    assert seconds.speedup(NYALA, DUCKDB) == 4.0
    assert seconds.ratio(NYALA, POSTGRES) is None
    assert [f.key for f in figures] == ["w: rows/s", "w: seconds"]
    assert figures.figure("w", "rows/s", "rows/s", higher_is_better=True) is rate


def test_latency_percentiles_in_milliseconds():
    p50, p99 = latencies_ms([0.001] * 99 + [0.1])
    assert p50 == 1.0
    assert 1.0 < p99 <= 100.0
