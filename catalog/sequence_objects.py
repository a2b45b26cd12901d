"""Sequences as relations: standalone ones (CREATE SEQUENCE) and one way to find any by name.

A SERIAL or IDENTITY column's sequence lives in its table's ``TableInfo``; a
standalone sequence is a relation of its own in the catalog document, with an
ID from the table counter (so its OID is never another relation's) and,
after ``OWNED BY t.c``, the table and column it goes with (dropped with the
table, restarted by its TRUNCATE ... RESTART IDENTITY).  pg_dump writes every
SERIAL column as a standalone sequence owned by the column, and nyala keeps it
so: the dump restores as it was written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catalog.sequences import SequenceInfo, sequence_oid
from catalog.table import FIRST_USER_OID, TableInfo


@dataclass(frozen=True, slots=True)
class StandaloneSequence:
    """A sequence made by CREATE SEQUENCE; ``owned_by`` is (table ID, column ID) or None."""

    sequence_id: int
    info: SequenceInfo
    owned_by: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def oid(self) -> int:
        return FIRST_USER_OID + self.sequence_id

    @property
    def counter_key(self) -> str:
        """Its key in the counters file: ``s`` and the ID, never a table's ``t.c`` key."""
        return f"s{self.sequence_id}"

    def to_json(self) -> dict[str, object]:
        return {
            "sequence_id": self.sequence_id,
            "info": self.info.to_json(),
            **({"owned_by": list(self.owned_by)} if self.owned_by is not None else {}),
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> StandaloneSequence:
        owned = doc.get("owned_by")
        return cls(
            int(doc["sequence_id"]),
            SequenceInfo.from_json(doc["info"]),
            (int(owned[0]), int(owned[1])) if owned else None,
        )


@dataclass(frozen=True, slots=True)
class SequenceRef:
    """Any sequence found by name: its definition, OID, counter key, and the table whose
    column owns it (a SERIAL/IDENTITY column's table, or a standalone one's OWNED BY)."""

    info: SequenceInfo
    oid: int
    counter_key: str
    table: TableInfo | None
    column_id: int | None
    standalone: StandaloneSequence | None = None

    @classmethod
    def of_column(cls, table: TableInfo, info: SequenceInfo) -> SequenceRef:
        return cls(
            info, sequence_oid(table.table_id, info.column_id), table.counter_key(info),
            table, info.column_id,
        )  # fmt: skip

    @classmethod
    def of_standalone(cls, sequence: StandaloneSequence, table: TableInfo | None) -> SequenceRef:
        column = sequence.owned_by[1] if sequence.owned_by is not None and table else None
        return cls(sequence.info, sequence.oid, sequence.counter_key, table, column, sequence)

    @property
    def owner_oid(self) -> int:
        """The relation whose owner owns the sequence: its table's, or its own."""
        if self.standalone is None and self.table is not None:
            return self.table.oid
        return self.oid
