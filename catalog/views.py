"""Views: a name for a stored query, and the relations it reads (its dependencies).

The query is kept as PostgreSQL SQL text; the SQL layer expands a view where
a query names it.  ``relations`` are the tables and views the query reads:
dropping one of them fails with 2BP01 unless CASCADE drops the view too, as
PostgreSQL's pg_depend makes it.  ``columns`` are the output names and the
(type OID, typmod) of each, for the catalogs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from catalog.table import FIRST_USER_OID


@dataclass(frozen=True, slots=True)
class ViewInfo:
    view_id: int
    name: str
    query: str
    columns: tuple[tuple[str, int, int], ...]
    relations: tuple[str, ...]

    @property
    def oid(self) -> int:
        """pg_class.oid: views and tables draw their IDs from one counter."""
        return FIRST_USER_OID + self.view_id

    def to_json(self) -> dict[str, object]:
        return {
            "view_id": self.view_id,
            "name": self.name,
            "query": self.query,
            "columns": [list(c) for c in self.columns],
            "relations": list(self.relations),
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ViewInfo:
        return cls(
            int(doc["view_id"]),
            str(doc["name"]),
            str(doc["query"]),
            tuple((str(n), int(o), int(m)) for n, o, m in doc["columns"]),
            tuple(str(r) for r in doc["relations"]),
        )


def dependents(views: Mapping[str, ViewInfo], name: str) -> list[str]:
    """The views that read ``name``, directly or through other views, nearest first."""
    found: list[str] = []
    pending = [name]
    while pending:
        current = pending.pop(0)
        for view in views.values():
            if current in view.relations and view.name not in found:
                found.append(view.name)
                pending.append(view.name)
    return found
