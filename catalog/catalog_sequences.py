"""The catalog's sequences: look up, advance, create, alter and drop them by name."""

from __future__ import annotations

import numpy as np

from catalog.catalog_base import CatalogBase
from catalog.sequence_objects import SequenceRef, StandaloneSequence
from catalog.sequences import SequenceInfo
from catalog.table import TableInfo
from storage.errors import DuplicateTable, ObjectNotInPrerequisiteState, UndefinedTable

_NAME_LIMIT = 63


class CatalogSequences(CatalogBase):
    """Sequences, of columns (SERIAL, IDENTITY) and standalone (CREATE SEQUENCE)."""

    def find_sequence(self, name: str) -> SequenceRef | None:
        """The sequence called ``name``: a column's (with its table) or a standalone one."""
        standalone = self._sequences.get(name)
        if standalone is not None:
            return SequenceRef.of_standalone(standalone, self._owning_table(standalone))
        for table in self._tables.values():
            for info in table.sequences:
                if info.name == name:
                    return SequenceRef.of_column(table, info)
        return None

    def get_sequence(self, name: str) -> SequenceRef:
        found = self.find_sequence(name)
        if found is None:
            raise UndefinedTable(f'relation "{name}" does not exist')
        return found

    def nextval(self, name: str, count: int = 1) -> np.ndarray:
        """The next ``count`` values of a sequence; never handed out again."""
        ref = self.get_sequence(name)
        return self._counters.take(ref.counter_key, ref.info, count)

    def setval(self, name: str, value: int, is_called: bool = True) -> None:
        ref = self.get_sequence(name)
        self._counters.set(ref.counter_key, ref.info, value, is_called)

    def sequence_state(self, ref: SequenceRef) -> tuple[int, bool]:
        """The sequence's (last_value, is_called), as ``SELECT ... FROM s`` shows them."""
        return self._counters.state(ref.counter_key, ref.info)

    def sequence_state_of(self, name: str) -> tuple[int, bool] | None:
        """(last_value, is_called) of the sequence called ``name``, if there is one."""
        ref = self.find_sequence(name)
        return None if ref is None else self.sequence_state(ref)

    def restart_sequences(self, table: TableInfo) -> None:
        """Start a table's sequences over (TRUNCATE ... RESTART IDENTITY), those it owns
        by OWNED BY too."""
        keys = [table.counter_key(i) for i in table.sequences]
        keys += [q.counter_key for q in self._owned_sequences(table)]
        self._counters.restart(keys)

    def _owning_table(self, sequence: StandaloneSequence) -> TableInfo | None:
        if sequence.owned_by is None:
            return None
        return next((t for t in self._tables.values() if t.table_id == sequence.owned_by[0]), None)

    def _owned_sequences(self, table: TableInfo) -> list[StandaloneSequence]:
        return [
            q
            for q in self._sequences.values()
            if q.owned_by is not None and q.owned_by[0] == table.table_id
        ]

    def standalone_sequences(self) -> list[tuple[StandaloneSequence, TableInfo | None]]:
        """Every CREATE SEQUENCE sequence, with the table that owns it (if any)."""
        return [
            (q, self._owning_table(q))
            for q in sorted(self._sequences.values(), key=lambda q: q.sequence_id)
        ]

    def create_sequence(self, info: SequenceInfo) -> StandaloneSequence:
        self.lock_relations([info.name])
        with self._lock:
            if info.name in self._relation_names():
                raise DuplicateTable(f'relation "{info.name}" already exists')
            sequence = StandaloneSequence(self._ids.table, info)
            self._ids.table += 1
            self._sequences[info.name] = sequence
            self._save()
            return sequence

    def replace_sequence(self, old: StandaloneSequence, new: StandaloneSequence) -> None:
        """ALTER SEQUENCE: ``new`` (same ID, maybe renamed) is the sequence's definition."""
        self.lock_relations([old.name, new.name])
        with self._lock:
            if self._sequences.get(old.name) is not old:
                raise ObjectNotInPrerequisiteState(
                    f'relation "{old.name}" was changed by another statement; try again'
                )
            if new.name != old.name and new.name in self._relation_names():
                raise DuplicateTable(f'relation "{new.name}" already exists')
            del self._sequences[old.name]
            self._sequences[new.name] = new
            self._save()

    def drop_sequence(self, sequence: StandaloneSequence) -> None:
        self.lock_relations([sequence.name])
        with self._lock:
            del self._sequences[sequence.name]
            self._save()
            self._drop_counters([sequence.counter_key])

    def _sequence_name(self, table: str, column: str, taken: set[str]) -> str:
        """PostgreSQL's choice: ``<table>_<column>_seq``, then with 1, 2 ... appended."""
        base = f"{table}_{column}"[: _NAME_LIMIT - 4] + "_seq"
        name, n = base, 0
        while name in taken:
            n += 1
            name = f"{base[: _NAME_LIMIT - len(str(n))]}{n}"
        taken.add(name)
        return name
