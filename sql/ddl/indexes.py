"""CREATE [UNIQUE] INDEX, DROP INDEX, ALTER INDEX RENAME, and UNIQUE constraints.

An index is a tablet of its own (``catalog.indexes``).  Creating one first makes the
catalog name its empty tablet, so every write from then on keeps it in step
(``sql.dml.index_writes``), then fills it with the entries of the rows already there,
read and written in the statement's transaction: a duplicate among them is 23505 and
the index is removed again.  Before that it waits, holding the table's lock, for the
transactions with uncommitted writes on the table to end (``Catalog.wait_for_writers``),
and reads every live row at the newest safe time, whatever the transaction's snapshot,
as PostgreSQL indexes every live row: no committed write is lost or doubled.  A UNIQUE constraint is a unique index that pg_constraint
lists, named as PostgreSQL names it (``<table>_<columns>_key``).

nyala's indexes are btree indexes over plain columns: other access methods and
expression indexes are refused with 0A000 naming them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pyarrow as pa
from sqlglot import exp

from catalog.catalog import Catalog
from catalog.constraints import choose_name
from catalog.indexes import IndexInfo
from catalog.table import TableInfo
from catalog.temp_tables import user_name
from sql.common.names import identifier_name, table_name
from sql.common.result import Result
from sql.execution import index_writes
from storage.data_type import ColumnId, TabletId
from storage.errors import (
    DbError,
    DependentObjectsStillExist,
    DuplicateColumn,
    DuplicateTable,
    FeatureNotSupported,
    UndefinedColumn,
    UndefinedObject,
    UndefinedTable,
    WrongObjectType,
)
from storage.predicate import ScanSpec
from storage.transaction import Transaction

_ACCESS_METHODS = {"btree"}


def create_index(
    ast: exp.Create, catalog: Catalog, txn: Transaction, *, concurrently: bool = False
) -> Result:
    """``CREATE [UNIQUE] INDEX [CONCURRENTLY] [IF NOT EXISTS] [name] ON t [USING btree]
    (cols) [INCLUDE (cols)] [WHERE predicate]``; ``concurrently``: its first transaction
    (``concurrent_index``), which names the index without filling it."""
    node = ast.this
    assert isinstance(node, exp.Index), "CREATE INDEX plans carry an Index"
    table = _index_target(node.args["table"], catalog)
    params = node.args.get("params") or exp.IndexParameters()
    using = params.args.get("using")
    if using is not None and using.name.lower() not in _ACCESS_METHODS:
        raise FeatureNotSupported(f'access method "{using.name.lower()}" is not supported')
    names = []
    for ordered in params.args.get("columns") or []:
        column = ordered.this if isinstance(ordered, exp.Ordered) else ordered
        if not isinstance(column, (exp.Column, exp.Identifier)):
            raise FeatureNotSupported(
                f"expression indexes are not supported: {column.sql(dialect='postgres')}"
            )
        if isinstance(ordered, exp.Ordered) and (
            ordered.args.get("desc") or ordered.args.get("nulls_first")
        ):
            raise FeatureNotSupported("DESC and NULLS FIRST index columns are not supported")
        names.append(identifier_name(column))
    for option in ("with_storage", "tablespace", "partition_by"):
        value = params.args.get(option)
        if value:
            raise FeatureNotSupported(f"CREATE INDEX ... {option.upper()} is not supported")
    include = [identifier_name(c) for c in params.args.get("include") or []]
    where = params.args.get("where")
    predicate = None
    if where is not None:
        condition = where.this
        while isinstance(condition, exp.Paren):  # pg_dump wraps it: WHERE (b > 0)
            condition = condition.this
        predicate = condition.sql(dialect="postgres")
    name = identifier_name(node.this) if node.this is not None else None
    if name is not None and catalog.find_index(name) is not None and ast.args.get("exists"):
        notice = DuplicateTable(f'relation "{name}" already exists, skipping', severity="NOTICE")
        return Result(command_tag="CREATE INDEX", notices=[notice])
    add_index(
        catalog, table, names, name, txn, unique=bool(ast.args.get("unique")),
        include=include, predicate=predicate, concurrently=concurrently,
    )  # fmt: skip
    return Result(command_tag="CREATE INDEX")


def _index_target(node: exp.Expr, catalog: Catalog) -> TableInfo:
    assert isinstance(node, exp.Table), "CREATE INDEX names a table"
    name = table_name(node)
    if catalog.find_view(name) is not None:
        raise WrongObjectType(f'cannot create index on relation "{name}"',
                              detail="This operation is not supported for views.")  # fmt: skip
    return catalog.get_table(name)


def add_index(
    catalog: Catalog,
    table: TableInfo,
    columns: Sequence[str],
    name: str | None,
    txn: Transaction,
    *,
    unique: bool = False,
    include: Sequence[str] = (),
    predicate: str | None = None,
    nulls_not_distinct: bool = False,
    constraint: bool = False,
    concurrently: bool = False,
) -> TableInfo:
    """Create an index on ``table`` over ``columns`` and fill it from the rows there now;
    ``concurrently``: only name it in the catalog, not yet valid and empty, for
    ``concurrent_index.build`` to fill in a later transaction."""
    ids = [_column_id(table, c) for c in columns]
    if len(set(ids)) != len(ids) and constraint:
        raise DuplicateColumn(f'column "{columns[0]}" appears twice in unique constraint')
    include_ids = tuple(_column_id(table, c) for c in include)
    if name is None:
        taken = _relation_names(catalog)
        name = choose_name(
            user_name(table.name), "_".join(columns), "key" if constraint else "idx", taken
        )
    chosen = name

    def define(index_id: int, tablet_id: TabletId) -> IndexInfo:
        return IndexInfo(
            chosen, index_id, tablet_id, tuple(ids), unique, include_ids,
            nulls_not_distinct, predicate, constraint, valid=not concurrently,
        )  # fmt: skip

    if predicate is not None:
        index_writes.check_predicate(table, predicate)
    if concurrently:
        return catalog.create_index(table, define)[0]
    catalog.wait_for_writers(table, txn)
    table = catalog.get_table(table.name)
    new, index = catalog.create_index(table, define)
    try:
        _fill(new, index, txn)
    except BaseException:
        catalog.drop_index(index.name)
        raise
    return catalog.get_table(table.name)


def _column_id(table: TableInfo, name: str) -> ColumnId:
    column = table.schema.find(name)
    if column is None or column.id not in table.column_order:
        raise UndefinedColumn(f'column "{name}" does not exist')
    return column.id


def _relation_names(catalog: Catalog) -> set[str]:
    names = {t.name for t in catalog.tables()} | {v.name for v in catalog.views()}
    for table in catalog.tables():
        names.update(i.name for i in table.indexes)
        names.update(s.name for s in table.sequences)
    return names


def _fill(table: TableInfo, index: IndexInfo, txn: Transaction) -> None:
    """Write the entries of every live row (and the transaction's own) into the new index."""
    only = dataclasses.replace(table, indexes=(index,))
    spec = ScanSpec(projection=table.schema.column_ids)
    names = [c.name for c in table.schema.columns]
    for tablet_id in table.tablet_ids:
        for batch in txn.scan(tablet_id, spec, latest=True):
            if batch.num_rows:
                rows = pa.Table.from_batches([batch]).rename_columns(names)
                index_writes.add_entries(only, txn, rows)


def drop_index(ast: exp.Drop, catalog: Catalog) -> Result:
    """``DROP INDEX [CONCURRENTLY] [IF EXISTS] name [, ...] [CASCADE | RESTRICT]``."""
    notices: list[DbError] = []
    for node in ast.args.get("tables") or [ast.this]:
        name = table_name(node)
        found = catalog.find_index(name)
        if found is None:
            if catalog.find_table(name) is not None or catalog.find_view(name) is not None:
                raise WrongObjectType(f'"{name}" is not an index',
                                      hint="Use DROP TABLE to remove a table.")  # fmt: skip
            if ast.args.get("exists"):
                notices.append(
                    UndefinedObject(f'index "{name}" does not exist, skipping', severity="NOTICE")
                )
                continue
            raise UndefinedObject(f'index "{name}" does not exist')
        table, index = found
        if index.constraint:
            raise _constraint_owns(index, table)
        catalog.drop_index(name)
    return Result(command_tag="DROP INDEX", notices=notices)


def _constraint_owns(index: IndexInfo, table: TableInfo) -> DbError:
    return DependentObjectsStillExist(
        f"cannot drop index {index.name} because constraint {index.name} on table "
        f"{table.name} requires it",
        hint=f"You can drop constraint {index.name} on table {table.name} instead.",
    )


def rename_index(ast: exp.Alter, catalog: Catalog) -> Result:
    """``ALTER INDEX [IF EXISTS] name RENAME TO new``."""
    actions = ast.args.get("actions") or []
    if len(actions) != 1 or not isinstance(actions[0], exp.AlterRename):
        raise FeatureNotSupported("ALTER INDEX supports only RENAME TO")
    name = table_name(ast.this)
    if catalog.find_index(name) is None:
        if ast.args.get("exists"):
            notice = UndefinedTable(
                f'relation "{name}" does not exist, skipping', severity="NOTICE"
            )
            return Result(command_tag="ALTER INDEX", notices=[notice])
        raise UndefinedTable(f'relation "{name}" does not exist')
    catalog.rename_index(name, table_name(actions[0].this))
    return Result(command_tag="ALTER INDEX")


def unique_constraint(node: exp.Expr) -> tuple[list[str], str | None, bool] | None:
    """The columns, name and NULLS NOT DISTINCT of ``[CONSTRAINT name] UNIQUE [NULLS NOT
    DISTINCT] (cols)`` as a table element or ADD CONSTRAINT (None for anything else)."""
    name = None
    if isinstance(node, exp.Constraint) and len(node.expressions) == 1:
        name = identifier_name(node.this)
        node = node.expressions[0]
    if not isinstance(node, exp.UniqueColumnConstraint):
        return None
    schema = node.this
    if not isinstance(schema, exp.Schema):
        return None
    refuse_unique_options(node)
    return [identifier_name(c) for c in schema.expressions], name, bool(node.args.get("nulls"))


def refuse_unique_options(node: exp.UniqueColumnConstraint) -> None:
    params = node.args.get("include")
    if params is not None and any(
        params.args.get(k) for k in ("include", "with_storage", "tablespace", "using")
    ):
        raise FeatureNotSupported(
            f"UNIQUE constraint option {params.sql(dialect='postgres')} is not supported"
        )
    if node.args.get("index_type") or node.args.get("on_conflict"):
        raise FeatureNotSupported(f"{node.sql(dialect='postgres')} is not supported")


def drop_constraint_index(catalog: Catalog, table: TableInfo, name: str) -> bool:
    """ALTER TABLE ... DROP CONSTRAINT of a UNIQUE constraint: its index goes; whether it was one."""
    index = table.index_named(name)
    if index is None or not index.constraint:
        return False
    catalog.drop_index(name)
    return True


def drop_indexes_of_columns(catalog: Catalog, before: TableInfo, dropped: set[ColumnId]) -> None:
    """As PostgreSQL: dropping a column drops the indexes that use it (``before`` is the
    table as it was, so the dropped columns' names are known)."""
    for index in before.indexes:
        uses = {*index.columns, *index.include}
        if index.predicate is not None:
            parsed: exp.Expr = exp.maybe_parse(index.predicate, dialect="postgres")
            read = {identifier_name(c) for c in parsed.find_all(exp.Column)}
            uses |= {c.id for c in before.schema.columns if c.name in read}
        if uses & dropped:
            catalog.drop_index(index.name)


def rebuild_all(catalog: Catalog, name: str) -> None:
    """Rebuild every index of a table whose rows were rewritten (ADD PRIMARY KEY, ALTER COLUMN
    TYPE): their entries hold the old primary key and types, so each is made again, under
    its own name and definition, from the rows now there (all in one transaction)."""
    table = catalog.get_table(name)
    if not table.indexes:
        return
    txn = catalog.engine.begin()
    try:
        for index in table.indexes:
            catalog.drop_index(index.name, rebuilding=True)
            current = catalog.get_table(name)
            rebuilt = add_index(
                catalog, current,
                [table.schema.column(c).name for c in index.columns], index.name, txn,
                unique=index.unique,
                include=[table.schema.column(c).name for c in index.include],
                predicate=index.predicate, nulls_not_distinct=index.nulls_not_distinct,
                constraint=index.constraint,
            )  # fmt: skip
            new_index = rebuilt.index_named(index.name)
            assert new_index is not None, "the index was just made again"
            catalog.repoint_references(table.table_id, index.index_id, new_index.index_id)
        txn.commit()
    except BaseException:
        txn.rollback()
        raise
