"""RowLockTable: several shared holders of a row, the strongest mode kept, finished ones ignored."""

from __future__ import annotations

from storage.mvcc import TxnState
from storage.row_lock_mode import RowLockMode as M
from storage.tablet.row_locks import RowLockTable


def test_shared_holders_block_only_conflicting_modes() -> None:
    table = RowLockTable()
    a, b, c = TxnState(), TxnState(), TxnState()
    table.add([b"k"], a, M.KEY_SHARE)
    table.add([b"k"], b, M.KEY_SHARE)
    assert table.conflicting(b"k", c, M.NO_KEY_UPDATE) is None
    assert table.conflicting(b"k", c, M.UPDATE) in (a, b)
    assert table.conflicting(b"k", a, M.UPDATE) is b  # its own lock never blocks a holder
    assert table.conflicting(b"other", c, M.UPDATE) is None


def test_the_strongest_mode_is_kept_and_finished_holders_are_ignored() -> None:
    table = RowLockTable()
    a, c = TxnState(), TxnState()
    table.add([b"k"], a, M.UPDATE)
    table.add([b"k"], a, M.KEY_SHARE)
    assert table.holds(b"k", a) is M.UPDATE
    assert table.conflicting(b"k", c, M.KEY_SHARE) is a
    a.mark_aborted()
    assert table.conflicting(b"k", c, M.KEY_SHARE) is None
    table.release([b"k"], a)
    assert not table and table.locked_keys() == 0
