"""CatalogChanges: what one transaction's DDL did outside the catalog maps, to finish or undo.

The maps themselves are ``Overlay``s (catalog/overlay.py); this is the rest: the
tablets the transaction created (dropped again at ROLLBACK, and by ``open``
after a crash, since no committed catalog names them), the tablets it dropped
(removed only after COMMIT), the tablets whose schema it altered in place
(put back at ROLLBACK; ``open`` aligns them with the committed catalog after
a crash), the sequence counters to forget at COMMIT, the comments to set at
COMMIT, the relation names it locks, and its savepoints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from catalog.comments import Comments
from catalog.ddl_locks import LockWait
from storage.data_type import TabletId
from storage.schema import Schema


@dataclass(slots=True)
class SavepointMark:
    name: str
    tables: tuple[dict[str, object], dict[str, object]]
    views: tuple[dict[str, object], dict[str, object]]
    created: int
    dropped: int
    counters: int
    altered: dict[TabletId, Schema]
    comments: dict[tuple[int, int], str | None]
    sequences: tuple[dict[str, object], dict[str, object]] = ({}, {})


@dataclass(slots=True)
class CatalogChanges:
    """One transaction's DDL bookkeeping; ``owner`` is who holds its relation locks."""

    owner: object
    wait: LockWait
    created: list[TabletId] = field(default_factory=list)
    dropped: list[TabletId] = field(default_factory=list)
    altered: dict[TabletId, Schema] = field(default_factory=dict)
    """The schema each tablet had before the transaction first altered it."""
    counters: list[str] = field(default_factory=list)
    locks: list[str] = field(default_factory=list)
    savepoints: list[SavepointMark] = field(default_factory=list)
    ended: bool = False
    comments: dict[tuple[int, int], str | None] = field(default_factory=dict)
    """COMMENT ON text to set at COMMIT (None removes), by (table OID, attnum)."""
    comment_store: Comments | None = None

    def find_savepoint(self, name: str) -> int | None:
        for index in range(len(self.savepoints) - 1, -1, -1):
            if self.savepoints[index].name == name:
                return index
        return None
