import pytest

from storage.errors import DeadlockDetected
from storage.mvcc import TxnState
from storage.waits_for import WaitsForGraph


def test_a_wait_that_closes_a_cycle_is_refused():
    graph = WaitsForGraph()
    a, b, c = TxnState(), TxnState(), TxnState()
    graph.add_wait(a, b)
    graph.add_wait(b, c)
    with pytest.raises(DeadlockDetected) as info:
        graph.add_wait(c, a)
    assert info.value.sqlstate == "40P01"
    assert graph.waiting_for(c) is None
    assert graph.waiting_for(a) is b


def test_finished_holders_and_removed_waits_break_chains():
    graph = WaitsForGraph()
    a, b = TxnState(), TxnState()
    graph.add_wait(a, b)
    graph.remove_wait(a)
    graph.add_wait(b, a)
    graph.remove_wait(b)
    graph.add_wait(a, b)
    b.mark_committed(1)
    graph.add_wait(b, a)  # b is done, so a's stale edge to b is no cycle
