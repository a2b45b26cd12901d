"""RowLockMode's conflicts are PostgreSQL's table (docs: "Conflicting Row-Level Locks")."""

from __future__ import annotations

import pytest

from storage.row_lock_mode import RowLockMode as M

# PostgreSQL 15 docs, table 13.3: X marks a conflict.
PG_TABLE = {
    M.KEY_SHARE: {M.UPDATE},
    M.SHARE: {M.NO_KEY_UPDATE, M.UPDATE},
    M.NO_KEY_UPDATE: {M.SHARE, M.NO_KEY_UPDATE, M.UPDATE},
    M.UPDATE: {M.KEY_SHARE, M.SHARE, M.NO_KEY_UPDATE, M.UPDATE},
}


@pytest.mark.parametrize("held", list(M))
def test_conflicts_are_postgresqls(held: M) -> None:
    assert {m for m in M if held.conflicts_with(m)} == PG_TABLE[held]
    assert all(held.conflicts_with(m) == m.conflicts_with(held) for m in M)
