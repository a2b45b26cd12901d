"""Catalog: create, drop and look up tables by name; allocate table, column and tablet IDs."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import logging
import threading
from collections.abc import Callable, Iterable, MutableMapping, Sequence
from typing import Any

import numpy as np

from catalog import logged_document
from catalog.catalog_changes import CatalogChanges, SavepointMark
from catalog.comments import FILE_NAME as COMMENTS_FILE
from catalog.comments import Comments
from catalog.constraints import CheckConstraint
from catalog.ddl_locks import DdlLocks, LockWait, RelationLock
from catalog.foreign_keys import ForeignKey
from catalog.index_merge import merge_new_indexes
from catalog.indexes import IndexInfo, index_schema
from catalog.overlay import Overlay
from catalog.partition import Partition, PartitionSchema, RangeBounds
from catalog.partition_tree import PartitionNode
from catalog.partition_views import add_node, partition_view, remove_nodes
from catalog.rekey import (
    rekeyed,
    rekeyed_schema,
    rekeyed_tree,
    with_key_columns,
    with_leaf_tablets,
)
from catalog.sequence_objects import SequenceRef, StandaloneSequence
from catalog.sequences import SequenceCounters, SequenceInfo
from catalog.store import FORMAT_VERSION, CatalogStore
from catalog.table import TableId, TableInfo
from catalog.views import ViewInfo, dependents
from storage.commit_record import WriteOp, catalog_op, documents_op
from storage.data_type import INT64, ColumnId, DataType, TabletId
from storage.engine import StorageEngine
from storage.errors import (
    DependentObjectsStillExist,
    DiskFull,
    DuplicateTable,
    FeatureNotSupported,
    InvalidObjectDefinition,
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
_NAME_LIMIT = 63


@dataclasses.dataclass(slots=True)
class _Ids:
    """The next table and tablet IDs, shared by the catalog and every transaction's view of it."""

    table: int
    tablet: int
    ddl_sequence: int = 0
    """How many catalog changes have committed: orders the file and the WAL's copies."""


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

    ``begin`` gives a transaction its own ``Catalog``: the same methods, over an
    ``Overlay`` of the shared maps, whose changes ``commit`` applies (see the
    package docstring for the whole design).
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
        self._commit_lock = threading.Lock()
        self._changes: CatalogChanges | None = None
        self._locks = DdlLocks()
        doc = store.load()
        replayed = engine.replayed_catalog
        if replayed is not None:
            logged = json.loads(replayed)
            if int(logged["ddl_sequence"]) > int(doc.get("ddl_sequence", 0)):
                log.warning("catalog file predates the last committed DDL; taking the WAL's copy")
                doc = logged
                store.save_after_wal(doc)
        engine.wal_keepers.append(store.keeps_wal)
        self._tables: MutableMapping[str, TableInfo] = {
            t.name: t for t in (TableInfo.from_json(d) for d in doc["tables"])
        }
        self._views: MutableMapping[str, ViewInfo] = {
            v.name: v for v in (ViewInfo.from_json(d) for d in doc.get("views") or ())
        }
        self._sequences: MutableMapping[str, StandaloneSequence] = {
            q.name: q for q in (StandaloneSequence.from_json(d) for d in doc.get("sequences") or ())
        }
        self._ids = _Ids(
            int(doc["next_table_id"]), int(doc["next_tablet_id"]), int(doc.get("ddl_sequence", 0))
        )
        self._remove_orphan_tablets()
        self._align_tablet_schemas()

    def _remove_orphan_tablets(self) -> None:
        named = {tid for t in self._tables.values() for tid in t.tablet_ids}
        named.update(i.tablet_id for t in self._tables.values() for i in t.indexes)
        for tablet_id in self._engine.tablet_ids():
            self._ids.tablet = max(self._ids.tablet, tablet_id + 1)
            if tablet_id not in named:
                log.warning("removing tablet %d that no table names (interrupted DDL)", tablet_id)
                self._engine.drop_tablet(tablet_id)

    def _document(self, ddl_sequence: int) -> dict[str, object]:
        return {
            "version": FORMAT_VERSION,
            "ddl_sequence": ddl_sequence,
            "next_table_id": self._ids.table,
            "next_tablet_id": self._ids.tablet,
            "tables": [t.to_json() for t in self._tables.values()],
            **({"views": [v.to_json() for v in self._views.values()]} if self._views else {}),
            **(
                {"sequences": [q.to_json() for q in self._sequences.values()]}
                if self._sequences
                else {}
            ),
        }

    def _save(self) -> None:
        """Write the document now, outside a transaction; a transaction's view writes at commit."""
        if self._changes is None:
            self._ids.ddl_sequence += 1
            self._store.save(self._document(self._ids.ddl_sequence))

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
    def ddl_sequence(self) -> int:
        """The number of the last DDL committed: a plan made at one number holds until it moves."""
        return self._ids.ddl_sequence

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

    def lock_relations(
        self, names: Iterable[str], mode: RelationLock = RelationLock.ACCESS_EXCLUSIVE
    ) -> None:
        """Take the relation locks DDL on ``names`` needs, waiting for other transactions'
        (``RelationLock.SHARE``: CREATE INDEX's, which readers need not wait for).  ACCESS
        EXCLUSIVE then waits for the transactions with uncommitted writes or row locks on
        those tables, as PostgreSQL's waits for their ROW EXCLUSIVE and ROW SHARE locks."""
        changes = self._changes
        if changes is not None:
            if changes.ended:
                raise AssertionError("a transaction's catalog is used after its transaction ended")
            names = list(names)
            changes.locks += self._locks.acquire(changes.owner, names, changes.wait, mode)
            owner = changes.owner
            if mode is RelationLock.ACCESS_EXCLUSIVE and isinstance(owner, Transaction):
                for name in names:
                    table = self._tables.get(name)
                    if table is not None:
                        self.wait_for_writers(table, owner, row_lockers=True)

    def ddl_lock_waited(self, owner: object) -> str | None:
        """The relation ``owner``'s DDL or statement waits to lock, if it waits."""
        return self._locks.waiting_for(owner)

    @property
    def has_ddl_locks(self) -> bool:
        """Whether any transaction's uncommitted DDL holds a relation (cheap; checked often)."""
        return self._locks.held

    def wait_for_relations(
        self,
        owner: object,
        names: Iterable[str],
        wait: LockWait,
        written: Iterable[str] = (),
    ) -> None:
        """Wait while other transactions' uncommitted DDL holds any of the committed relations
        ``names`` (a statement about to read them, and write those of ``written``) in a mode
        that conflicts, as PostgreSQL's lock makes it: a CREATE INDEX stops writers only."""
        if self._locks.held:
            committed = [
                n for n in names if n in self._tables or n in self._views or n in self._sequences
            ]
            self._locks.wait_until_free(owner, committed, wait, frozenset(written))

    def wait_for_writers(
        self, table: TableInfo, txn: Transaction, *, row_lockers: bool = False
    ) -> None:
        """Wait, holding ``table``'s lock, until every other transaction with uncommitted
        writes on it has ended, as PostgreSQL's CREATE INDEX waits for its writers: a build
        then reads what they committed, and their later writes keep the index in step.
        ``lock_timeout`` (55P03), a cancel (57014) and a cycle of waits (40P01) end it.  The
        DDL's own transaction, when ``txn`` is a helper one (a rewrite's), is not waited for."""
        changes = self._changes
        owner: object = changes.owner if changes is not None else txn
        names = [table.name]

        def check(writers: list[Transaction]) -> None:
            if changes is not None:
                changes.wait.check()
            self._locks.writer_wait(owner, writers, names)

        timeout_ms = changes.wait.timeout_ms() if changes is not None else 0
        try:
            txn.wait_for_writers(
                list(table.tablet_ids), check, timeout_ms, ignore=owner, row_lockers=row_lockers
            )
        finally:
            self._locks.writer_wait_over(owner)

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

    # -- tablet side effects: at once outside a transaction, settled at its end inside one -----

    def _create_tablet(self, tablet_id: TabletId, schema: Schema) -> None:
        self._engine.create_tablet(tablet_id, schema)
        if self._changes is not None:
            self._changes.created.append(tablet_id)

    def _drop_tablet(self, tablet_id: TabletId) -> None:
        if self._changes is None:
            self._engine.drop_tablet(tablet_id)
        elif tablet_id in self._changes.created:
            self._changes.created.remove(tablet_id)
            self._engine.drop_tablet(tablet_id)
        else:
            self._changes.dropped.append(tablet_id)

    def _alter_tablet(self, tablet_id: TabletId, schema: Schema) -> None:
        """Alter a tablet's schema; in a transaction, columns it drops stay in the tablet
        (unread, since reads go by column ID) until COMMIT, so ROLLBACK finds their values."""
        changes = self._changes
        if changes is not None and tablet_id not in changes.created:
            current = self._engine.schema(tablet_id)
            changes.altered.setdefault(tablet_id, current)
            kept = tuple(
                dataclasses.replace(c, name=f"........dropped.{c.id}")
                for c in current.columns
                if schema.find_id(c.id) is None
            )
            if kept:
                schema = Schema(schema.columns + kept, schema.num_key_columns)
        self._engine.alter_tablet(tablet_id, schema)

    def _drop_counters(self, keys: list[str]) -> None:
        if self._changes is None:
            self._counters.drop(keys)
        else:
            self._changes.counters += keys

    def get_table(self, name: str, *, position: int | None = None) -> TableInfo:
        """Return the table called ``name`` or raise UndefinedTable (42P01)."""
        table = self._tables.get(name)
        if table is None:
            raise UndefinedTable(f'relation "{name}" does not exist', position=position)
        return table

    def find_table(self, name: str) -> TableInfo | None:
        return self._tables.get(name)

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

    def _relation_names(self) -> set[str]:
        names = set(self._tables) | set(self._views) | set(self._sequences)
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

    def _new_partitions(
        self,
        partitioning: PartitionSchema | None,
        ranges: Sequence[RangeBounds | tuple[RangeBounds, str | None]],
    ) -> list[Partition]:
        """One partition (with a fresh tablet ID) per bucket combination and range."""
        if partitioning is not None and partitioning.tree is not None:
            return []  # a partition tree's leaves come with CREATE TABLE ... PARTITION OF
        combos = partitioning.bucket_combinations() if partitioning is not None else [()]
        named: list[tuple[RangeBounds | None, str | None]] = [
            r if isinstance(r, tuple) else (r, None) for r in ranges
        ]
        if partitioning is None or not partitioning.is_ranged:
            named = [(None, None)]
        partitions = []
        for bounds, range_name in named:
            for combo in combos:
                tablet_id = TabletId(self._ids.tablet)
                self._ids.tablet += 1
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
        self.lock_relations([name])
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
                self._create_tablet(partition.tablet_id, table.schema)
            partitions = tuple(kept + added)
            new = dataclasses.replace(
                table, partitions=partitions, tablet_ids=tuple(p.tablet_id for p in partitions)
            )
            self._tables[name] = new
            self._save()
            for partition in table.partitions:
                if partition.range in set(drop):
                    self._drop_tablet(partition.tablet_id)
            return new

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

    def _align_tablet_schemas(self, only: Iterable[TabletId] | None = None) -> None:
        """Give tablets (all, or ``only`` these) the schema the catalog names them with."""
        wanted = None if only is None else set(only)
        for table in self._tables.values():
            for tablet_id in table.tablet_ids:
                if wanted is not None and tablet_id not in wanted:
                    continue
                if self._engine.has_tablet(tablet_id):
                    self._engine.alter_tablet(tablet_id, table.schema)

    def partition_owner(self, partition_name: str) -> TableInfo | None:
        """The table that has a partition (a named range or a tree node) ``partition_name``."""
        for table in self._tables.values():
            if any(p.name == partition_name for p in table.partitions):
                return table
            tree = table.partition_schema.tree if table.partition_schema else None
            if tree is not None and tree.find(partition_name) is not None:
                return table
        return None

    def partition_view(self, name: str) -> TableInfo | None:
        """A PostgreSQL-style partition read by its own name: its root table restricted to
        the leaves below it (None when ``name`` is no partition)."""
        owner = self.partition_owner(name)
        return None if owner is None else partition_view(owner, name)

    def table_or_partition(self, name: str) -> TableInfo:
        """The table, or the partition read by its own name, called ``name`` (42P01)."""
        return self.find_table(name) or self.partition_view(name) or self.get_table(name)

    def add_partition(self, root: str, node: PartitionNode) -> TableInfo:
        """Add ``node`` to the root's partition tree: it gets a relation ID, and a leaf its
        tablet, created before the catalog names it; overlapping siblings are 42P17."""
        self.lock_relations([root, node.name])
        with self._lock:
            table = self.get_table(root)
            if node.name in self._relation_names() or self.partition_owner(node.name):
                raise DuplicateTable(f'relation "{node.name}" already exists')
            node = dataclasses.replace(node, relation_id=self._ids.table)
            self._ids.table += 1
            if node.key is None:
                node = dataclasses.replace(node, tablet_id=TabletId(self._ids.tablet))
                self._ids.tablet += 1
                self._create_tablet(TabletId(self._ids.tablet - 1), table.schema)
            new = add_node(table, node)
            self._tables[root] = new
            self._save()
            return new

    def attach_partition(self, root: str, table: TableInfo, node: PartitionNode) -> TableInfo:
        """Make ``table`` (one tablet, the root's schema) the leaf ``node`` of the root's tree,
        keeping its tablet, rows and relation ID (ATTACH PARTITION)."""
        self.lock_relations([root, table.name])
        with self._lock:
            current = self.get_table(table.name)
            if current is not table:
                raise ObjectNotInPrerequisiteState(
                    f'relation "{table.name}" was changed by another statement; try again'
                )
            node = dataclasses.replace(
                node, relation_id=int(table.table_id), tablet_id=table.tablet_ids[0]
            )
            new = add_node(self.get_table(root), node)
            del self._tables[table.name]
            self._tables[root] = new
            self._save()
            return new

    def attach_empty_partition(self, root: str, table: TableInfo, node: PartitionNode) -> TableInfo:
        """Make the empty ``table``, whose tablet is keyed otherwise than the root's (a plain
        table pg_dump made), the leaf ``node`` on a new tablet of the root's schema, keeping
        its relation ID; its own tablet goes at COMMIT (ATTACH PARTITION)."""
        self.lock_relations([root, table.name])
        with self._lock:
            current = self.get_table(table.name)
            if current is not table:
                raise ObjectNotInPrerequisiteState(
                    f'relation "{table.name}" was changed by another statement; try again'
                )
            parent = self.get_table(root)
            tablet_id = TabletId(self._ids.tablet)
            self._ids.tablet += 1
            self._create_tablet(tablet_id, parent.schema)
            node = dataclasses.replace(node, relation_id=int(table.table_id), tablet_id=tablet_id)
            new = add_node(parent, node)
            del self._tables[table.name]
            self._tables[root] = new
            self._save()
            for old in table.tablet_ids:
                self._drop_tablet(old)
            self._drop_counters([table.counter_key(i) for i in table.sequences])
            return new

    def graft_partitions(
        self,
        root: str,
        table: TableInfo,
        nodes: Sequence[PartitionNode],
        key_columns: Sequence[ColumnId] = (),
    ) -> TableInfo:
        """Make the empty partitioned ``table`` part of the root's tree as ``nodes`` (its own
        node first, then its partitions), each leaf on a new tablet of the root's schema,
        keeping their relation IDs; its own tablets go at COMMIT (ATTACH PARTITION of a
        partitioned table).  ``key_columns`` extend the key of an empty root without a
        primary key (its partitions are partitioned by them): its leaves move to new
        tablets so keyed."""
        self.lock_relations([root, table.name, *(n.name for n in nodes)])
        with self._lock:
            if self.get_table(table.name) is not table:
                raise ObjectNotInPrerequisiteState(
                    f'relation "{table.name}" was changed by another statement; try again'
                )
            new = self.get_table(root)
            replaced: list[TabletId] = []
            if key_columns:
                new = with_key_columns(new, key_columns)
                fresh = {}
                for old_tablet in new.tablet_ids:
                    fresh[old_tablet] = TabletId(self._ids.tablet)
                    self._ids.tablet += 1
                    self._create_tablet(fresh[old_tablet], new.schema)
                replaced = list(new.tablet_ids)
                new = with_leaf_tablets(new, fresh)
            for node in nodes:
                if node.key is None:
                    tablet_id = TabletId(self._ids.tablet)
                    self._ids.tablet += 1
                    self._create_tablet(tablet_id, new.schema)
                    node = dataclasses.replace(node, tablet_id=tablet_id)
                new = add_node(new, node)
            del self._tables[table.name]
            self._tables[root] = new
            self._save()
            for old in (*table.tablet_ids, *replaced):
                self._drop_tablet(old)
            self._drop_counters([table.counter_key(i) for i in table.sequences])
            return new

    def drop_partition(self, name: str) -> TableInfo | None:
        """Drop a tree partition and everything below it, with its tablets (DROP TABLE)."""
        owner = self.partition_owner(name)
        if owner is None or owner.partition_schema is None or owner.partition_schema.tree is None:
            return None
        self.lock_relations([owner.name, name])
        with self._lock:
            table = self.get_table(owner.name)
            new, dropped = remove_nodes(table, name)
            self._tables[owner.name] = new
            self._save()
            for tablet_id in dropped:
                self._drop_tablet(tablet_id)
            return new

    def detach_partition(self, name: str, partition_name: str) -> TableInfo:
        """Make a named range partition a table of its own, keeping its rows (DETACH)."""
        self.lock_relations([name, partition_name])
        with self._lock:
            table = self.get_table(name)
            moving = [p for p in table.partitions if p.name == partition_name]
            if not moving:
                raise UndefinedTable(f'relation "{partition_name}" is not a partition of "{name}"')
            if partition_name in self._tables:
                raise DuplicateTable(f'relation "{partition_name}" already exists')
            if len(moving) != 1:
                raise FeatureNotSupported("detaching a hash-partitioned range is not supported")
            tree = table.partition_schema.tree if table.partition_schema else None
            if tree is not None:
                node = tree.find(partition_name)
                if node is None or node.parent is not None:
                    raise UndefinedTable(
                        f'relation "{partition_name}" is not a partition of relation "{name}"'
                    )
                self._tables[name] = remove_nodes(table, partition_name)[0]
            else:
                kept = tuple(p for p in table.partitions if p.name != partition_name)
                self._tables[name] = dataclasses.replace(
                    table, partitions=kept, tablet_ids=tuple(p.tablet_id for p in kept)
                )
            detached = TableInfo(
                table_id=TableId(self._ids.table),
                name=partition_name,
                schema=table.schema,
                tablet_ids=(moving[0].tablet_id,),
                next_column_id=table.next_column_id,
                column_order=table.column_order,
            )
            self._ids.table += 1
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
