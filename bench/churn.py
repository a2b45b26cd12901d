"""``python -m bench.churn``: changed data, round after round, on nyala and PostgreSQL 15.

Issue 14's churn workload.  A table ``churn(k bigint primary key, v bigint, s text)`` of
1M rows at ``--scale 1`` receives ``--rounds`` (20) rounds of changes: update 10% of the
rows, delete 2%, insert 2%.  Before the first round and after each one, both systems
record a full-table aggregate (best of 3), a prepared point select (median of 200 keys),
the change rate of the round, and bytes on disk; nyala adds its rowsets, delta files and
average rowset height (from ``nyala_rowsets``), PostgreSQL its dead tuples.  PostgreSQL
runs with autovacuum on (its default); nyala with its maintenance manager on (its
default).  Both are measured right after each round (what a client sees then); nyala is
measured again once its maintenance manager has gone quiet (``nyala_settled``, with
``settle_s``, how long that took).

Then the bench deletes 90% of the rows, waits ``--history-max-age`` seconds (nyala runs
with that ``history_max_age_s``) plus the maintenance manager going quiet, and compares
bytes on disk with what the live rows need (the same rows loaded into a fresh table and
flushed).  Results go to ``bench/results/<date>-<commit>-churn.json`` with a chart of the
figures over the rounds next to it (``.svg`` and ``.png``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from bench import log_progress
from bench.__main__ import _git
from bench.measure import NYALA, POSTGRES
from tests.support.servers import NyalaServer, PostgresServer

log = logging.getLogger("bench.churn")

REPO_ROOT = Path(__file__).resolve().parents[1]
SERVERS = (NYALA, POSTGRES)
SETTLED = "nyala_settled"
"""nyala measured again once its maintenance manager has gone quiet after the round."""
CREATE = "create table churn (k bigint primary key, v bigint, s text)"
INSERT_RANGE = (
    "insert into churn select g, g * 2, 'row ' || g::text from generate_series({lo}, {hi}) g"
)
POINT = "select k, v, s from churn where k = %s"
LOAD_CHUNK = 100_000
POINT_SAMPLES = 200


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    log_progress()
    rows = max(1_000, int(1_000_000 * args.scale))
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="nyala-churn-", dir=args.workdir))
    nyala = NyalaServer(
        workdir / "nyala",
        extra_args=("--history-max-age-s", str(args.history_max_age)),
    )
    postgres = PostgresServer({"shared_buffers": "1GB"})
    results: dict[str, Any] = {"rounds": [], "after_mass_delete": {}}
    try:
        nyala.start()
        postgres.start()
        conns = {
            NYALA: psycopg.connect(nyala.dsn, autocommit=True),
            POSTGRES: psycopg.connect(postgres.dsn, autocommit=True),
        }
        rng = np.random.default_rng(args.seed)
        for system, conn in conns.items():
            conn.execute(CREATE)
            for lo in range(0, rows, LOAD_CHUNK):
                conn.execute(INSERT_RANGE.format(lo=lo, hi=min(rows, lo + LOAD_CHUNK) - 1))
            conn.execute("checkpoint")
            if system == POSTGRES:
                conn.execute("vacuum analyze churn")
        _wait_quiet(conns[NYALA], 300)
        next_key = rows
        results["rounds"].append(_measure(conns, 0, {s: 0.0 for s in SERVERS}, rng, next_key))
        for r in range(1, args.rounds + 1):
            rates = {}
            for system, conn in conns.items():
                changed = 0
                t0 = time.perf_counter()
                changed += _rowcount(conn, f"update churn set v = v + 1 where k % 10 = {r % 10}")
                changed += _rowcount(
                    conn, f"delete from churn where k % 50 = {(r * 17) % 50} and k < {rows}"
                )
                changed += _rowcount(
                    conn, INSERT_RANGE.format(lo=next_key, hi=next_key + rows // 50 - 1)
                )
                rates[system] = changed / (time.perf_counter() - t0)
            next_key += rows // 50
            results["rounds"].append(_measure(conns, r, rates, rng, next_key))
        results["after_mass_delete"] = _mass_delete(conns, args.history_max_age, rows)
    finally:
        for c in locals().get("conns", {}).values():
            c.close()
        nyala.close()
        postgres.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    facts = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "commit": _git("rev-parse", "--short", "HEAD") or "unknown",
        "command": "python -m bench.churn " + " ".join(sys.argv[1:]),
        "scale": args.scale,
        "rows": rows,
        "history_max_age_s": args.history_max_age,
        "seconds": round(time.monotonic() - started, 1),
        "postgres_settings": "shared_buffers=1GB, autovacuum on (default)",
    }
    out = Path(args.out)
    stem = f"{facts['date']}-{facts['commit']}-churn"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps({**facts, **results}, indent=2) + "\n")
    chart(results, out / stem, f"churn, {rows:,} rows, commit {facts['commit']}")
    print(summary(results))
    log.info("wrote %s.json, .svg and .png in %s", stem, out)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.churn", description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0, help="size factor (1: 1M rows)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument(
        "--history-max-age", type=float, default=60.0, help="nyala's history_max_age_s"
    )
    parser.add_argument("--out", default=str(REPO_ROOT / "bench" / "results"))
    parser.add_argument("--workdir", default="/tmp", help="where nyala's data directory goes")
    parser.add_argument("--seed", type=int, default=42)
    return parser


def _rowcount(conn: psycopg.Connection[Any], sql: str) -> int:
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.rowcount


def _measure(
    conns: dict[str, psycopg.Connection[Any]],
    round_no: int,
    rates: dict[str, float],
    rng: np.random.Generator,
    next_key: int,
) -> dict[str, Any]:
    """Both systems right after the round, then nyala again once its maintenance settled."""
    keys = rng.integers(0, next_key, POINT_SAMPLES).tolist()
    out: dict[str, Any] = {"round": round_no}
    for system, conn in conns.items():
        out[system] = _figures(conn, system, keys, rates[system])
    if out[NYALA]["sum_v"] != out[POSTGRES]["sum_v"]:
        raise AssertionError(f"round {round_no}: the systems disagree: {out}")
    settle_s = _wait_quiet(conns[NYALA], 120)
    out[SETTLED] = _figures(conns[NYALA], NYALA, keys, rates[NYALA])
    out[SETTLED]["settle_s"] = settle_s
    log.info(
        "round %d: %s", round_no,
        {s: {k: round(v, 2) for k, v in out[s].items()} for s in (*SERVERS, SETTLED)},
    )  # fmt: skip
    return out


def _figures(
    conn: psycopg.Connection[Any], system: str, keys: list[int], rate: float
) -> dict[str, Any]:
    agg = []
    for _ in range(3):
        t0 = time.perf_counter()
        total = conn.execute("select count(*), sum(v) from churn").fetchone()
        agg.append(time.perf_counter() - t0)
    point = []
    with conn.cursor() as cur:
        for k in keys:
            t0 = time.perf_counter()
            cur.execute(POINT, (k,), prepare=True)
            cur.fetchall()
            point.append(time.perf_counter() - t0)
    figures: dict[str, Any] = {
        "aggregate_ms": min(agg) * 1000,
        "point_select_ms": statistics.median(point) * 1000,
        "change_rate_rows_per_s": rate,
        "live_rows": total[0],
        "sum_v": int(total[1] or 0),
        "bytes_on_disk": _bytes_on_disk(conn, system),
    }
    if system == NYALA:
        figures.update(_nyala_layout(conn))
    else:
        figures["dead_tuples"] = conn.execute(
            "select n_dead_tup from pg_stat_user_tables where relname = 'churn'"
        ).fetchone()[0]
    return figures


def _bytes_on_disk(conn: psycopg.Connection[Any], system: str) -> int:
    if system == NYALA:
        row = conn.execute(
            "select coalesce(sum(bytes_on_disk), 0) from nyala_tablets where table_name = %s",
            ("churn",),
        ).fetchone()
    else:
        row = conn.execute("select pg_total_relation_size('churn')").fetchone()
    return int(row[0])


def _nyala_layout(conn: psycopg.Connection[Any]) -> dict[str, Any]:
    """Rowsets, delta files and the average rowset height of the churn table's tablets."""
    rows = conn.execute(
        "select kind, min_key, max_key, redo_delta_files, undo_delta_files from nyala_rowsets "
        "where table_name = 'churn'"
    ).fetchall()
    disk = [r for r in rows if r[0] != "memrowset"]
    redo = sum(r[3] or 0 for r in disk)
    undo = sum(r[4] or 0 for r in disk)
    return {
        "rowsets": len(disk),
        "redo_delta_files": redo,
        "undo_delta_files": undo,
        "delta_files_per_rowset": (redo + undo) / max(1, len(disk)),
        "max_redo_files_in_a_rowset": max((r[3] or 0 for r in disk), default=0),
        "average_rowset_height": _average_height([(r[1], r[2]) for r in disk]),
    }


