"""Table constraints beyond the primary key: CHECK constraints, named and numbered per table.

A CHECK constraint is kept as PostgreSQL SQL over the table's column names
(renames rewrite it, see sql/ddl), with whether existing rows were checked:
``NOT VALID`` skips that until ``VALIDATE CONSTRAINT``; new rows are always
checked.  ``number`` never recurs within a table, so the constraint's OID
stays the same while it exists.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

NAME_LIMIT = 63


@dataclass(frozen=True, slots=True)
class CheckConstraint:
    """``CONSTRAINT name CHECK (expression)``; ``columns`` are the names it reads."""

    name: str
    expression: str
    columns: tuple[str, ...]
    number: int
    validated: bool = True

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "expression": self.expression,
            "columns": list(self.columns),
            "number": self.number,
            "validated": self.validated,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> CheckConstraint:
        return cls(
            str(doc["name"]),
            str(doc["expression"]),
            tuple(str(c) for c in doc["columns"]),
            int(doc["number"]),
            bool(doc.get("validated", True)),
        )


def choose_name(table: str, column: str | None, kind: str, taken: Iterable[str]) -> str:
    """PostgreSQL's ChooseConstraintName: ``<table>[_<column>]_<kind>``, cut to fit 63 bytes,
    then numbered 1, 2, ... until it is free."""
    used = set(taken)
    parts = [table, *([column] if column else [])]
    pass_number = 0
    while True:
        suffix = kind if pass_number == 0 else f"{kind}{pass_number}"
        room = NAME_LIMIT - len(suffix) - len(parts)
        cut = [p[: max(1, room // len(parts))] if len("_".join(parts)) > room else p for p in parts]
        name = "_".join([*cut, suffix])
        if name not in used:
            return name
        pass_number += 1
