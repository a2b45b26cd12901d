"""The Prometheus metrics ``/metrics`` serves: the server's and, per tablet, Kudu's tablet metrics.

Server metrics (connections, statements by kind, statement latency) are
counted as things happen, in this module's registry.  Tablet and maintenance
metrics are read from storage when scraped (``TabletCollector``), so they cost
nothing between scrapes.  A statement's kind is its command tag without the
row counts (``SELECT``, ``INSERT``, ``CREATE TABLE``); its latency runs from
the protocol message that started it to its last answer.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import threading
from collections.abc import Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from sql.session.tablet_status import TabletStatus
from storage.maintenance_manager import DURATION_BUCKETS_S, OpTotals

REGISTRY = CollectorRegistry()

CONNECTIONS = Gauge("nyala_connections", "client connections open now", registry=REGISTRY)
CONNECTIONS_TOTAL = Counter(
    "nyala_connections_accepted", "client connections accepted", registry=REGISTRY
)
STATEMENT_ERRORS = Counter(
    "nyala_statement_errors", "errors reported to clients, by SQLSTATE", ["sqlstate"],
    registry=REGISTRY,
)  # fmt: skip
LATENCY_BUCKETS_S = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1,
    2.5,
    10,
    60,
)


class StatementTally(Collector):
    """Statements completed and their latencies, by kind, in plain dicts read at scrape time.

    Every statement counts here, so this is on the per-statement path: one lock and a
    dict update, where prometheus_client's ``Counter.inc`` and ``Histogram.observe`` cost
    several microseconds of Python each.  Exported as the same metrics they were.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._latencies: dict[str, list[float]] = {}
        """Per kind: how many fell in each bucket (the last one +Inf), then their sum."""

    def count(self, kind: str, statements: int = 1) -> None:
        with self._lock:
            counts = self._counts
            counts[kind] = counts.get(kind, 0) + statements

    def observe(self, kind: str, seconds: float, completed: bool = False) -> None:
        """One statement's latency; ``completed``: count it too, under the same lock."""
        bucket = bisect.bisect_left(LATENCY_BUCKETS_S, seconds)
        with self._lock:
            if completed:
                counts = self._counts
                counts[kind] = counts.get(kind, 0) + 1
            latency = self._latencies.get(kind)
            if latency is None:
                latency = self._latencies[kind] = [0] * (len(LATENCY_BUCKETS_S) + 2)
            latency[bucket] += 1
            latency[-1] += seconds

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            counts = dict(self._counts)
            latencies = {kind: list(values) for kind, values in self._latencies.items()}
        statements = CounterMetricFamily(
            "nyala_statements", "statements completed, by command tag", labels=["kind"]
        )
        for kind, count in sorted(counts.items()):
            statements.add_metric([kind], count)
        durations = HistogramMetricFamily(
            "nyala_statement_duration_seconds",
            "time from a Query or Execute message to its last answer, by the kind of its last "
            "statement",
            labels=["kind"],
        )
        bounds = [str(float(bound)) for bound in LATENCY_BUCKETS_S] + ["+Inf"]
        for kind, values in sorted(latencies.items()):
            cumulative = list(itertools.accumulate(values[:-1]))
            durations.add_metric([kind], list(zip(bounds, cumulative, strict=True)), values[-1])
        yield statements
        yield durations


TALLY = StatementTally()
REGISTRY.register(TALLY)


@functools.lru_cache(maxsize=1024)
def statement_kind(tag: str) -> str:
    """``INSERT 0 5`` -> ``INSERT``; ``CREATE TABLE`` stays."""
    kind = _KINDS.get(tag)
    if kind is None:
        kind = " ".join(word for word in tag.split() if not word.isdigit()) or "EMPTY"
        if len(_KINDS) >= _KINDS_KEPT:
            _KINDS.clear()
        _KINDS[tag] = kind
    return kind


_KINDS: dict[str, str] = {}
"""Kinds by tag: the same few tags (``SELECT 1``, ``UPDATE 1``) end statement after statement."""
_KINDS_KEPT = 1024