def _average_height(ranges: list[tuple[Any, Any]]) -> float:
    """Kudu's average rowset height: rowsets overlapping a key, averaged over the key space.

    The view prints encoded keys in hex; like the compaction policy, a key's place is its
    first eight bytes.  Each rowset spans [min, max]; the space is the union of those ranges.
    """
    spans = [(_place(lo), _place(hi)) for lo, hi in ranges if lo is not None and hi is not None]
    if not spans:
        return 0.0
    points = sorted({p for s in spans for p in s})
    covered = weighted = 0.0
    for a, b in zip(points, points[1:], strict=False):
        depth = sum(1 for lo, hi in spans if lo <= a and hi >= b)
        if depth:
            covered += b - a
            weighted += depth * (b - a)
    return weighted / covered if covered else 1.0


def _place(hex_key: str) -> int:
    return int(hex_key[:16].ljust(16, "0"), 16)


def _wait_quiet(conn: psycopg.Connection[Any], timeout_s: float) -> float:
    """Wait until nyala runs no maintenance op and scores none worth running, two polls in a
    row (or ``timeout_s`` passed); return seconds waited."""
    t0 = time.monotonic()
    quiet = 0
    while time.monotonic() - t0 < timeout_s and quiet < 2:
        running = conn.execute(
            "select count(*) from nyala_maintenance "
            "where state = 'running' or (state = 'registered' and score > 0)"
        ).fetchone()[0]
        quiet = quiet + 1 if running == 0 else 0
        time.sleep(1.0)
    return time.monotonic() - t0


