"""CheckedPlans: a plan's access check is skipped only in the state it passed in."""

from __future__ import annotations

import pytest

from sql.session.prepared_plan import CheckedPlans
from storage.errors import InsufficientPrivilege


class _Store:
    """Stands for a role or privilege store: equal only to itself."""


def test_a_check_runs_again_when_any_part_of_the_state_changes():
    checked, runs = CheckedPlans(), []
    plan, other_plan = object(), object()
    store = _Store()
    state = (7, "alice", store, 3)
    checked.check(plan, state, lambda: runs.append("first"))
    checked.check(plan, (7, "alice", store, 3), lambda: runs.append("same state"))
    assert runs == ["first"]
    for changed in ((8, "alice", store, 3), (7, "bob", store, 3), (7, "alice", _Store(), 3),
                    (7, "alice", store, 4)):  # fmt: skip
        checked.check(plan, changed, lambda: runs.append("changed"))
        checked.check(plan, state, lambda: runs.append("back"))
    assert runs == ["first"] + ["changed", "back"] * 4
    checked.check(other_plan, state, lambda: runs.append("other plan"))
    assert runs[-1] == "other plan"


def test_a_failed_check_is_not_remembered():
    checked, plan, state = CheckedPlans(), object(), (1, "alice")

    def deny() -> None:
        raise InsufficientPrivilege("permission denied for table t")

    for _ in range(2):
        with pytest.raises(InsufficientPrivilege):
            checked.check(plan, state, deny)


def test_it_keeps_a_bounded_number_of_plans():
    checked, runs = CheckedPlans(entries=2), []
    plans = [object() for _ in range(3)]
    for plan in plans:
        checked.check(plan, (1,), lambda: runs.append(1))
    checked.check(plans[0], (1,), lambda: runs.append(0))  # evicted: checked again
    assert runs == [1, 1, 1, 0]
