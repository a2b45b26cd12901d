"""PlanCache: a session's recently planned statements, by their text, reused while the catalog
stays the same.

Planning (sqlglot parse, qualify and transpile, DuckDB describe) costs
milliseconds, often more than running a point query or a small aggregate.
Clients repeat the same text: dashboards and BI tools re-send their
queries, and drivers send an unnamed Parse for every execution until they
prepare.  A plan depends only on the text, the declared parameter types and
the catalog (its version changes with every DDL); the values that vary per
execution (parameters, now(), the snapshot) are bound when it runs, so a
compiled query or write may run again as a prepared statement's does.
(A time-travel read names its time as a literal, part of the text; whether
that time is still within the history kept is checked when it runs.)
Beside the plans it keeps each text's pg_stat_statements fingerprint, and
each simple Query's statements as split into tokens, which depend on the
text alone: a client repeating a Query (psql's ``\\d``, a driver without
prepare) costs no tokenizing either.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

P = TypeVar("P")
F = TypeVar("F")
S = TypeVar("S")

DEFAULT_ENTRIES = 128
SPLIT_TEXT_CHARS = 16_384
"""Longer Query strings (a bulk multi-row INSERT) are split again each time, not kept."""


class PlanCache(Generic[P]):
    """An LRU of plans keyed by (statement text, declared parameter types)."""

    def __init__(self, entries: int = DEFAULT_ENTRIES) -> None:
        self._entries: OrderedDict[tuple[str, tuple[int, ...]], tuple[int, P]] = OrderedDict()
        self._capacity = entries
        self._fingerprints: OrderedDict[str, object] = OrderedDict()
        self._splits: OrderedDict[str, object] = OrderedDict()
        self.hits = 0

    def fingerprint(self, text: str, make: Callable[[], F]) -> F:
        """The fingerprint of ``text``, made by ``make`` the first time it is asked for."""
        found = self._fingerprints.get(text)
        if found is None:
            found = self._fingerprints[text] = make()
            if len(self._fingerprints) > self._capacity:
                self._fingerprints.popitem(last=False)
        else:
            self._fingerprints.move_to_end(text)
        return found  # type: ignore[return-value]  # stored by this method from make()

    def split(self, sql: str, make: Callable[[], S]) -> S:
        """The statements of the Query ``sql``, made by ``make`` (which may raise, and then
        nothing is kept) the first time; the caller must not change what it is given."""
        found = self._splits.get(sql)
        if found is None:
            found = make()
            if len(sql) <= SPLIT_TEXT_CHARS:
                self._splits[sql] = found
                if len(self._splits) > self._capacity:
                    self._splits.popitem(last=False)
        else:
            self._splits.move_to_end(sql)
        return found  # type: ignore[return-value]  # stored by this method from make()

    def get(self, text: str, declared: Sequence[int], catalog_version: int) -> P | None:
        key = (text, tuple(declared))
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[0] != catalog_version:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry[1]

    def put(self, text: str, declared: Sequence[int], catalog_version: int, plan: P) -> None:
        key = (text, tuple(declared))
        self._entries[key] = (catalog_version, plan)
        self._entries.move_to_end(key)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)
