"""nextval, currval, setval and lastval: PostgreSQL's sequence functions over the catalog.

DuckDB calls them as vectorised (Arrow) functions, so an INSERT ... SELECT or
a COPY of a million rows into a SERIAL column draws its values a block at a
time.  A query reaches them through the transpiler, which turns
``nextval('s')`` into ``nyf_nextval('s', <session id>)``: one DuckDB serves
every session, and the session id finds the session's own ``currval`` and
``lastval``, which PostgreSQL keeps per session.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog.catalog import Catalog
from sql.planner.sequence_calls import sequence_name
from storage.errors import (
    ObjectNotInPrerequisiteState,
    ReadOnlySqlTransaction,
)

_IDS = itertools.count(1)
_SESSIONS: weakref.WeakValueDictionary[int, SessionSequences] = weakref.WeakValueDictionary()
_LOCK = threading.Lock()


class SessionSequences:
    """One session's view of the sequences: draws values and remembers the last ones."""

    def __init__(self, catalog: Catalog, read_only: Callable[[], bool] = lambda: False) -> None:
        self.catalog = catalog
        self._read_only = read_only
        self._last: dict[str, int] = {}
        self._last_name: str | None = None
        self.check: Callable[[str, str], None] = lambda name, privileges: None
        """Raises 42501 unless the session may use the sequence ``name`` with one of the
        privilege letters given (U usage, r select, w update); the session sets it."""
        with _LOCK:
            self.session_id = next(_IDS)
            _SESSIONS[self.session_id] = self

    def discard(self) -> None:
        """DISCARD SEQUENCES: forget the values currval and lastval would give."""
        self._last.clear()
        self._last_name = None

    def _check_writable(self, function: str) -> None:
        """A sequence advance is a write: PostgreSQL refuses it in a read-only transaction."""
        if self._read_only():
            raise ReadOnlySqlTransaction(f"cannot execute {function}() in a read-only transaction")

    def nextval(self, name: str, count: int = 1) -> np.ndarray:
        """The next ``count`` values of ``name``.  A hidden key's sequence is no user's: its
        draws are covered by the INSERT's privilege and are never currval's or lastval's."""
        self._check_writable("nextval")
        name = sequence_name(name)
        ref = self.catalog.find_sequence(name)
        hidden = ref is not None and ref.info.hidden
        if not hidden:
            self.check(name, "Uw")
        values = self.catalog.nextval(name, count)
        if len(values) and not hidden:
            self._last[name] = int(values[-1])
            self._last_name = name
        return values

    def currval(self, name: str) -> int:
        name = sequence_name(name)
        self.catalog.get_sequence(name)
        self.check(name, "Ur")
        if name not in self._last:
            raise ObjectNotInPrerequisiteState(
                f'currval of sequence "{name}" is not yet defined in this session'
            )
        return self._last[name]

    def setval(self, name: str, value: int, is_called: bool = True) -> int:
        self._check_writable("setval")
        name = sequence_name(name)
        self.check(name, "w")
        self.catalog.setval(name, value, is_called)
        if is_called:
            self._last[name] = value
            self._last_name = name
        return value

    def lastval(self) -> int:
        if self._last_name is None:
            raise ObjectNotInPrerequisiteState("lastval is not yet defined in this session")
        self.check(self._last_name, "Ur")
        return self._last[self._last_name]


def _session(ids: pa.Array) -> SessionSequences:
    return _SESSIONS[ids[0].as_py()]


def _nextval(names: pa.Array, ids: pa.Array) -> pa.Array:
    if len(names) == 0:
        return pa.array([], pa.int64())
    session = _session(ids)
    if names.null_count == 0 and pc.all(pc.equal(names, names[0])).as_py():
        return pa.array(session.nextval(names[0].as_py(), len(names)))
    return pa.array(
        [None if n is None else int(session.nextval(n)[0]) for n in names.to_pylist()], pa.int64()
    )


def _currval(names: pa.Array, ids: pa.Array) -> pa.Array:
    session = _session(ids) if len(ids) else None
    return pa.array(
        [None if n is None else session.currval(n) for n in names.to_pylist()],  # type: ignore[union-attr]  # no rows, no call
        pa.int64(),
    )


def _setval(names: pa.Array, values: pa.Array, called: pa.Array, ids: pa.Array) -> pa.Array:
    session = _session(ids) if len(ids) else None
    out: list[Any] = []
    for name, value, is_called in zip(
        names.to_pylist(), values.to_pylist(), called.to_pylist(), strict=True
    ):
        if name is None or value is None or is_called is None:
            out.append(None)
        else:
            out.append(session.setval(name, value, is_called))  # type: ignore[union-attr]  # rows: a session
    return pa.array(out, pa.int64())


def _lastval(ids: pa.Array) -> pa.Array:
    session = _session(ids) if len(ids) else None
    return pa.array([session.lastval() for _ in range(len(ids))], pa.int64())  # type: ignore[union-attr]  # rows: a session


def register(duck: duckdb.DuckDBPyConnection) -> None:
    """Create the ``nyf_*`` sequence functions on the DuckDB that runs user queries."""
    options: dict[str, Any] = {"type": "arrow", "side_effects": True, "null_handling": "special"}
    duck.create_function("nyf_nextval", _nextval, ["VARCHAR", "BIGINT"], "BIGINT", **options)
    duck.create_function("nyf_currval", _currval, ["VARCHAR", "BIGINT"], "BIGINT", **options)
    duck.create_function(
        "nyf_setval", _setval, ["VARCHAR", "BIGINT", "BOOLEAN", "BIGINT"], "BIGINT", **options
    )
    duck.create_function("nyf_lastval", _lastval, ["BIGINT"], "BIGINT", **options)
