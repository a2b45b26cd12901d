"""Foreign keys: which columns of a table reference which key of which table, and what follows.

A foreign key lives on the referencing (child) table and names its parent by
table ID and both sides' columns by column ID, so renaming either table or any
of the columns leaves it intact.  ``parent_index`` is the parent's UNIQUE index
it references (its index ID), or None for the parent's primary key: dropping
that index is refused while the key references it.  Actions and the match type
use pg_constraint's one-letter codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storage.data_type import ColumnId

NO_ACTION, RESTRICT, CASCADE, SET_NULL, SET_DEFAULT = "a", "r", "c", "n", "d"
ACTION_WORDS = {
    NO_ACTION: "NO ACTION",
    RESTRICT: "RESTRICT",
    CASCADE: "CASCADE",
    SET_NULL: "SET NULL",
    SET_DEFAULT: "SET DEFAULT",
}
MATCH_SIMPLE, MATCH_FULL = "s", "f"


@dataclass(frozen=True, slots=True)
class ForeignKey:
    """``CONSTRAINT name FOREIGN KEY (columns) REFERENCES parent (parent_columns) ...``."""

    name: str
    columns: tuple[ColumnId, ...]
    parent_id: int
    parent_columns: tuple[ColumnId, ...]
    parent_index: int | None = None
    on_delete: str = NO_ACTION
    on_update: str = NO_ACTION
    match: str = MATCH_SIMPLE
    deferrable: bool = False
    deferred: bool = False
    validated: bool = True
    set_columns: tuple[ColumnId, ...] = ()
    """PostgreSQL 15's ``ON DELETE SET NULL (cols)``: the columns it sets; empty for all."""
    number: int = 0
    """Never recurs within the table, so the constraint's OID stays while it exists."""

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "columns": list(self.columns),
            "parent_id": self.parent_id,
            "parent_columns": list(self.parent_columns),
            "parent_index": self.parent_index,
            "on_delete": self.on_delete,
            "on_update": self.on_update,
            "match": self.match,
            "deferrable": self.deferrable,
            "deferred": self.deferred,
            "validated": self.validated,
            "set_columns": list(self.set_columns),
            "number": self.number,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ForeignKey:
        index = doc.get("parent_index")
        return cls(
            name=str(doc["name"]),
            columns=tuple(ColumnId(int(c)) for c in doc["columns"]),
            parent_id=int(doc["parent_id"]),
            parent_columns=tuple(ColumnId(int(c)) for c in doc["parent_columns"]),
            parent_index=None if index is None else int(index),
            on_delete=str(doc.get("on_delete", NO_ACTION)),
            on_update=str(doc.get("on_update", NO_ACTION)),
            match=str(doc.get("match", MATCH_SIMPLE)),
            deferrable=bool(doc.get("deferrable")),
            deferred=bool(doc.get("deferred")),
            validated=bool(doc.get("validated", True)),
            set_columns=tuple(ColumnId(int(c)) for c in doc.get("set_columns") or ()),
            number=int(doc.get("number", 0)),
        )
