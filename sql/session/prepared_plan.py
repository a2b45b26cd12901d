"""CheckedPlans: a prepared statement's access check, done once per state of the catalog,
role and privileges, not at every execution.

Whether the current role may run a plan depends on the plan and on that state
alone, never on parameter values, so a statement executed again and again
(a prepared point select, pgbench's script) need not walk its ACLs each
time.  The state is named by the catalog version (every DDL, GRANT, REVOKE,
SET ROLE and transaction end with DDL bumps it), the current user, and the
role and privilege stores the session reads through with their change
counters (a transaction's own forks, ROLLBACK TO SAVEPOINT included); any
change checks again.  Bounded, so a session preparing thousands of statements
keeps no more than ``ENTRIES`` of them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

ENTRIES = 256


class CheckedPlans:
    """The plans whose access check passed, each with the state it passed in."""

    def __init__(self, entries: int = ENTRIES) -> None:
        self._passed: OrderedDict[int, tuple[object, tuple[object, ...]]] = OrderedDict()
        self._capacity = entries

    def check(self, plan: object, state: tuple[object, ...], run: Callable[[], None]) -> None:
        """``run`` the check of ``plan`` unless it passed in ``state`` (a tuple of numbers,
        names and objects such as stores, whose ``==`` is identity); a check that raises is
        not remembered."""
        key = id(plan)
        entry = self._passed.get(key)
        if entry is not None and entry[0] is plan and entry[1] == state:
            return
        run()
        self._passed[key] = (plan, state)
        self._passed.move_to_end(key)
        while len(self._passed) > self._capacity:
            self._passed.popitem(last=False)
