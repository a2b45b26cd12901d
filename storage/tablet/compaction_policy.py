"""Which DiskRowSets a merging compaction should take: Kudu's budgeted compaction policy.

Each rowset spans an interval of the key space (its min and max key mapped
onto [0, 1] by their leading bytes past the prefix every rowset's bounds share:
an index tablet's keys all open with the same escaped bytes, and by their first
eight bytes alone every rowset would be a point, never worth merging).  The tablet's **average rowset height**
is the total width of the rowsets over the width of their union: how many
rowsets a random key lookup or range scan must consult.  Merging rowsets that
overlap lowers it by the sum of their widths minus the width of their union.

For every interval [a, b] bounded by rowset endpoints, a 0/1 knapsack picks,
among the rowsets inside it, those whose total size fits the budget (MiB) and
whose total width is largest; its quality is that total minus (b - a).  Small
rowsets get a bonus, so that the many small flushes a busy tablet makes are
merged even where they barely overlap (Kudu's small-rowset trade-off).  The
best set wins, if its quality is worth a compaction.  The small-rowset bonus
counts only while the merged rowset stays small: merging rowsets that do not
overlap lowers no lookup's cost, so a big rowset is not rewritten whole to
absorb a small one beside it (the churn bench's inserts did exactly that).

Beyond Kudu (KUDU-1625): a rowset whose rows are mostly deleted is worth
rewriting on its own; its quality is the share of its rows it would drop.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

SMALL_ROWSET_MB = 8.0
"""Rowsets below this size count as small and get a bonus of up to ``SMALL_BONUS``, as long
as what they merge into stays below it too."""
SMALL_BONUS = 0.2
MIN_QUALITY = 0.01
MOSTLY_DELETED = 0.5


@dataclass(frozen=True, slots=True)
class RowSetInfo:
    """What the policy knows of one DiskRowSet."""

    rowset_id: int
    min_key: bytes
    max_key: bytes
    size_bytes: int
    rows: int
    deleted_rows: int


@dataclass(frozen=True, slots=True)
class Choice:
    """The rowsets to merge, the quality of merging them, and why."""

    rowset_ids: list[int]
    quality: float
    reason: str


def key_position(key: bytes) -> float:
    """A key's place in [0, 1): its first eight bytes as a fraction."""
    return int.from_bytes(key[:8].ljust(8, b"\0"), "big") / 2.0**64


def intervals(infos: list[RowSetInfo]) -> list[tuple[float, float]]:
    """Each rowset's [lo, hi] in the key space, stretched so the tablet spans [0, 1]."""
    if not infos:
        return []
    shared = len(os.path.commonprefix([k for r in infos for k in (r.min_key, r.max_key)]))
    raw = [(key_position(r.min_key[shared:]), key_position(r.max_key[shared:])) for r in infos]
    lo = min(a for a, _ in raw)
    hi = max(b for _, b in raw)
    span = (hi - lo) or 1.0
    return [((a - lo) / span, (b - lo) / span) for a, b in raw]


def average_height(spans: list[tuple[float, float]]) -> float:
    """Total width over the width of the union (1.0: no rowsets overlap)."""
    if not spans:
        return 0.0
    total = sum(b - a for a, b in spans)
    union = 0.0
    end = -1.0
    for a, b in sorted(spans):
        if a > end:
            union += b - a
            end = b
        elif b > end:
            union += b - end
            end = b
    if union <= 0:
        return float(len(spans))
    return total / union


def _knapsack(values: list[float], weights: list[int], budget: int) -> list[int]:
    """Indices of the items of largest total value within ``budget`` (0/1 knapsack)."""
    best = np.zeros(budget + 1)
    keep = np.zeros((len(values), budget + 1), bool)
    for i, (value, weight) in enumerate(zip(values, weights, strict=True)):
        if weight > budget:
            continue
        candidate = best[: budget + 1 - weight] + value
        better = candidate > best[weight:]
        keep[i, weight:] = better
        best[weight:] = np.where(better, candidate, best[weight:])
    chosen = []
    capacity = budget
    for i in range(len(values) - 1, -1, -1):
        if keep[i, capacity]:
            chosen.append(i)
            capacity -= weights[i]
    return chosen[::-1]


def choose(infos: list[RowSetInfo], budget_mb: int) -> Choice | None:
    """The best merging compaction of ``infos`` within ``budget_mb``, or None."""
    if not infos:
        return None
    spans = intervals(infos)
    sizes_mb = [r.size_bytes / (1 << 20) for r in infos]
    weights = [max(1, int(np.ceil(s))) for s in sizes_mb]
    values = [
        (b - a) + (SMALL_BONUS * (1 - s / SMALL_ROWSET_MB) if s < SMALL_ROWSET_MB else 0.0)
        for (a, b), s in zip(spans, sizes_mb, strict=True)
    ]
    best: Choice | None = None
    ends = sorted({a for a, _ in spans})
    for start in ends:
        for end in sorted({b for _, b in spans if b >= start}):
            inside = [i for i, (a, b) in enumerate(spans) if a >= start and b <= end]
            if len(inside) < 2:
                continue
            picked = _knapsack([values[i] for i in inside], [weights[i] for i in inside], budget_mb)
            if len(picked) < 2:
                continue
            chosen = [inside[i] for i in picked]
            quality = sum(values[i] for i in chosen) - (end - start)
            if sum(sizes_mb[i] for i in chosen) >= SMALL_ROWSET_MB:
                quality = sum(spans[i][1] - spans[i][0] for i in chosen) - (end - start)
            if best is None or quality > best.quality:
                best = Choice(
                    [infos[i].rowset_id for i in chosen],
                    quality,
                    f"merging {len(chosen)} rowsets lowers the average height "
                    f"{average_height(spans):.2f} (quality {quality:.3f})",
                )
    for info in infos:
        share = info.deleted_rows / max(1, info.rows)
        if share >= MOSTLY_DELETED and (best is None or share > best.quality):
            best = Choice(
                [info.rowset_id], share, f"rowset {info.rowset_id} is {share:.0%} deleted"
            )
    if best is None or best.quality < MIN_QUALITY:
        return None
    return best
