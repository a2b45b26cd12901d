"""Catalog: create, drop and look up tables by name; allocate table, column and tablet IDs."""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence

import numpy as np

from catalog.constraints import CheckConstraint
from catalog.indexes import IndexInfo, index_schema
from catalog.partition import Partition, PartitionSchema, RangeBounds
from catalog.rekey import rekeyed
from catalog.sequences import SequenceCounters, SequenceInfo
from catalog.store import FORMAT_VERSION, CatalogStore
from catalog.table import TableId, TableInfo
from catalog.views import ViewInfo, dependents
from storage.data_type import INT64, ColumnId, DataType, TabletId
from storage.engine import StorageEngine
from storage.errors import (
    DependentObjectsStillExist,
    DuplicateTable,
    FeatureNotSupported,
    InvalidObjectDefinition,
    ObjectNotInPrerequisiteState,
    UndefinedObject,
    UndefinedTable,
)
from storage.schema import ColumnSchema, Schema

log = logging.getLogger(__name__)

HIDDEN_KEY = "auto_incrementing_id"
_NAME_LIMIT = 63


@dataclasses.dataclass(frozen=True, slots=True)
class SerialSpec:
    """A SERIAL or IDENTITY column as declared: the catalog names and creates its sequence."""

    column: str
    type_name: str
    identity: str = ""
    start: int = 1
    increment: int = 1


