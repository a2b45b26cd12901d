"""The batch probe of a write: where each key of a batch lives and what state its row is in.

A write of a few keys probes them one by one (``Tablet._probe``: the MemRowSets' maps,
then each DiskRowSet by bounds, bloom filter and key index).  A batch finds its keys
in the DiskRowSets a rowset at a time instead: bounds by bisecting the sorted keys, the
bloom filter as numpy over hashes computed once, then the key index for the few keys
that pass, and the rows found in one rowset are probed together
(``DiskRowSet.probe_many``).  Either way each key gets exactly the probe, location
and conflict answer ``_probe`` and ``_changed_after`` give it alone.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator

import numpy as np

from storage.mvcc import TxnState
from storage.row_change import Row
from storage.tablet.bloom import key_hashes
from storage.tablet.diskrowset import DiskRowSet
from storage.tablet.memrowset import MemRowSet, Probe
from storage.timestamp import Timestamp

BATCH_PROBE_MIN = 8
"""Fewer keys than this probe one at a time: numpy per rowset costs more than it saves."""

Location = tuple[DiskRowSet, int]
Holder = Callable[[bytes], MemRowSet | None]
"""The MemRowSet (live or frozen) holding a key, if one does."""
ProbeOne = Callable[[bytes, TxnState], tuple[Probe, Location | None]]
ChangedAfter = Callable[[bytes, Location | None, Timestamp], bool]


def probe_many(
    rowsets: list[DiskRowSet], keys: list[bytes], txn: TxnState, holder: Holder, probe: ProbeOne
) -> Iterator[tuple[Probe, Location | None]]:
    """``probe`` of each key in turn, a batch's DiskRowSet keys found a rowset at a time."""
    if len(keys) < BATCH_PROBE_MIN or not rowsets:
        for key in keys:
            yield probe(key, txn)
        return
    holders = [holder(key) for key in keys]
    order = sorted((i for i, h in enumerate(holders) if h is None), key=keys.__getitem__)
    located = locate_sorted(rowsets, [keys[i] for i in order])
    locations = dict(zip(order, located, strict=True))
    for index, key in enumerate(keys):
        location = locations.get(index)
        found = holders[index]
        if found is not None:
            yield found.probe(key, txn), None
        elif location is None:
            yield Probe(None, False), None
        else:
            yield location[0].probe(location[1], txn), location


def probe_batch(
    rowsets: list[DiskRowSet],
    keys: list[bytes],
    txn: TxnState,
    conflict_ts: Timestamp | None,
    holder: Holder,
    probe: ProbeOne,
    changed_after: ChangedAfter,
) -> tuple[list[Probe], list[Location | None], list[bool] | None]:
    """``probe`` and, with ``conflict_ts``, ``changed_after`` of each key.  A batch's keys
    in DiskRowSets are found a rowset at a time (``locate_sorted``) and probed together
    per rowset (``DiskRowSet.probe_many``)."""
    if len(keys) < BATCH_PROBE_MIN or not rowsets:
        probes, locations = [], []
        for key in keys:
            one, location = probe(key, txn)
            probes.append(one)
            locations.append(location)
        if conflict_ts is None:
            return probes, locations, None
        changed = [
            changed_after(key, location, conflict_ts)
            for key, location in zip(keys, locations, strict=True)
        ]
        return probes, locations, changed
    holders = [holder(key) for key in keys]
    order = sorted((i for i, h in enumerate(holders) if h is None), key=keys.__getitem__)
    located = locate_sorted(rowsets, [keys[i] for i in order])
    probe_list: list[Probe | None] = [None] * len(keys)
    location_list: list[Location | None] = [None] * len(keys)
    changed_list = None if conflict_ts is None else [False] * len(keys)
    by_rowset: dict[int, tuple[DiskRowSet, list[int], list[int]]] = {}
    for index, location in zip(order, located, strict=True):
        if location is None:
            probe_list[index] = Probe(None, False)
            continue
        location_list[index] = location
        entry = by_rowset.setdefault(id(location[0]), (location[0], [], []))
        entry[1].append(index)
        entry[2].append(location[1])
    ts = None if conflict_ts is None else int(conflict_ts)
    for rowset, indexes, rowids in by_rowset.values():
        found, found_changed = rowset.probe_many(np.array(rowids, dtype=np.int64), txn, ts)
        for index, one in zip(indexes, found, strict=True):
            probe_list[index] = one
        if changed_list is not None and found_changed is not None:
            for index, is_changed in zip(indexes, found_changed.tolist(), strict=True):
                changed_list[index] = is_changed
    for index, found_in in enumerate(holders):
        if found_in is not None:
            key = keys[index]
            probe_list[index] = found_in.probe(key, txn)
            if changed_list is not None:
                changed_list[index] = found_in.changed_after(key, conflict_ts)  # type: ignore[arg-type]
    return probe_list, location_list, changed_list  # type: ignore[return-value]


def locate_sorted(rowsets: list[DiskRowSet], keys: list[bytes]) -> list[Location | None]:
    """The DiskRowSet and rowid of each of ``keys`` (ascending), or None where no rowset
    holds it."""
    out: list[Location | None] = [None] * len(keys)
    h1, h2 = key_hashes(keys)
    unfound = np.ones(len(keys), dtype=bool)
    for rowset in rowsets:
        lo = bisect.bisect_left(keys, rowset.min_key)
        hi = bisect.bisect_right(keys, rowset.max_key)
        if lo >= hi:
            continue
        maybe = unfound[lo:hi] & rowset.bloom.may_contain_hashed(h1[lo:hi], h2[lo:hi])
        candidates = (np.flatnonzero(maybe) + lo).tolist()
        rowids = rowset.key_index.lookup_sorted([keys[i] for i in candidates])
        for index, rowid in zip(candidates, rowids, strict=True):
            if rowid is not None:
                out[index] = (rowset, rowid)
                unfound[index] = False
    return out


def pending_appends(
    locations: list[Location | None], skip: set[int]
) -> dict[int, tuple[DiskRowSet, list[int], list[Row]]] | None:
    """An empty map of DeltaMemStore appends to gather per rowset for a batch whose
    DiskRowSet rows are all distinct; None (append row by row, each judged again) for a
    single row or one naming a row twice, whose second write must see the first."""
    if len(locations) < BATCH_PROBE_MIN:
        return None
    rows = [(id(loc[0]), loc[1]) for i, loc in enumerate(locations) if loc and i not in skip]
    return {} if len(set(rows)) == len(rows) else None
