"""Overlay: a transaction's private changes to a name -> object map, read through to the shared one.

A transaction that runs DDL sees the committed catalog as it is now (as
PostgreSQL's catalog lookups do) plus its own uncommitted changes; nobody else
sees those until COMMIT applies them (``Overlay.apply``).
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Generic, TypeVar

V = TypeVar("V")

_GONE = object()
"""Marks a name the transaction dropped (or renamed away)."""


class Overlay(MutableMapping[str, V], Generic[V]):
    """``base`` (the shared map, which other commits keep changing) under ``changes``.

    ``seen`` keeps, for every name changed, the shared object it replaced, so a
    commit can tell whether another transaction changed that name meanwhile.
    """

    def __init__(self, base: MutableMapping[str, V]) -> None:
        self.base = base
        self.changes: dict[str, object] = {}
        self.seen: dict[str, V | None] = {}

    def __getitem__(self, name: str) -> V:
        if name in self.changes:
            value = self.changes[name]
            if value is _GONE:
                raise KeyError(name)
            return value  # type: ignore[return-value]  # only V or _GONE are stored
        return self.base[name]

    def _note(self, name: str) -> None:
        if name not in self.seen:
            self.seen[name] = self.base.get(name)

    def __setitem__(self, name: str, value: V) -> None:
        self._note(name)
        self.changes[name] = value

    def __delitem__(self, name: str) -> None:
        self[name]  # KeyError if absent, as a dict's del
        self._note(name)
        self.changes[name] = _GONE

    def __iter__(self) -> Iterator[str]:
        names = [n for n in list(self.base) if n not in self.changes]
        names += [n for n, v in self.changes.items() if v is not _GONE]
        return iter(names)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def mark(self) -> tuple[dict[str, object], dict[str, V | None]]:
        """The state to come back to at ROLLBACK TO SAVEPOINT."""
        return dict(self.changes), dict(self.seen)

    def restore(self, mark: tuple[dict[str, object], dict[str, V | None]]) -> None:
        self.changes, self.seen = dict(mark[0]), dict(mark[1])

    def conflicts(self) -> list[str]:
        """Names another transaction changed since this one first changed them."""
        return [n for n, old in self.seen.items() if self.base.get(n) is not old]

    def apply(self) -> None:
        """Make the changes the shared map's own (the caller holds the catalog's lock)."""
        for name, value in self.changes.items():
            if value is _GONE:
                self.base.pop(name, None)
            else:
                self.base[name] = value  # type: ignore[assignment]  # only V or _GONE