class Catalog:
    """The set of tables, kept in step with the storage engine's tablets.

    Every change is written to the catalog document before it is acknowledged.
    Creating a table makes its tablets durable first and names them in the
    document second; dropping does the reverse.  A crash between the two steps
    leaves only tablets no table names, which ``open`` removes.
    """

    def __init__(
        self,
        engine: StorageEngine,
        store: CatalogStore,
        counters: SequenceCounters | None = None,
    ) -> None:
        self._engine = engine
        self._store = store
        self._counters = counters if counters is not None else SequenceCounters(None)
        self._lock = threading.Lock()
        doc = store.load()
        self._tables: dict[str, TableInfo] = {
            t.name: t
            for t in (TableInfo.from_json(d) for d in doc["tables"])
        }
        self._views: dict[str, ViewInfo] = {
            v.name: v for v in (ViewInfo.from_json(d) for d in doc.get("views") or ())
        }
        self._next_table_id = int(doc["next_table_id"])
        self._next_tablet_id = int(doc["next_tablet_id"])
        self._remove_orphan_tablets()
        self._align_tablet_schemas()

    def _remove_orphan_tablets(self) -> None:
        named = {tid for t in self._tables.values() for tid in t.tablet_ids}
        named.update(i.tablet_id for t in self._tables.values() for i in t.indexes)
        for tablet_id in self._engine.tablet_ids():
            self._next_tablet_id = max(self._next_tablet_id, tablet_id + 1)
            if tablet_id not in named:
                log.warning("removing tablet %d that no table names (interrupted DDL)", tablet_id)
                self._engine.drop_tablet(tablet_id)

    def _save(self) -> None:
        self._store.save(
            {
                "version": FORMAT_VERSION,
                "next_table_id": self._next_table_id,
                "next_tablet_id": self._next_tablet_id,
                "tables": [t.to_json() for t in self._tables.values()],
                **({"views": [v.to_json() for v in self._views.values()]} if self._views else {}),
            }
        )

    def get_table(self, name: str, *, position: int | None = None) -> TableInfo:
        """Return the table called ``name`` or raise UndefinedTable (42P01)."""
        table = self._tables.get(name)
        if table is None:
            raise UndefinedTable(f'relation "{name}" does not exist', position=position)
        return table

    def find_table(self, name: str) -> TableInfo | None:
        return self._tables.get(name)

    def find_sequence(self, name: str) -> tuple[TableInfo, SequenceInfo] | None:
        """The table owning the sequence called ``name``, and the sequence."""
        for table in self._tables.values():
            for info in table.sequences:
                if info.name == name:
                    return table, info
        return None

    def get_sequence(self, name: str) -> tuple[TableInfo, SequenceInfo]:
        found = self.find_sequence(name)
        if found is None:
            raise UndefinedTable(f'relation "{name}" does not exist')
        return found

    def nextval(self, name: str, count: int = 1) -> np.ndarray:
        """The next ``count`` values of a sequence; never handed out again."""
        table, info = self.get_sequence(name)
        return self._counters.take(table.counter_key(info), info, count)

    def setval(self, name: str, value: int, is_called: bool = True) -> None:
        table, info = self.get_sequence(name)
        self._counters.set(table.counter_key(info), info, value, is_called)

    def restart_sequences(self, table: TableInfo) -> None:
        """Start a table's sequences over (TRUNCATE ... RESTART IDENTITY)."""
        self._counters.restart([table.counter_key(i) for i in table.sequences])

    def _relation_names(self) -> set[str]:
        names = set(self._tables) | set(self._views)
        names.update(i.name for t in self._tables.values() for i in t.sequences)
        names.update(i.name for t in self._tables.values() for i in t.indexes)
        return names

    def _sequence_name(self, table: str, column: str, taken: set[str]) -> str:
        """PostgreSQL's choice: ``<table>_<column>_seq``, then with 1, 2 ... appended."""
        base = f"{table}_{column}"[: _NAME_LIMIT - 4] + "_seq"
        name, n = base, 0
        while name in taken:
            n += 1
            name = f"{base[: _NAME_LIMIT - len(str(n))]}{n}"
        taken.add(name)
        return name

    def tables(self) -> list[TableInfo]:
        return sorted(self._tables.values(), key=lambda t: t.table_id)

    @property
    def engine(self) -> StorageEngine:
        """The storage engine whose tablets this catalog's tables own (system views read it)."""
        return self._engine

    def create_table(
        self,
        name: str,
        columns: Sequence[tuple[str, DataType, bool, str | None]],
        key: Sequence[str],
        partitioning: Callable[[Schema], tuple[PartitionSchema, list[RangeBounds]]] | None = None,
        storage: dict[str, tuple[str, str]] | None = None,
        serials: Sequence[SerialSpec] = (),
        checks: Sequence[CheckConstraint] = (),
    ) -> TableInfo:
        """Create a table from (name, type, nullable, default SQL) columns in declared order.

        Column IDs follow the declared order; the storage schema puts the ``key``
        columns first, in key order, and makes them NOT NULL.  An empty ``key``
        gives the table the hidden auto-increment key (see TableInfo).
        ``partitioning`` turns the schema into a PartitionSchema and its initial
        ranges; the table gets one tablet per bucket combination and range.
        ``storage`` maps column names to their (encoding, compression) as
        declared.  Each of ``serials`` gets a sequence named as PostgreSQL names
        it, which becomes the column's default.
        """
        with self._lock:
            taken = self._relation_names()
            if name in taken:
                raise DuplicateTable(f'relation "{name}" already exists')
            columns = list(columns)
            shown = len(columns)
            if not key:
                columns.append((HIDDEN_KEY, INT64, False, None))
                key = [HIDDEN_KEY]
                serials = [*serials, SerialSpec(HIDDEN_KEY, "bigint")]
            ids = {col_name: i for i, (col_name, *_rest) in enumerate(columns)}
            sequences = tuple(
                SequenceInfo.for_type(
                    self._sequence_name(name, spec.column, taken), ids[spec.column],
                    spec.type_name, identity=spec.identity, start=spec.start,
                    min_value=min(1, spec.start), increment=spec.increment,
                    hidden=spec.column == HIDDEN_KEY and ids[spec.column] >= shown,
                )
                for spec in serials
            )  # fmt: skip
            defaults = {info.column_id: info.default_sql for info in sequences}
            declared = [
                ColumnSchema(
                    ColumnId(i), col_name, col_type, nullable and col_name not in key,
                    defaults.get(i, default),
                    *(storage or {}).get(col_name, ("AUTO_ENCODING", "DEFAULT_COMPRESSION")),
                )
                for i, (col_name, col_type, nullable, default) in enumerate(columns)
            ]  # fmt: skip
            by_name = {c.name: c for c in declared}
            key_columns = [by_name[k] for k in key]
            schema = Schema(
                tuple(key_columns + [c for c in declared if c.name not in key]), len(key)
            )
            partition_schema: PartitionSchema | None = None
            ranges: list[RangeBounds] = []
            if partitioning is not None:
                partition_schema, ranges = partitioning(schema)
            partitions = self._new_partitions(partition_schema, ranges)
            table = TableInfo(
                table_id=TableId(self._next_table_id),
                name=name,
                schema=schema,
                tablet_ids=tuple(p.tablet_id for p in partitions),
                next_column_id=len(columns),
                column_order=tuple(c.id for c in declared[:shown]),
                partition_schema=partition_schema,
                partitions=tuple(partitions) if partition_schema is not None else (),
                column_storage=tuple(
                    (by_name[n].id, enc, comp) for n, (enc, comp) in (storage or {}).items()
                ),
                sequences=sequences,
                checks=tuple(checks),
            )
            self._next_table_id += 1
            for partition in partitions:
                self._engine.create_tablet(partition.tablet_id, schema)
            self._tables[name] = table
            self._save()
            return table

    def _new_partitions(
        self,
        partitioning: PartitionSchema | None,
        ranges: Sequence[RangeBounds | tuple[RangeBounds, str | None]],
    ) -> list[Partition]:
        """One partition (with a fresh tablet ID) per bucket combination and range."""
        combos = partitioning.bucket_combinations() if partitioning is not None else [()]
        named: list[tuple[RangeBounds | None, str | None]] = [
            r if isinstance(r, tuple) else (r, None) for r in ranges
        ]
        if partitioning is None or not partitioning.is_ranged:
            named = [(None, None)]
        partitions = []
        for bounds, range_name in named:
            for combo in combos:
                tablet_id = TabletId(self._next_tablet_id)
                self._next_tablet_id += 1
                partitions.append(Partition(tablet_id, combo, bounds, range_name))
        return partitions

    def alter_ranges(
        self,
        name: str,
        add: Sequence[tuple[RangeBounds, str | None]],
        drop: Sequence[RangeBounds],
    ) -> TableInfo:
        """Add and drop whole ranges of a range-partitioned table in one catalog change.

        Dropped ranges must exist exactly; added ones must not overlap the ranges
        that remain (42P17).  New tablets are created before the catalog names
        them; dropped ones are removed after it stops naming them.
        """
        with self._lock:
            table = self.get_table(name)
            partitioning = table.partition_schema
            if partitioning is None or not partitioning.is_ranged:
                raise FeatureNotSupported(f'table "{name}" is not range partitioned')
            ranges = {p.range for p in table.partitions}
            for bounds in drop:
                if bounds not in ranges:
                    raise UndefinedObject(f"no range partition {bounds.describe()} in {name}")
            kept = [p for p in table.partitions if p.range not in set(drop)]
            remaining = {p.range for p in kept}
            for bounds, range_name in add:
                for other in remaining:
                    if other is not None and other.overlaps(bounds.lower, bounds.upper):
                        what = f'partition "{range_name}"' if range_name else "range partition"
                        raise InvalidObjectDefinition(
                            f"{what} {bounds.describe()} would overlap {other.describe()}"
                        )
                remaining.add(bounds)
            added = self._new_partitions(partitioning, add)
            for partition in added:
                self._engine.create_tablet(partition.tablet_id, table.schema)
            partitions = tuple(kept + added)
            new = dataclasses.replace(
                table, partitions=partitions, tablet_ids=tuple(p.tablet_id for p in partitions)
            )
            self._tables[name] = new
            self._save()
            for partition in table.partitions:
                if partition.range in set(drop):
                    self._engine.drop_tablet(partition.tablet_id)
            return new

    def replace_table(self, old: TableInfo, new: TableInfo) -> TableInfo:
        """Make ``new`` (same table ID and tablets, possibly renamed) the table's definition:
        its tablets take the new schema first, then the catalog names it; ``open`` brings
        tablets back in line with the catalog if a crash came in between."""
        with self._lock:
            if self._tables.get(old.name) is not old:
                raise ObjectNotInPrerequisiteState(
                    f'relation "{old.name}" was changed by another statement; try again'
                )
            if new.name != old.name and new.name in self._relation_names():
                raise DuplicateTable(f'relation "{new.name}" already exists')
            for tablet_id in new.tablet_ids:
                self._engine.alter_tablet(tablet_id, new.schema)
            del self._tables[old.name]
            self._tables[new.name] = new
            self._save()
            return new

    def rekey_table(
        self,
        old: TableInfo,
        key: Sequence[str],
        key_name: str,
        copy_rows: Callable[[TableInfo], None],
    ) -> TableInfo:
        """Rewrite a table with the hidden key into new tablets keyed by ``key`` (ADD PRIMARY
        KEY); see ``rewrite_table``."""
        return self.rewrite_table(
            old, lambda tablet_id: rekeyed(old, key, (tablet_id,), key_name), copy_rows
        )

    def rewrite_table(
        self,
        old: TableInfo,
        define: Callable[[TabletId], TableInfo],
        copy_rows: Callable[[TableInfo], None],
    ) -> TableInfo:
        """Replace an unpartitioned table by ``define(new tablet)``, whose tablet
        ``copy_rows`` fills and commits; only then does the catalog name it and drop the old
        tablets, so a failure or a crash at any point leaves the old table as it was
        (``open`` removes tablets no table names)."""
        if old.partition_schema is not None:
            raise FeatureNotSupported("rewriting a partitioned table is not supported")
        with self._lock:
            tablet_id = TabletId(self._next_tablet_id)
            new = define(tablet_id)
            self._next_tablet_id += 1
            self._engine.create_tablet(tablet_id, new.schema)
        try:
            copy_rows(new)
            with self._lock:
                if self._tables.get(old.name) is not old:
                    raise ObjectNotInPrerequisiteState(
                        f'relation "{old.name}" was changed by another statement; try again'
                    )
                del self._tables[old.name]
                self._tables[new.name] = new
                self._save()
        except BaseException:
            self._engine.drop_tablet(tablet_id)
            raise
        for dropped in old.tablet_ids:
            self._engine.drop_tablet(dropped)
        return new

    def _align_tablet_schemas(self) -> None:
        for table in self._tables.values():
            for tablet_id in table.tablet_ids:
                if self._engine.has_tablet(tablet_id):
                    self._engine.alter_tablet(tablet_id, table.schema)

    def partition_owner(self, partition_name: str) -> TableInfo | None:
        """The table that has a range partition called ``partition_name``."""
        for table in self._tables.values():
            if any(p.name == partition_name for p in table.partitions):
                return table
        return None

    def detach_partition(self, name: str, partition_name: str) -> TableInfo:
        """Make a named range partition a table of its own, keeping its rows (DETACH)."""
        with self._lock:
            table = self.get_table(name)
            moving = [p for p in table.partitions if p.name == partition_name]
            if not moving:
                raise UndefinedTable(f'relation "{partition_name}" is not a partition of "{name}"')
            if partition_name in self._tables:
                raise DuplicateTable(f'relation "{partition_name}" already exists')
            if len(moving) != 1:
                raise FeatureNotSupported("detaching a hash-partitioned range is not supported")
            kept = tuple(p for p in table.partitions if p.name != partition_name)
            self._tables[name] = dataclasses.replace(
                table, partitions=kept, tablet_ids=tuple(p.tablet_id for p in kept)
            )
            detached = TableInfo(
                table_id=TableId(self._next_table_id),
                name=partition_name,
                schema=table.schema,
                tablet_ids=(moving[0].tablet_id,),
                next_column_id=table.next_column_id,
                column_order=table.column_order,
            )
            self._next_table_id += 1
            self._tables[partition_name] = detached
            self._save()
            return detached

    # -- views ------------------------------------------------------------------------------

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
        with self._lock:
            old = self._views.get(name)
            if old is None and name in self._relation_names():
                raise DuplicateTable(f'relation "{name}" already exists')
            if old is not None and not replace:
                raise DuplicateTable(f'relation "{name}" already exists')
            if old is not None:
                view_id = old.view_id
            else:
                view_id = self._next_table_id
                self._next_table_id += 1
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
            self._views = {v.name: rewrite(v) for v in self._views.values()}
            self._save()

    def drop_table(self, name: str, *, cascade: bool = False) -> TableInfo:
        with self._lock:
            table = self.get_table(name)
            for view in self._check_dependents(f"table {name}", name, cascade):
                del self._views[view]
            del self._tables[name]
            self._save()
            for tablet_id in (*table.tablet_ids, *(i.tablet_id for i in table.indexes)):
                self._engine.drop_tablet(tablet_id)
            self._counters.drop([table.counter_key(i) for i in table.sequences])
            return table

    # -- indexes ----------------------------------------------------------------------------

    def find_index(self, name: str) -> tuple[TableInfo, IndexInfo] | None:
        """The table that has an index called ``name``, and the index."""
        for table in self._tables.values():
            index = table.index_named(name)
            if index is not None:
                return table, index
        return None

    def create_index(
        self, table: TableInfo, define: Callable[[int, TabletId], IndexInfo]
    ) -> tuple[TableInfo, IndexInfo]:
        """Add ``define(index ID, new tablet ID)`` to ``table``: its (empty) tablet is made
        durable before the catalog names it, so writes from now on keep it in step; the
        caller then fills it with the entries of the rows already there (``drop_index`` on
        failure)."""
        with self._lock:
            if self._tables.get(table.name) is not table:
                raise ObjectNotInPrerequisiteState(
                    f'relation "{table.name}" was changed by another statement; try again'
                )
            tablet_id = TabletId(self._next_tablet_id)
            index = define(self._next_table_id, tablet_id)
            if index.name in self._relation_names():
                raise DuplicateTable(f'relation "{index.name}" already exists')
            self._next_tablet_id += 1
            self._next_table_id += 1
            self._engine.create_tablet(tablet_id, index_schema(table.schema, index))
            new = dataclasses.replace(table, indexes=(*table.indexes, index))
            self._tables[table.name] = new
            self._save()
            return new, index

    def drop_index(self, name: str) -> TableInfo:
        """Remove an index: the catalog stops naming it, then its tablet goes."""
        with self._lock:
            found = self.find_index(name)
            if found is None:
                raise UndefinedObject(f'index "{name}" does not exist')
            table, index = found
            new = dataclasses.replace(
                table, indexes=tuple(i for i in table.indexes if i.name != name)
            )
            self._tables[table.name] = new
            self._save()
        self._engine.drop_tablet(index.tablet_id)
        return new

    def rename_index(self, name: str, new_name: str) -> TableInfo:
        with self._lock:
            found = self.find_index(name)
            if found is None:
                raise UndefinedTable(f'relation "{name}" does not exist')
            if new_name in self._relation_names():
                raise DuplicateTable(f'relation "{new_name}" already exists')
            table, index = found
            new = dataclasses.replace(
                table,
                indexes=tuple(i.renamed(new_name) if i is index else i for i in table.indexes),
            )
            self._tables[table.name] = new
            self._save()
            return new