def _mass_delete(
    conns: dict[str, psycopg.Connection[Any]], history_max_age: float, rows: int
) -> dict[str, Any]:
    """Delete 90% of the rows, wait past history_max_age, and compare with a fresh copy."""
    out: dict[str, Any] = {}
    for conn in conns.values():
        conn.execute("delete from churn where k % 10 <> 3")
        conn.execute("checkpoint")
    log.info("deleted 90%%; waiting %.0f s past history_max_age", history_max_age)
    time.sleep(history_max_age + 5)
    conn = conns[NYALA]
    conn.execute("checkpoint")
    waited = _wait_quiet(conn, 600)
    for system, conn in conns.items():
        conn.execute("create table churn_fresh (k bigint primary key, v bigint, s text)")
        conn.execute("insert into churn_fresh select k, v, s from churn")
        conn.execute("checkpoint")
        if system == POSTGRES:
            conn.execute("vacuum churn_fresh")
        fresh = (
            conn.execute(
                "select coalesce(sum(bytes_on_disk), 0) from nyala_tablets "
                "where table_name = 'churn_fresh'"
            ).fetchone()[0]
            if system == NYALA
            else conn.execute("select pg_total_relation_size('churn_fresh')").fetchone()[0]
        )
        live = conn.execute("select count(*) from churn").fetchone()[0]
        figures = {
            "live_rows": live,
            "bytes_on_disk": _bytes_on_disk(conn, system),
            "fresh_copy_bytes": int(fresh),
        }
        figures["ratio_to_fresh"] = figures["bytes_on_disk"] / max(1, figures["fresh_copy_bytes"])
        if system == NYALA:
            figures["maintenance_wait_s"] = round(waited, 1)
            figures.update(_nyala_layout(conn))
        out[system] = figures
    log.info("after the mass delete: %s", out)
    return out