@functools.cache
def statement_errors(sqlstate: str) -> Counter:
    return STATEMENT_ERRORS.labels(sqlstate)


class TabletCollector(Collector):
    """Reads each tablet's layout and the maintenance totals at scrape time."""

    def __init__(
        self,
        tablets: Callable[[], list[TabletStatus]],
        maintenance: Callable[[], dict[str, OpTotals]],
    ) -> None:
        self._tablets = tablets
        self._maintenance = maintenance

    def collect(self) -> Iterator[Metric]:
        labels = ["table", "tablet_id"]
        gauges = {
            name: GaugeMetricFamily(f"nyala_tablet_{name}", text, labels=labels)
            for name, text in (
                ("average_rowset_height", "rowsets a key lookup may consult, on average"),
                ("rowsets_on_disk", "DiskRowSets"),
                ("memrowset_size_bytes", "estimated bytes held by the MemRowSet"),
                ("on_disk_size_bytes", "bytes of the tablet's DiskRowSets"),
                ("live_rows", "rows not deleted in base data, plus the MemRowSet's"),
                ("redo_delta_files", "REDO delta files over all rowsets"),
                ("undo_delta_bytes", "bytes of UNDO history retained"),
                ("deleted_rows_retained", "deleted rows still stored in base data"),
                ("deleted_bytes_retained", "estimated bytes taken by deleted rows"),
            )
        }
        scans = CounterMetricFamily("nyala_tablet_scans", "scans run", labels=labels)
        lookups = CounterMetricFamily(
            "nyala_tablet_delta_file_lookups",
            "delta stores consulted by scans (per scan: divide by nyala_tablet_scans)",
            labels=labels,
        )
        for tablet in self._tablets():
            key = [tablet.table_name, str(tablet.tablet_id)]
            values = {
                "average_rowset_height": tablet.average_rowset_height,
                "rowsets_on_disk": len(tablet.rowsets),
                "memrowset_size_bytes": tablet.memrowset_bytes,
                "on_disk_size_bytes": tablet.bytes_on_disk,
                "live_rows": tablet.live_rows,
                "redo_delta_files": sum(r.redo_files for r in tablet.rowsets),
                "undo_delta_bytes": sum(r.undo_bytes for r in tablet.rowsets),
                "deleted_rows_retained": sum(r.deleted_rows for r in tablet.rowsets),
                "deleted_bytes_retained": sum(
                    r.bytes_on_disk * r.deleted_rows / max(1, r.rows) for r in tablet.rowsets
                ),
            }
            for name, value in values.items():
                gauges[name].add_metric(key, value)
            scans.add_metric(key, tablet.scans)
            lookups.add_metric(key, tablet.delta_lookups)
        yield from gauges.values()
        yield scans
        yield lookups
        yield from _maintenance_metrics(self._maintenance())


def _maintenance_metrics(totals: dict[str, OpTotals]) -> Iterable[Metric]:
    durations = HistogramMetricFamily(
        "nyala_maintenance_op_duration_seconds",
        "how long flushes and compactions took, by op kind",
        labels=["kind"],
    )
    failures = CounterMetricFamily(
        "nyala_maintenance_op_failures", "maintenance ops that failed", labels=["kind"]
    )
    read = CounterMetricFamily(
        "nyala_maintenance_read_bytes", "bytes maintenance ops read", labels=["kind"]
    )
    written = CounterMetricFamily(
        "nyala_maintenance_written_bytes", "bytes maintenance ops wrote", labels=["kind"]
    )
    for kind, t in sorted(totals.items()):
        cumulative, buckets = 0, []
        for bound, count in zip((*DURATION_BUCKETS_S, float("inf")), t.buckets, strict=True):
            cumulative += count
            buckets.append(("+Inf" if bound == float("inf") else str(bound), cumulative))
        durations.add_metric([kind], buckets, t.seconds)
        failures.add_metric([kind], t.failures)
        read.add_metric([kind], t.bytes_read)
        written.add_metric([kind], t.bytes_written)
    return (durations, failures, read, written)


def render() -> bytes:
    """Every metric in the Prometheus text format."""
    return generate_latest(REGISTRY)
