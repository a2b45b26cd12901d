"""``python -m bench``: run the workloads against nyala, PostgreSQL 15 and DuckDB; report."""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench import datasets, log_progress, report
from bench.context import Context
from bench.measure import NYALA, Figures
from bench.systems import Systems
from bench.workloads import WORKLOADS

log = logging.getLogger("bench")

REPO_ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    log_progress()
    chosen = args.only.split(",") if args.only else list(WORKLOADS)
    unknown = [name for name in chosen if name not in WORKLOADS]
    if unknown:
        raise SystemExit(f"unknown workloads {unknown}; choose from {list(WORKLOADS)}")
    started = time.monotonic()
    figures = Figures()
    with Systems(args.workdir) as systems:
        with systems.connect(NYALA) as conn:
            load_method = datasets.detect_load_method(conn)
        log.info("bulk loads use %s", load_method.value)
        ctx = Context(
            systems=systems, figures=figures, scale=args.scale, repeats=args.repeats,
            mixed_seconds=args.mixed_seconds, op_seconds=args.op_seconds, load_method=load_method,
            rng=np.random.default_rng(args.seed),
        )  # fmt: skip
        for name in chosen:
            log.info("workload %s", name)
            with _timer(name):
                WORKLOADS[name](ctx)
        described = systems.describe()
    facts = _facts(args, load_method, described, time.monotonic() - started)
    stem = f"{facts['date']}-{facts['commit']}"
    out = Path(args.out)
    report.write_json(out / f"{stem}.json", report.to_json(figures, facts))
    title = (
        f"nyala {facts['commit']} vs PostgreSQL {described['postgres']['version']} and DuckDB "
        f"{described['duckdb']['version']}, scale {args.scale:g}, {os.cpu_count()} cores"
    )
    report.chart(figures, out / f"{stem}.png", title)
    section = _section(figures, facts, out / f"{stem}.png")
    print(section)
    if args.readme:
        report.update_readme(REPO_ROOT / "README.md", section)
    log.info("wrote %s.json and %s.png in %s", stem, stem, out)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0, help="size factor (1: 2M-row scans)")
    parser.add_argument("--repeats", type=int, default=3, help="repeats per figure (median)")
    parser.add_argument("--mixed-seconds", type=float, default=20.0, help="mixed workload time")
    parser.add_argument(
        "--op-seconds",
        type=float,
        default=5.0,
        help="time cap per repeat of a row-at-a-time workload",
    )
    parser.add_argument("--only", default="", help=f"comma-separated subset of {list(WORKLOADS)}")
    parser.add_argument("--out", default=str(REPO_ROOT / "bench" / "results"))
    parser.add_argument("--workdir", type=Path, default=None, help="keep data here (kept)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--readme", action="store_true", help="write the table into README.md")
    return parser


class _timer:
    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        self.start = time.monotonic()

    def __exit__(self, *exc_info: object) -> None:
        log.info("workload %s took %.1f s", self.name, time.monotonic() - self.start)


def _facts(
    args: argparse.Namespace,
    load_method: datasets.LoadMethod,
    described: dict[str, object],
    seconds: float,
) -> dict[str, object]:
    commit = _git("rev-parse", "--short", "HEAD") or "unknown"
    if _git("status", "--porcelain", "--untracked-files=no"):
        commit += "-dirty"
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "commit": commit,
        "command": "python -m bench " + shlex.join(sys.argv[1:]),
        "scale": args.scale,
        "repeats": args.repeats,
        "mixed_seconds": args.mixed_seconds,
        "op_seconds": args.op_seconds,
        "load_method": load_method.value,
        "seconds": round(seconds, 1),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "systems": described,
    }


def _git(*args: str) -> str:
    try:
        return subprocess.run(
            ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def _section(figures: Figures, facts: dict[str, object], chart: Path) -> str:
    systems = facts["systems"]
    assert isinstance(systems, dict)
    settings = ", ".join(f"{k}={v}" for k, v in systems["postgres"]["settings"].items())
    try:
        chart_ref = chart.relative_to(REPO_ROOT)
    except ValueError:
        chart_ref = chart
    return "\n".join(
        [
            f"Measured {facts['date']} at commit `{facts['commit']}` on {facts['machine']['cpus']}"  # type: ignore[index]
            f" cores with `{facts['command']}` ({facts['seconds']} s; load average at the end"
            f" {facts['machine']['load_average_at_end'][1]} over 5 min).",  # type: ignore[index]
            f"Bulk loads used {facts['load_method']}. Cells are medians of {facts['repeats']}"
            " repeats [min-max]; ratios are nyala's median over the other's (✓: nyala better).",
            "",
            f"- nyala: {systems['nyala']['version']}, fsync on",
            f"- PostgreSQL {systems['postgres']['version']}; settings not at their defaults: "
            f"{settings}",
            f"- DuckDB {systems['duckdb']['version']} in-process, on its own database file",
            "",
            report.table(figures),
            "",
            f"![nyala relative to PostgreSQL and DuckDB]({chart_ref})",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