def summary(results: dict[str, Any]) -> str:
    """The Done-when figures: round N against round 0, and the mass delete."""
    first, last = results["rounds"][0], results["rounds"][-1]
    lines = [f"after {last['round']} rounds (round {last['round']} / round 0):"]
    for system in SERVERS:
        a, b = first[system], last[system]
        lines.append(
            f"  {system}: aggregate {a['aggregate_ms']:.1f} -> {b['aggregate_ms']:.1f} ms "
            f"({b['aggregate_ms'] / a['aggregate_ms']:.2f}x), point select "
            f"{a['point_select_ms']:.2f} -> {b['point_select_ms']:.2f} ms "
            f"({b['point_select_ms'] / a['point_select_ms']:.2f}x), bytes "
            f"{a['bytes_on_disk']:,} -> {b['bytes_on_disk']:,}"
        )
    a, b = first[SETTLED], last[SETTLED]
    lines.append(
        f"  nyala, maintenance settled: aggregate {a['aggregate_ms']:.1f} -> "
        f"{b['aggregate_ms']:.1f} ms ({b['aggregate_ms'] / a['aggregate_ms']:.2f}x), point select "
        f"{a['point_select_ms']:.2f} -> {b['point_select_ms']:.2f} ms "
        f"({b['point_select_ms'] / a['point_select_ms']:.2f}x); settling took up to "
        f"{max(r[SETTLED]['settle_s'] for r in results['rounds']):.0f} s"
    )
    ny = [r[NYALA] for r in results["rounds"]] + [r[SETTLED] for r in results["rounds"]]
    lines.append(
        "  nyala layout over the rounds: rowsets max "
        f"{max(r['rowsets'] for r in ny)}, REDO files in one rowset max "
        f"{max(r['max_redo_files_in_a_rowset'] for r in ny)}, delta files per rowset max "
        f"{max(r['delta_files_per_rowset'] for r in ny):.2f}, average rowset height max "
        f"{max(r['average_rowset_height'] for r in ny):.2f}"
    )
    md = results["after_mass_delete"]
    for system in SERVERS:
        if system in md:
            m = md[system]
            lines.append(
                f"  after deleting 90% and waiting: {system} {m['bytes_on_disk']:,} bytes for "
                f"{m['live_rows']:,} live rows; a fresh copy takes {m['fresh_copy_bytes']:,} "
                f"({m['ratio_to_fresh']:.2f}x)"
            )
    return "\n".join(lines)


def chart(results: dict[str, Any], stem: Path, title: str) -> None:
    """Draw the figures over the rounds, one panel each, as ``stem``.svg and .png."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rounds = [r["round"] for r in results["rounds"]]
    colours = {NYALA: "#2a9d8f", POSTGRES: "#336791", SETTLED: "#e76f51"}
    panels = [
        ("aggregate_ms", "full-table aggregate (ms)"),
        ("point_select_ms", "prepared point select, median (ms)"),
        ("change_rate_rows_per_s", "change rate (rows/s)"),
        ("bytes_on_disk", "bytes on disk (MB)"),
    ]
    figure, axes = plt.subplots(3, 2, figsize=(11, 10))
    flat = axes.flatten()
    for ax, (key, label) in zip(flat, panels, strict=False):
        for system in (*SERVERS, SETTLED):
            values = [r[system][key] for r in results["rounds"]]
            if key == "bytes_on_disk":
                values = [v / 1e6 for v in values]
            ax.plot(rounds, values, marker="o", markersize=3, color=colours[system], label=system,
                    linestyle="--" if system == SETTLED else "-")  # fmt: skip
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("round", fontsize=8)
        ax.legend(fontsize=7)
    ny = [r[NYALA] for r in results["rounds"]]
    ax = flat[4]
    ax.plot(rounds, [r["rowsets"] for r in ny], marker="o", markersize=3, label="rowsets")
    ax.plot(
        rounds, [r["redo_delta_files"] for r in ny], marker="s", markersize=3, label="REDO files"
    )
    ax.plot(
        rounds, [r["undo_delta_files"] for r in ny], marker="^", markersize=3, label="UNDO files"
    )
    ax.set_title("nyala: rowsets and delta files", fontsize=9)
    ax.legend(fontsize=7)
    ax = flat[5]
    ax.plot(rounds, [r["average_rowset_height"] for r in ny], marker="o", markersize=3,
            label="average rowset height")  # fmt: skip
    ax.plot(rounds, [r["delta_files_per_rowset"] for r in ny], marker="s", markersize=3,
            label="delta files per rowset")  # fmt: skip
    ax.plot(rounds, [r[POSTGRES]["dead_tuples"] / 1e5 for r in results["rounds"]],
            marker="^", markersize=3, color=colours[POSTGRES],
            label="PostgreSQL dead tuples (100k)")  # fmt: skip
    ax.set_title("layout", fontsize=9)
    ax.legend(fontsize=7)
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    for suffix in (".svg", ".png"):
        figure.savefig(stem.with_suffix(suffix), dpi=100)
    plt.close(figure)


if __name__ == "__main__":
    sys.exit(main())
