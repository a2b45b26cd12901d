"""The catalog's views: create, drop and look them up, and the views that read a relation."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from catalog.catalog_base import CatalogBase
from catalog.views import ViewInfo, dependents
from storage.errors import DependentObjectsStillExist, DuplicateTable, UndefinedTable


class CatalogViews(CatalogBase):
    """Views, and the dependencies that make dropping what they read 2BP01."""

    def find_view(self, name: str) -> ViewInfo | None:
        return self._views.get(name)

    def views(self) -> list[ViewInfo]:
        return sorted(self._views.values(), key=lambda v: v.view_id)

    def create_view(
        self,
        name: str,
        query: str,
        columns: Sequence[tuple[str, int, int]],
        relations: Sequence[str],
        *,
        replace: bool = False,
    ) -> ViewInfo:
        """Create (or, with ``replace``, redefine) a view; its ID comes from the table IDs,
        so its OID is never another relation's."""
        self.lock_relations([name])
        with self._lock:
            old = self._views.get(name)
            if old is None and name in self._relation_names():
                raise DuplicateTable(f'relation "{name}" already exists')
            if old is not None and not replace:
                raise DuplicateTable(f'relation "{name}" already exists')
            if old is not None:
                view_id = old.view_id
            else:
                view_id = self._ids.table
                self._ids.table += 1
            view = ViewInfo(view_id, name, query, tuple(columns), tuple(relations))
            self._views[name] = view
            self._save()
            return view

    def dependent_views(self, name: str) -> list[str]:
        """The views that read relation ``name``, directly or through other views."""
        return dependents(self._views, name)

    def drop_view(self, name: str, *, cascade: bool = False) -> list[str]:
        """Drop a view (2BP01 if other views read it, unless ``cascade``); return the names
        dropped, the view's dependents first."""
        self.lock_relations([name, *dependents(self._views, name)])
        with self._lock:
            if name not in self._views:
                raise UndefinedTable(f'view "{name}" does not exist')
            dropped = self._check_dependents(f"view {name}", name, cascade)
            for view in [*dropped, name]:
                del self._views[view]
            self._save()
            return [*dropped, name]

    def _check_dependents(self, what: str, name: str, cascade: bool) -> list[str]:
        found = dependents(self._views, name)
        if found and not cascade:
            raise DependentObjectsStillExist(
                f"cannot drop {what} because other objects depend on it",
                detail="\n".join(f"view {v} depends on {name}" for v in found[:1]),
                hint="Use DROP ... CASCADE to drop the dependent objects too.",
            )
        return found

    def rename_in_views(self, rewrite: Callable[[ViewInfo], ViewInfo]) -> None:
        """Replace every view by ``rewrite(view)`` (a renamed relation it reads)."""
        with self._lock:
            for view in list(self._views.values()):
                rewritten = rewrite(view)
                if rewritten != view:
                    self._views[view.name] = rewritten
            self._save()
