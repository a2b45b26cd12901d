"""Catalog: create, drop and look up tables by name; allocate table, column and tablet IDs."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import logging
from collections.abc import Callable, MutableMapping, Sequence
from typing import Any

from catalog import logged_document
from catalog.catalog_changes import CatalogChanges, SavepointMark
from catalog.catalog_partitions import CatalogPartitions
from catalog.catalog_sequences import CatalogSequences
from catalog.catalog_views import CatalogViews
from catalog.comments import FILE_NAME as COMMENTS_FILE
from catalog.comments import Comments
from catalog.constraints import CheckConstraint
from catalog.ddl_locks import LockWait
from catalog.foreign_keys import ForeignKey
from catalog.index_merge import merge_new_indexes
from catalog.indexes import IndexInfo, index_schema
from catalog.overlay import Overlay
from catalog.partition import PartitionSchema, RangeBounds
from catalog.rekey import rekeyed, rekeyed_schema, rekeyed_tree
from catalog.sequences import SequenceInfo
from catalog.table import TableId, TableInfo
from catalog.views import dependents
from storage.commit_record import WriteOp, catalog_op, documents_op
from storage.data_type import INT64, ColumnId, DataType, TabletId
from storage.errors import (
    DependentObjectsStillExist,
    DiskFull,
    DuplicateTable,
    FeatureNotSupported,
    IoError,
    ObjectNotInPrerequisiteState,
    SerializationFailure,
    UndefinedObject,
    UndefinedTable,
)
from storage.schema import ColumnSchema, Schema
from storage.transaction import Transaction

log = logging.getLogger(__name__)

HIDDEN_KEY = "auto_incrementing_id"


@dataclasses.dataclass(frozen=True, slots=True)
class SerialSpec:
    """A SERIAL or IDENTITY column as declared: the catalog names and creates its sequence."""

    column: str
    type_name: str
    identity: str = ""
    start: int = 1
    increment: int = 1


class Catalog(CatalogSequences, CatalogPartitions, CatalogViews):
    """The set of tables, kept in step with the storage engine's tablets.

    Every change is written to the catalog document before it is acknowledged.
    Creating a table makes its tablets durable first and names them in the
    document second; dropping does the reverse.  A crash between the two steps
    leaves only tablets no table names, which ``open`` removes.

    ``begin`` gives a transaction its own ``Catalog``: the same methods, over an
    ``Overlay`` of the shared maps, whose changes ``commit`` applies (see the
    package docstring for the whole design).
    """

    # -- transactions -------------------------------------------------------------------------

    def begin(self, owner: object, wait: LockWait) -> Catalog:
        """A transaction's own view of this catalog; ``owner`` holds its relation locks."""
        if self._changes is not None:
            raise AssertionError("a transaction's catalog does not begin another")
        view = copy.copy(self)
        view._tables = Overlay(self._tables)
        view._views = Overlay(self._views)
        view._sequences = Overlay(self._sequences)
        view._changes = CatalogChanges(owner, wait)
        return view

    @property
    def changed(self) -> bool:
        """Whether this transaction's view holds DDL that COMMIT must apply."""
        changes = self._changes
        return changes is not None and bool(
            _overlay(self._tables).changes
            or _overlay(self._views).changes
            or _overlay(self._sequences).changes
            or changes.created
            or changes.comments
        )

    def set_comment(
        self, comments: Comments, table_oid: int, attnum: int, text: str | None
    ) -> None:
        """COMMENT ON: at once outside a transaction, at its COMMIT inside one."""
        changes = self._changes
        if changes is None:
            comments.set(table_oid, attnum, text)
            return
        changes.comments[(table_oid, attnum)] = text
        changes.comment_store = comments

    def comments(self, committed: dict[tuple[int, int], str]) -> dict[tuple[int, int], str]:
        """The comments this transaction sees: ``committed`` with its own COMMENT ONs."""
        changes = self._changes
        if changes is None or not changes.comments:
            return committed
        seen = dict(committed)
        for key, text in changes.comments.items():
            if text:
                seen[key] = text
            else:
                seen.pop(key, None)
        return seen

    def catch_up_indexes(self, txn: Transaction) -> None:
        """Let this transaction's view of a table it added an index to show the indexes
        another transaction committed on it since, before a write goes by it (``index_merge``):
        that write keeps them in step, as PostgreSQL's sees the new pg_index rows."""
        if self._changes is not None:
            tables = _overlay(self._tables)
            with self._lock:
                merge_new_indexes(tables, lambda table: txn.has_written(table.tablet_ids))

    def commit(
        self,
        txn: Transaction,
        markers: tuple[WriteOp, ...] = (),
        on_durable: Callable[[], None] | None = None,
    ) -> None:
        """Commit ``txn`` with this view's DDL: the new catalog document rides in the
        transaction's WAL record, so rows and catalog commit together or not at all; the
        shared maps and ``catalog.json`` take the changes once the record is durable.
        ``markers`` ride in the same record and ``on_durable`` runs after the catalog's own
        publishing (the role and privilege documents)."""
        changes = self._changes
        if changes is None or not self.changed:
            txn.commit(markers=markers, on_durable=on_durable)
            self._end()
            return
        tables, views = _overlay(self._tables), _overlay(self._views)
        sequences = _overlay(self._sequences)
        comment_store = changes.comment_store if changes.comments else None
        comment_lock = comment_store.lock if comment_store is not None else contextlib.nullcontext()
        with self._commit_lock, comment_lock:
            comment_doc = None
            if comment_store is not None:
                comment_doc = comment_store.document_with(changes.comments)
                documents = {COMMENTS_FILE: logged_document.encode(comment_doc)}
                markers = (*markers, documents_op(documents))
            with self._lock:
                merge_new_indexes(tables, lambda table: txn.has_written(table.tablet_ids))
                clashes = tables.conflicts() + views.conflicts() + sequences.conflicts()
                sequence = self._ids.ddl_sequence + 1
                document = self._document(sequence)
            if clashes:
                raise SerializationFailure(
                    "could not serialize access due to concurrent DDL on "
                    + ", ".join(f'"{n}"' for n in clashes)
                )

            def publish() -> None:
                with self._lock:
                    tables.apply()
                    views.apply()
                    sequences.apply()
                    self._ids.ddl_sequence = sequence
                self._store.save_after_wal(document)
                if comment_store is not None and comment_doc is not None:
                    comment_store.install(comment_doc)
                if on_durable is not None:
                    on_durable()

            data = json.dumps(document, sort_keys=True).encode()
            txn.commit(marker=catalog_op(data), on_durable=publish, markers=markers)
        try:
            for tablet_id in changes.dropped:
                self._engine.drop_tablet(tablet_id)
            self._counters.drop(changes.counters)
            self._align_tablet_schemas(changes.altered)
        except (DiskFull, IoError):
            # The DDL is committed and stays so: a counter the disk refused is logged.
            log.exception("after committing DDL")
        finally:
            self._end()

    def rollback(self) -> None:
        """Undo this view's DDL: drop the tablets it created, put altered ones back."""
        changes = self._changes
        if changes is None:
            return
        try:
            for tablet_id in reversed(changes.created):
                if self._engine.has_tablet(tablet_id):
                    self._engine.drop_tablet(tablet_id)
            for tablet_id, schema in changes.altered.items():
                if self._engine.has_tablet(tablet_id):
                    try:
                        self._engine.alter_tablet(tablet_id, schema)
                    except (DiskFull, IoError) as exc:
                        # Harmless meanwhile (reads go by column ID); aligned at the next open.
                        log.warning("tablet %d keeps its altered schema: %s", tablet_id, exc)
        finally:
            self._end()

    def _end(self) -> None:
        changes = self._changes
        if changes is not None:
            changes.ended = True
            self._locks.release(changes.owner, changes.locks)
            changes.locks.clear()

    def savepoint(self, name: str) -> None:
        changes = self._changes
        if changes is None:
            return
        changes.savepoints.append(
            SavepointMark(
                name,
                _overlay(self._tables).mark(),
                _overlay(self._views).mark(),
                len(changes.created),
                len(changes.dropped),
                len(changes.counters),
                dict(changes.altered),
                dict(changes.comments),
                _overlay(self._sequences).mark(),
            )  # fmt: skip
        )

    def release(self, name: str) -> None:
        changes = self._changes
        index = None if changes is None else changes.find_savepoint(name)
        if changes is not None and index is not None:
            del changes.savepoints[index:]

    def rollback_to(self, name: str) -> None:
        """Undo the DDL since savepoint ``name`` (which stays; later ones go)."""
        changes = self._changes
        index = None if changes is None else changes.find_savepoint(name)
        if changes is None or index is None:
            return
        mark = changes.savepoints[index]
        del changes.savepoints[index + 1 :]
        _overlay(self._tables).restore(mark.tables)
        _overlay(self._views).restore(mark.views)
        _overlay(self._sequences).restore(mark.sequences)
        for tablet_id in changes.created[mark.created :]:
            if self._engine.has_tablet(tablet_id):
                self._engine.drop_tablet(tablet_id)
        del changes.created[mark.created :]
        del changes.dropped[mark.dropped :]
        del changes.counters[mark.counters :]
        schemas = {tid: t.schema for t in self._tables.values() for tid in t.tablet_ids}
        for tablet_id, original in changes.altered.items():
            target = schemas.get(tablet_id, original)
            if self._engine.has_tablet(tablet_id) and self._engine.schema(tablet_id) != target:
                self._engine.alter_tablet(tablet_id, target)
        changes.altered = mark.altered
        changes.comments = dict(mark.comments)

    def create_table(
        self,
        name: str,
        columns: Sequence[tuple[str, DataType, bool, str | None]],
        key: Sequence[str],
        partitioning: Callable[[Schema], tuple[PartitionSchema, list[RangeBounds]]] | None = None,
        storage: dict[str, tuple[str, str]] | None = None,
        serials: Sequence[SerialSpec] = (),
        checks: Sequence[CheckConstraint] = (),
        *,
        primary_key_name: str | None = None,
        hidden_key_with: Sequence[str] = (),
    ) -> TableInfo:
        """Create a table from (name, type, nullable, default SQL) columns in declared order.

        Column IDs follow the declared order; the storage schema puts the ``key``
        columns first, in key order, and makes them NOT NULL.  An empty ``key``
        gives the table the hidden auto-increment key (see TableInfo).
        ``partitioning`` turns the schema into a PartitionSchema and its initial
        ranges; the table gets one tablet per bucket combination and range.
        ``storage`` maps column names to their (encoding, compression) as
        declared.  Each of ``serials`` gets a sequence named as PostgreSQL names
        it, which becomes the column's default.  ``hidden_key_with`` are the columns
        that follow the hidden key in the key (a partitioned table's partition columns).
        """
        self.lock_relations([name])
        with self._lock:
            taken = self._relation_names()
            if name in taken:
                raise DuplicateTable(f'relation "{name}" already exists')
            columns = list(columns)
            shown = len(columns)
            if not key:
                columns.append((HIDDEN_KEY, INT64, False, None))
                key = [HIDDEN_KEY, *hidden_key_with]
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
                table_id=TableId(self._ids.table),
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
                primary_key_name=primary_key_name,
            )
            self._ids.table += 1
            for partition in partitions:
                self._create_tablet(partition.tablet_id, schema)
            self._tables[name] = table
            self._save()
            return table

    def replace_table(self, old: TableInfo, new: TableInfo) -> TableInfo:
        """Make ``new`` (same table ID and tablets, possibly renamed) the table's definition:
        its tablets take the new schema first, then the catalog names it; ``open`` brings
        tablets back in line with the catalog if a crash came in between."""
        self.lock_relations([old.name, new.name])
        with self._lock:
            if self._tables.get(old.name) is not old:
                raise ObjectNotInPrerequisiteState(
                    f'relation "{old.name}" was changed by another statement; try again'
                )
            if new.name != old.name and new.name in self._relation_names():
                raise DuplicateTable(f'relation "{new.name}" already exists')
            for tablet_id in new.tablet_ids:
                self._alter_tablet(tablet_id, new.schema)
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
        partitioning: Callable[[Schema], tuple[PartitionSchema, list[RangeBounds]]] | None = None,
    ) -> TableInfo:
        """Rewrite a table with the hidden key into new tablets keyed by ``key`` (ADD PRIMARY
        KEY), partitioned by ``partitioning`` if given; see ``rewrite_table``."""
        tree = old.partition_schema.tree if old.partition_schema is not None else None
        if tree is not None:

            def leaves(_: TabletId) -> TableInfo:
                fresh = {}
                for tablet_id in old.tablet_ids:
                    fresh[tablet_id] = TabletId(self._ids.tablet)
                    self._ids.tablet += 1
                return rekeyed_tree(old, key, fresh, key_name)

            return self.rewrite_table(old, leaves, copy_rows, tree_leaves=True)
        if partitioning is None:
            return self.rewrite_table(
                old, lambda tablet_id: rekeyed(old, key, (tablet_id,), key_name), copy_rows
            )
        layout, ranges = partitioning(rekeyed_schema(old, key))

        def define(_: TabletId) -> TableInfo:
            partitions = self._new_partitions(layout, ranges)
            ids = [p.tablet_id for p in partitions]
            return rekeyed(old, key, ids, key_name, (layout, partitions))

        return self.rewrite_table(old, define, copy_rows)

    def rewrite_table(
        self,
        old: TableInfo,
        define: Callable[[TabletId], TableInfo],
        copy_rows: Callable[[TableInfo], None],
        *,
        tree_leaves: bool = False,
    ) -> TableInfo:
        """Replace an unpartitioned table by ``define(new tablet)``, whose tablet
        ``copy_rows`` fills and commits; only then does the catalog name it and drop the old
        tablets, so a failure or a crash at any point leaves the old table as it was
        (``open`` removes tablets no table names).  With ``tree_leaves``, ``define`` gives a
        table partitioned by PARTITION BY new leaf tablets of its own (ADD PRIMARY KEY)."""
        tree = old.partition_schema.tree if old.partition_schema is not None else None
        if old.partition_schema is not None and (tree is None or not tree_leaves):
            raise FeatureNotSupported("rewriting a partitioned table is not supported")
        self.lock_relations([old.name, *(n.name for n in tree.nodes)] if tree else [old.name])
        with self._lock:
            tablet_id = TabletId(self._ids.tablet)
            self._ids.tablet += 1
            new = define(tablet_id)
            for created in new.tablet_ids:
                self._create_tablet(created, new.schema)
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
            for created in new.tablet_ids:
                self._drop_tablet(created)
            raise
        for dropped in old.tablet_ids:
            self._drop_tablet(dropped)
        return new

    def table_by_id(self, table_id: int) -> TableInfo:
        for table in self._tables.values():
            if table.table_id == table_id:
                return table
        raise AssertionError(f"no table has ID {table_id}")

    def referencing(self, table_id: int) -> list[tuple[TableInfo, ForeignKey]]:
        """The foreign keys that reference table ``table_id``, each with its own table."""
        return [
            (table, key)
            for table in self._tables.values()
            for key in table.foreign_keys
            if key.parent_id == table_id
        ]

    def _drop_referencing(
        self, table: TableInfo, cascade: bool, keep: Callable[[TableInfo, ForeignKey], bool]
    ) -> list[str]:
        """Drop the foreign keys of other tables that reference ``table`` and that ``keep``
        rejects (2BP01 unless ``cascade``); return what was dropped, as PostgreSQL's notice
        names it."""
        found = [
            (child, key)
            for child, key in self.referencing(table.table_id)
            if child.table_id != table.table_id and not keep(child, key)
        ]
        if found and not cascade:
            child, key = found[0]
            raise DependentObjectsStillExist(
                f"cannot drop table {table.name} because other objects depend on it",
                detail=f"constraint {key.name} on table {child.name} depends on table {table.name}",
                hint="Use DROP ... CASCADE to drop the dependent objects too.",
            )
        for child, key in found:
            current = self._tables[child.name]
            self._tables[child.name] = dataclasses.replace(
                current, foreign_keys=tuple(k for k in current.foreign_keys if k != key)
            )
        return [f"constraint {key.name} on table {child.name}" for child, key in found]

    def drop_table(
        self, name: str, *, cascade: bool = False, with_tables: Sequence[str] = ()
    ) -> TableInfo:
        """Drop a table; a view reading it or a foreign key of another table referencing it
        is 2BP01 unless ``cascade`` (which drops them), or the referencing table is one of
        ``with_tables``, dropped by the same statement."""
        children = [c.name for c, _ in self.referencing(self.get_table(name).table_id)]
        self.lock_relations([name, *dependents(self._views, name), *children])
        with self._lock:
            table = self.get_table(name)
            self._drop_referencing(table, cascade, lambda child, _key: child.name in with_tables)
            for view in self._check_dependents(f"table {name}", name, cascade):
                del self._views[view]
            del self._tables[name]
            owned = self._owned_sequences(table)
            for sequence in owned:  # OWNED BY: the table's sequences go with it
                del self._sequences[sequence.name]
            self._save()
            for tablet_id in (*table.tablet_ids, *(i.tablet_id for i in table.indexes)):
                self._drop_tablet(tablet_id)
            self._drop_counters(
                [table.counter_key(i) for i in table.sequences] + [q.counter_key for q in owned]
            )
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
            tablet_id = TabletId(self._ids.tablet)
            index = define(self._ids.table, tablet_id)
            if index.name in self._relation_names():
                raise DuplicateTable(f'relation "{index.name}" already exists')
            self._ids.tablet += 1
            self._ids.table += 1
            self._create_tablet(tablet_id, index_schema(table.schema, index))
            new = dataclasses.replace(table, indexes=(*table.indexes, index))
            self._tables[table.name] = new
            self._save()
            return new, index

    def drop_index(self, name: str, *, rebuilding: bool = False) -> TableInfo:
        """Remove an index: the catalog stops naming it, then its tablet goes.  One a foreign
        key goes through is 2BP01, unless ``rebuilding`` it (``repoint_references`` then
        names the new one)."""
        with self._lock:
            found = self.find_index(name)
            if found is None:
                raise UndefinedObject(f'index "{name}" does not exist')
            table, index = found
            for child, key in self.referencing(table.table_id):
                if key.parent_index == index.index_id and not rebuilding:
                    raise DependentObjectsStillExist(
                        f"cannot drop {'constraint' if index.constraint else 'index'} {name}"
                        f"{f' on table {table.name}' if index.constraint else ''} because "
                        "other objects depend on it",
                        detail=f"constraint {key.name} on table {child.name} depends on "
                        f"index {name}",
                        hint="Use DROP ... CASCADE to drop the dependent objects too.",
                    )
            new = dataclasses.replace(
                table, indexes=tuple(i for i in table.indexes if i.name != name)
            )
            self._tables[table.name] = new
            self._save()
        self._drop_tablet(index.tablet_id)
        return new

    def validate_index(self, name: str) -> TableInfo:
        """Mark index ``name`` valid: reads may use it (CREATE INDEX CONCURRENTLY's end)."""
        with self._lock:
            found = self.find_index(name)
            if found is None:
                raise UndefinedObject(f'index "{name}" does not exist')
            table, index = found
            valid = dataclasses.replace(index, valid=True)
            new = dataclasses.replace(
                table, indexes=tuple(valid if i.name == name else i for i in table.indexes)
            )
            self._tables[table.name] = new
            self._save()
        return new

    def repoint_references(self, parent_id: int, old_index: int, new_index: int) -> None:
        """The foreign keys that went through index ``old_index`` of table ``parent_id`` go
        through its rebuilt copy ``new_index``."""
        with self._lock:
            for child, _key in self.referencing(parent_id):
                current = self._tables[child.name]
                keys = tuple(
                    dataclasses.replace(k, parent_index=new_index)
                    if k.parent_id == parent_id and k.parent_index == old_index
                    else k
                    for k in current.foreign_keys
                )
                self._tables[child.name] = dataclasses.replace(current, foreign_keys=keys)
            self._save()

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


def _overlay(mapping: MutableMapping[str, Any]) -> Overlay[Any]:
    """A transaction's map (only a transaction's view of the catalog calls this)."""
    if not isinstance(mapping, Overlay):
        raise AssertionError("only a transaction's catalog has overlays")
    return mapping
