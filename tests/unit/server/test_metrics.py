"""The statement tally exports what prometheus_client's Counter and Histogram exported."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from server import metrics


def _samples(registry: CollectorRegistry) -> set[str]:
    lines = generate_latest(registry).decode().splitlines()
    return {line for line in lines if line and not line.startswith("#") and "_created" not in line}


def test_the_tally_exports_the_counter_and_histogram_it_replaces():
    tally_registry, reference = CollectorRegistry(), CollectorRegistry()
    tally = metrics.StatementTally()
    tally_registry.register(tally)
    counter = Counter("nyala_statements", "x", ["kind"], registry=reference)
    histogram = Histogram(
        "nyala_statement_duration_seconds", "x", ["kind"],
        buckets=metrics.LATENCY_BUCKETS_S, registry=reference,
    )  # fmt: skip
    for kind, count, seconds in [
        ("SELECT", 1, 0.0005),  # on a bound: that bucket, as prometheus counts it
        ("SELECT", 1, 0.00051),
        ("INSERT", 3, 61.0),  # past the last bound: +Inf only
        ("INSERT", 1, 0.0),
    ]:
        if count == 1:  # a statement's end: counted with its latency, under one lock
            tally.observe(kind, seconds, completed=True)
        else:
            tally.count(kind, count)
            tally.observe(kind, seconds)
        counter.labels(kind).inc(count)
        histogram.labels(kind).observe(seconds)
    assert _samples(tally_registry) == _samples(reference)
