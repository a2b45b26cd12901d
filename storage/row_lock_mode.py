"""RowLockMode: PostgreSQL's four row-lock strengths and which pairs of them conflict.

A foreign-key check takes FOR KEY SHARE on the parent row, so it only stops a
writer that deletes the row or changes a key column (FOR UPDATE); an UPDATE
that changes no key column takes FOR NO KEY UPDATE and goes ahead beside it.
Each mode conflicts with a superset of what a weaker one conflicts with, so a
transaction holding several modes on a row holds the strongest.
"""

from __future__ import annotations

import enum


class RowLockMode(enum.IntEnum):
    """A row lock's strength, weakest first (PostgreSQL's LockTupleMode)."""

    KEY_SHARE = 0
    SHARE = 1
    NO_KEY_UPDATE = 2
    UPDATE = 3

    def conflicts_with(self, other: RowLockMode) -> bool:
        """Whether two transactions cannot hold ``self`` and ``other`` on one row at once
        (PostgreSQL's table: KEY SHARE meets only UPDATE, SHARE meets both updates, NO KEY
        UPDATE meets all but KEY SHARE, UPDATE meets everything)."""
        return int(self) + int(other) >= 3
