"""The state every part of ``Catalog`` works on: the name maps, IDs, the document, tablets.

``Catalog`` is split by concept (``catalog_sequences``, ``catalog_partitions``,
``catalog_views``); each part is a subclass of ``CatalogBase`` and ``Catalog`` joins them.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
from collections.abc import Iterable, MutableMapping

from catalog.catalog_changes import CatalogChanges
from catalog.ddl_locks import DdlLocks, LockWait, RelationLock
from catalog.sequence_objects import StandaloneSequence
from catalog.sequences import SequenceCounters
from catalog.store import FORMAT_VERSION, CatalogStore
from catalog.table import TableInfo
from catalog.views import ViewInfo
from storage.data_type import TabletId
from storage.engine import StorageEngine
from storage.errors import UndefinedTable
from storage.schema import Schema
from storage.transaction import Transaction

log = logging.getLogger(__name__)


@dataclasses.dataclass(slots=True)
class _Ids:
    """The next table and tablet IDs, shared by the catalog and every transaction's view of it."""

    table: int
    tablet: int
    ddl_sequence: int = 0
    """How many catalog changes have committed: orders the file and the WAL's copies."""


class CatalogBase:
    """The committed (or, in a transaction's view, overlaid) maps of tables, views and sequences,
    and the tablet side effects every kind of DDL goes through."""

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

    @property
    def ddl_sequence(self) -> int:
        """The number of the last DDL committed: a plan made at one number holds until it moves."""
        return self._ids.ddl_sequence

    @property
    def engine(self) -> StorageEngine:
        """The storage engine whose tablets this catalog's tables own (system views read it)."""
        return self._engine

    def tables(self) -> list[TableInfo]:
        return sorted(self._tables.values(), key=lambda t: t.table_id)

    def get_table(self, name: str, *, position: int | None = None) -> TableInfo:
        """Return the table called ``name`` or raise UndefinedTable (42P01)."""
        table = self._tables.get(name)
        if table is None:
            raise UndefinedTable(f'relation "{name}" does not exist', position=position)
        return table

    def find_table(self, name: str) -> TableInfo | None:
        return self._tables.get(name)

    def _relation_names(self) -> set[str]:
        names = set(self._tables) | set(self._views) | set(self._sequences)
        names.update(i.name for t in self._tables.values() for i in t.sequences)
        names.update(i.name for t in self._tables.values() for i in t.indexes)
        return names

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

    def _align_tablet_schemas(self, only: Iterable[TabletId] | None = None) -> None:
        """Give tablets (all, or ``only`` these) the schema the catalog names them with."""
        wanted = None if only is None else set(only)
        for table in self._tables.values():
            for tablet_id in table.tablet_ids:
                if wanted is not None and tablet_id not in wanted:
                    continue
                if self._engine.has_tablet(tablet_id):
                    self._engine.alter_tablet(tablet_id, table.schema)

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
