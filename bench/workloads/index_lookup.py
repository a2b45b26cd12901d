"""A lookup by an indexed non-key column, against the whole-table scan it replaces.

``indexed_lookup`` has N rows (1M at scale 1) keyed by ``id``, with a unique ``code``
(``id`` times a prime, mod a larger prime) and a secondary index on ``code``.  The
same prepared ``select id, payload from indexed_lookup where code = $1`` runs for
random codes with the index and, as ``code + 0 = $1`` (which no index serves), by
scanning; each must return exactly one row.  The figure that matters is nyala's
ratio of the two, beside PostgreSQL's.  Timing starts once each system has done
its work after the load: PostgreSQL's ``vacuum analyze`` and checkpoint, nyala's
checkpoint and then its background flushes and compactions (``nyala_maintenance``
runs no op and scores none worth running), so neither is measured while it is
still reorganising the rows just loaded.
"""

from __future__ import annotations

import logging
from typing import Any

from bench.context import Context
from bench.measure import NYALA, POSTGRES, stopwatch
from tests.support.maintenance import wait_for_quiet_maintenance

log = logging.getLogger(__name__)

_PRIME = 1_000_003
_MULTIPLIER = 7919
_QUIET_TIMEOUT_S = 600.0
WORKLOAD = "lookup by indexed non-key column"


def index_lookup(ctx: Context) -> None:
    rows = ctx.rows(1_000_000, minimum=100)
    _create(ctx, rows)
    ids = [int(i) for i in ctx.rng.integers(1, rows + 1, size=200)]
    codes = [(i * _MULTIPLIER) % _PRIME for i in ids]
    forms = {
        "index": "select id, payload from indexed_lookup where code = %s",
        "scan": "select id, payload from indexed_lookup where code + 0 = %s",
    }
    for form, sql in forms.items():
        fig = ctx.figures.figure(
            WORKLOAD, f"{form}: median latency", "ms", higher_is_better=False,
            note=f"{rows:,} rows; {sql.replace('%s', '$1')}, prepared",
        )  # fmt: skip
        for _ in range(ctx.repeats):
            for system in (NYALA, POSTGRES):
                fig.add(system, _median_ms(ctx, system, sql, codes, ids, form == "scan"))


def _create(ctx: Context, rows: int) -> None:
    for system in (NYALA, POSTGRES):
        with ctx.systems.connect(system) as conn:
            conn.execute("drop table if exists indexed_lookup")
            conn.execute(
                "create table indexed_lookup (id bigint primary key, code bigint, payload text)"
            )
            conn.execute(
                f"insert into indexed_lookup select i, (i * {_MULTIPLIER}) % {_PRIME}, 'p' || i "
                f"from generate_series(1::bigint, {rows}::bigint) as g(i)"
            )
            conn.execute("create index indexed_lookup_code on indexed_lookup (code)")
            if system == POSTGRES:
                conn.execute("vacuum analyze indexed_lookup")
            conn.execute("checkpoint")
            if system == NYALA:
                waited = wait_for_quiet_maintenance(conn, _QUIET_TIMEOUT_S)
                rowsets = conn.execute(
                    "select count(*) from nyala_rowsets "
                    "where table_name = 'indexed_lookup' and kind = 'DiskRowSet'"
                ).fetchone()
                log.info("nyala's maintenance settled after %.1f s; the table has %s DiskRowSets",
                         waited, rowsets[0] if rowsets else "?")  # fmt: skip


def _median_ms(
    ctx: Context, system: str, sql: str, codes: list[int], ids: list[int], scan: bool
) -> float:
    """Median milliseconds of the lookups done within ``ctx.op_seconds`` (at least three)."""
    samples: list[float] = []
    with ctx.systems.connect(system) as conn, conn.cursor() as cur:
        for code, expected in zip(codes, ids, strict=True):
            with stopwatch() as elapsed:
                found: list[Any] = cur.execute(sql, [code], prepare=True).fetchall()
            samples.append(elapsed() * 1000)
            if [r[0] for r in found] != [expected]:
                raise AssertionError(f"{system}: {sql!r} with {code} returned {found}")
            if len(samples) >= 3 and sum(samples) / 1000 > ctx.op_seconds / (3 if scan else 1):
                break
    samples.sort()
    return samples[len(samples) // 2]
