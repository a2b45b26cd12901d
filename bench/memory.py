"""Resident memory of a nyala server loading a large table through COPY, and after CHECKPOINT.

The bench ``metrics`` table is generated in chunks and copied in with psycopg
(COPY FROM STDIN, text format); the server's VmRSS is read from /proc after
every chunk, then after CHECKPOINT (and a count, which reads every rowset).
Issue 4's goal is a 10-million-row table under 1 GB after CHECKPOINT.

    python -m bench.memory --rows 10000000 [--out bench/results/memory.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psycopg

from bench import datasets
from tests.support.servers import NyalaServer

CHUNK_ROWS = 500_000


@dataclass(slots=True)
class MemoryRun:
    rows: int
    load_seconds: float = 0.0
    peak_rss_mb: int = 0
    rss_after_checkpoint_mb: int = 0
    rss_after_count_mb: int = 0
    samples: list[tuple[int, float, int]] = field(default_factory=list)
    """(rows loaded, seconds, RSS MB) after each chunk."""


def rss_mb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def run(rows: int, workdir: Path, log: bool = True) -> MemoryRun:
    result = MemoryRun(rows)
    with NyalaServer(workdir / "nyala-data") as server:
        pid = server.pid
        assert pid is not None, "a started server has a pid"
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            conn.execute(datasets.METRICS_DDL.format(name="metrics"))
            started = time.perf_counter()
            for start in range(0, rows, CHUNK_ROWS):
                count = min(CHUNK_ROWS, rows - start)
                table = datasets.metrics(count, seed=start, time_offset=start * 10_000)
                with conn.cursor().copy("copy metrics from stdin") as copy:
                    for chunk in datasets.copy_text(table):
                        copy.write(chunk)
                sample = (start + count, round(time.perf_counter() - started, 1), rss_mb(pid))
                result.samples.append(sample)
                result.peak_rss_mb = max(result.peak_rss_mb, sample[2])
                if log:
                    print(
                        f"{sample[0]:>12,} rows {sample[1]:8.1f} s  RSS {sample[2]} MB", flush=True
                    )
            result.load_seconds = round(time.perf_counter() - started, 1)
            conn.execute("checkpoint")
            result.rss_after_checkpoint_mb = rss_mb(pid)
            (loaded,) = conn.execute("select count(*) from metrics").fetchone()  # type: ignore[misc]
            if loaded != rows:
                raise AssertionError(f"loaded {loaded} rows, expected {rows}")
            result.rss_after_count_mb = rss_mb(pid)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        result = run(args.rows, Path(workdir))
    print(
        f"{args.rows:,} rows loaded in {result.load_seconds} s "
        f"({args.rows / max(result.load_seconds, 1e-9):,.0f} rows/s); RSS peak "
        f"{result.peak_rss_mb} MB, after CHECKPOINT {result.rss_after_checkpoint_mb} MB, "
        f"after a full count {result.rss_after_count_mb} MB"
    )
    if args.out is not None:
        args.out.write_text(json.dumps(asdict(result), indent=2))


if __name__ == "__main__":
    main()
