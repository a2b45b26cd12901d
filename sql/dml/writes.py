"""INSERT, UPDATE and DELETE: DuckDB computes the rows, storage applies them by primary key.

Each statement is planned as a SELECT over the target table (and any FROM or
USING tables): for INSERT the new rows cast to the column types, for UPDATE
the full new image of each matching row, for DELETE the matching rows.
DuckDB evaluates it with PostgreSQL semantics like any query; the rows are
then checked against the table's constraints (NOT NULL, varchar length) and
written through the transaction as one batch per tablet.  RETURNING runs as
a second query over the written rows.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa
from sqlglot import exp

from catalog.catalog import Catalog
from catalog.table import TableInfo
from sql.common.names import identifier_name, listed_columns, table_name
from sql.dml import conflict, key_writes, recheck
from sql.dml.checks import enforce, plan_checks
from sql.dml.referential_checks import (
    check_new_rows,
    plan_references,
    truncated_with_referencing,
)
from sql.dml.write_batches import OLD_KEY, by_tablet, check_constraints, storage_batch
from sql.dml.write_plan import SourceRows, WritePlan
from sql.execution import index_writes
from sql.execution.executor import ScanStats
from sql.execution.runner import QueryRunner
from sql.execution.sequences import SessionSequences
from sql.frontend.dialect import Upsert
from sql.planner.compiled_query import CompiledQuery, compile_query
from sql.planner.numeric_casts import assignment_cast
from sql.planner.transpile import SessionFacts
from storage.data_type import ColumnId
from storage.errors import (
    FeatureNotSupported,
    GeneratedAlways,
    SqlSyntaxError,
    UndefinedColumn,
)
from storage.predicate import ScanSpec
from storage.row_lock_mode import RowLockMode
from storage.schema import ColumnSchema
from storage.transaction import Transaction


def _cast(node: exp.Expr, column: ColumnSchema) -> exp.Expr:
    return assignment_cast(node, column.type)


def _note_parameter(value: exp.Expr, column: ColumnSchema, types: dict[int, int]) -> None:
    """Remember that ``$n`` is written straight into ``column``: it takes the column's type."""
    if isinstance(value, exp.Parameter) and isinstance(value.this, exp.Literal):
        types.setdefault(int(value.this.name), column.type.pg_oid)


def _apply_parameter_types(oids: list[int], declared: list[int], types: dict[int, int]) -> None:
    for number, oid in types.items():
        index = number - 1
        if index < len(oids) and not (index < len(declared) and declared[index]):
            oids[index] = oid


def _default(column: ColumnSchema) -> exp.Expr:
    if column.default_sql is None:
        return exp.Null()
    return exp.maybe_parse(column.default_sql, dialect="postgres")


def _col(table_alias: str, column: ColumnSchema) -> exp.Column:
    return exp.column(column.name, table_alias, quoted=True)


def _plan_returning(
    node: exp.Returning | None,
    table: TableInfo,
    alias: str,
    runner: QueryRunner,
    facts: SessionFacts,
    param_oids: list[int],
) -> CompiledQuery | None:
    if node is None:
        return None
    select = exp.select(*[e.copy() for e in node.expressions]).from_(
        exp.Table(
            this=exp.to_identifier(table.name, quoted=True),
            alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True)),
        )
    )
    bound = runner.bind(select, param_oids)
    return compile_query(bound, facts)


def plan_insert(
    ast: exp.Insert, runner: QueryRunner, facts: SessionFacts, declared: list[int]
) -> WritePlan:
    target, names = listed_columns(ast.this)
    table = _relation(runner, table_name(target))
    alias = target.alias_or_name
    if names is None:
        targets = list(table.columns)
    else:
        targets = []
        for name in names:
            column = table.schema.find(name)
            if column is None:
                raise UndefinedColumn(f'column "{name}" of relation "{table.name}" does not exist')
            targets.append(column)
    source = ast.expression
    if source is None and ast.args.get("default"):
        source = exp.Values(
            expressions=[exp.Tuple(expressions=[exp.var("DEFAULT") for _ in targets])]
        )
    overriding = ast.args.get("overriding")
    ignored = _user_values_ignored(table, targets, source) if overriding == "USER" else set()
    if overriding is None:
        _check_generated_always(table, targets, source)
    plain_values = (
        source.copy()
        if isinstance(source, exp.Values)
        and ast.args.get("conflict") is None
        and not isinstance(ast, Upsert)
        and ast.args.get("returning") is None
        else None
    )
    src_alias = "__nyala_src"
    direct: dict[int, int] = {}
    first_key = table.schema.key_columns[0]
    key_values: list[exp.Expr] | None = [] if isinstance(source, exp.Values) else None
    if isinstance(source, exp.Values):
        for row in source.expressions:
            if len(row.expressions) > len(targets):
                raise SqlSyntaxError("INSERT has more expressions than target columns")
            if len(row.expressions) < len(targets) and names is not None:
                raise SqlSyntaxError("INSERT has more target columns than expressions")
            values = list(row.expressions)
            for index, value in enumerate(values):
                column = targets[index]
                _note_parameter(value, column, direct)
                if _is_default(value):
                    value = _default(column)
                if column.id == first_key.id and key_values is not None:
                    key_values.append(value.copy())
                values[index] = _cast(value.copy(), column)
            row.set("expressions", values)
        width = max(len(r.expressions) for r in source.expressions)
        targets = targets[:width]
    elif not isinstance(source, (exp.Select, exp.SetOperation)):
        raise FeatureNotSupported("this form of INSERT is not supported")
    else:
        produced = _source_width(source)
        if produced is not None and names is None and produced < len(targets):
            targets = targets[:produced]
        if produced is not None:
            _compare_width(produced, len(targets))
    src_names = [f"c{i}" for i in range(len(targets))]
    alias_node = exp.TableAlias(
        this=exp.to_identifier(src_alias, quoted=True),
        columns=[exp.to_identifier(n, quoted=True) for n in src_names],
    )
    if isinstance(source, exp.Values):
        derived: exp.Expr = exp.Values(expressions=source.expressions, alias=alias_node)
    else:
        derived = exp.Subquery(this=_ordered_as_table(source), alias=alias_node)
    by_id = {c.id: i for i, c in enumerate(targets)}
    projections = []
    for column in table.schema.columns:
        if column.id in by_id and column.id not in ignored:
            expr: exp.Expr = exp.column(src_names[by_id[column.id]], src_alias, quoted=True)
        else:
            expr = _default(column)
        projections.append(exp.alias_(_cast(expr, column), column.name, quoted=True))
    select = exp.select(*projections).from_(derived)
    action = None
    if ast.args.get("conflict") is not None or isinstance(ast, Upsert):
        select, action = conflict.wrap(select, table, alias, ast, targets, key_values)
    bound = runner.bind(select, declared)
    _apply_parameter_types(bound.param_oids, declared, direct)
    _check_width(bound.ast, src_alias, len(targets))
    compiled = compile_query(bound, facts)
    returning = _plan_returning(
        ast.args.get("returning"), table, alias, runner, facts, bound.param_oids
    )
    oids = _merge_oids(bound.param_oids, returning)
    columns = list(table.schema.columns)
    fast = None
    references = plan_references(runner.catalog, table)
    constants = None
    if plain_values is not None:
        constants = key_writes.plan_insert(table, targets, plain_values, oids)
    checks = plan_checks(table, alias, runner, facts)
    fast = constants if not table.indexes and references is None and checks is None else None
    return WritePlan(
        "INSERT", table, compiled, columns, returning, oids, conflict=action,
        key_write=fast, checks=checks, references=references,
        constants=constants if fast is None else None,
    )  # fmt: skip


def _ordered_as_table(source: exp.Expr) -> exp.Expr:
    """The source, read as a table first when it has an ORDER BY.

    Renaming a derived table's columns (``__nyala_src(c0, c1)``) renames its
    projections too, so an ORDER BY that names a source column would no longer find it.
    """
    if source.args.get("order") is None:
        return source.copy()
    alias = exp.TableAlias(this=exp.to_identifier("__nyala_ordered"))
    return exp.select("*").from_(exp.Subquery(this=source.copy(), alias=alias))


def _is_default(node: exp.Expr) -> bool:
    """The DEFAULT keyword: a Var in VALUES, an unquoted column named default in SET."""
    if isinstance(node, exp.Column) and not node.table:
        return not node.this.quoted and node.name.upper() == "DEFAULT"
    return isinstance(node, exp.Var) and node.name.upper() == "DEFAULT"


def _user_values_ignored(
    table: TableInfo, targets: list[ColumnSchema], source: exp.Expr | None
) -> set[ColumnId]:
    """OVERRIDING USER VALUE: identity columns take their sequence's value whatever is given.

    In VALUES the given values become DEFAULT (so the key-write path sees them so too);
    a SELECT's are dropped when the rows are projected: those are the ids returned.
    """
    ids = {c.id for c in targets if (info := table.sequence_of(c.id)) and info.identity}
    if not isinstance(source, exp.Values):
        return ids
    for row in source.expressions:
        row.set(
            "expressions",
            [
                exp.var("DEFAULT") if i < len(targets) and targets[i].id in ids else value
                for i, value in enumerate(row.expressions)
            ],
        )
    return set()


def _always_identity(table: TableInfo, column: ColumnSchema) -> bool:
    info = table.sequence_of(column.id)
    return info is not None and info.identity == "a"


def _check_generated_always(
    table: TableInfo, targets: list[ColumnSchema], source: exp.Expr | None
) -> None:
    """PostgreSQL refuses a value for a GENERATED ALWAYS identity column (428C9)."""
    for index, column in enumerate(targets):
        if not _always_identity(table, column):
            continue
        if isinstance(source, exp.Values) and all(
            index >= len(row.expressions) or _is_default(row.expressions[index])
            for row in source.expressions
        ):
            continue
        raise GeneratedAlways(
            f'cannot insert a non-DEFAULT value into column "{column.name}"',
            detail=f'Column "{column.name}" is an identity column defined as GENERATED ALWAYS.',
        )


def _source_width(source: exp.Expr) -> int | None:
    """How many columns an INSERT's SELECT yields, when that is known before binding."""
    first = source
    while isinstance(first, exp.SetOperation):
        first = first.this
    if isinstance(first, exp.Select) and not any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star)
        for e in first.expressions
    ):
        return len(first.expressions)
    return None


def _compare_width(produced: int, width: int) -> None:
    if produced > width:
        raise SqlSyntaxError("INSERT has more expressions than target columns")
    if produced < width:
        raise SqlSyntaxError("INSERT has more target columns than expressions")


def _check_width(ast: exp.Expr, src_alias: str, width: int) -> None:
    for sub in ast.find_all(exp.Subquery):
        if sub.alias == src_alias:
            inner = sub.this
            while isinstance(inner, exp.SetOperation):
                inner = inner.this
            if isinstance(inner, exp.Select) and len(inner.expressions) > width:
                raise SqlSyntaxError("INSERT has more expressions than target columns")
            if isinstance(inner, exp.Select) and len(inner.expressions) < width:
                raise SqlSyntaxError("INSERT has more target columns than expressions")


def _merge_oids(first: list[int], returning: CompiledQuery | None) -> list[int]:
    if returning is None or len(returning.param_oids) <= len(first):
        return first
    return first + returning.param_oids[len(first) :]


def _target(node: exp.Table, runner: QueryRunner) -> tuple[TableInfo, str]:
    if runner.catalog.find_view(table_name(node)) is not None:
        raise FeatureNotSupported(f'cannot write to view "{table_name(node)}"')
    return _relation(runner, table_name(node)), node.alias_or_name


def _relation(runner: QueryRunner, name: str) -> TableInfo:
    """The table written: a table, or a partition by its own name (rows routed within it)."""
    return runner.catalog.table_or_partition(name)


def plan_update(
    ast: exp.Update, runner: QueryRunner, facts: SessionFacts, declared: list[int]
) -> WritePlan:
    table, alias = _target(ast.this, runner)
    changes: dict[int, exp.Expr] = {}
    direct: dict[int, int] = {}
    for assignment in ast.expressions:
        name = identifier_name(assignment.this)
        column = table.schema.find(name)
        if column is None:
            raise UndefinedColumn(f'column "{name}" of relation "{table.name}" does not exist')
        value = assignment.expression
        if _always_identity(table, column) and not _is_default(value):
            raise GeneratedAlways(
                f'column "{column.name}" can only be updated to DEFAULT',
                detail=f'Column "{column.name}" is an identity column defined as GENERATED ALWAYS.',
            )
        if _is_default(value):
            value = _default(column)
        _note_parameter(value, column, direct)
        changes[column.id] = value
    projections = []
    for column in table.schema.columns:
        expr = changes.get(column.id)
        expr = _cast(expr.copy(), column) if expr is not None else _col(alias, column)
        projections.append(exp.alias_(expr, column.name, quoted=True))
    changes_key = any(c in table.schema.key_column_ids for c in changes)
    if changes_key:
        projections.extend(
            exp.alias_(_col(alias, c), f"{OLD_KEY}{i}", quoted=True)
            for i, c in enumerate(table.schema.key_columns)
        )
    select = exp.select(*projections).from_(ast.this.copy())
    if ast.args.get("from_") is not None:
        for source in ast.args["from_"].expressions or [ast.args["from_"].this]:
            select = select.join(source.copy(), join_type="cross")
    if ast.args.get("where") is not None:
        select = select.where(ast.args["where"].this.copy())
    bound = runner.bind(select, declared)
    _apply_parameter_types(bound.param_oids, declared, direct)
    compiled = compile_query(bound, facts)
    written = [
        c
        for c in table.schema.columns
        if changes_key or c.id in changes or c.id in table.schema.key_column_ids
    ]
    returning = _plan_returning(
        ast.args.get("returning"), table, alias, runner, facts, bound.param_oids
    )
    oids = _merge_oids(bound.param_oids, returning)
    references = plan_references(runner.catalog, table)
    return WritePlan(
        "UPDATE",
        table,
        compiled,
        written,
        returning,
        oids,
        changes_key=changes_key,
        key_update=any(
            i.unique and i.predicate is None and set(i.columns) & changes.keys()
            for i in table.indexes
        ),
        key_write=key_writes.plan_update(ast, table, oids)
        if not table.checks and not table.indexes and references is None
        else None,
        checks=plan_checks(table, alias, runner, facts),
        references=references,
    )


def plan_row_lock(
    ast: exp.Update,
    mode: RowLockMode,
    runner: QueryRunner,
    facts: SessionFacts,
    declared: list[int],
) -> WritePlan:
    """The row locks of a ``SELECT ... FOR <mode>``, planned as ``ast`` (an UPDATE that sets
    a column to itself, so it finds and re-checks rows as an UPDATE does) writing nothing."""
    plan = plan_update(ast, runner, facts, declared)
    return dataclasses.replace(
        plan, key_write=None, checks=None, references=None, key_update=False, lock_mode=mode
    )


def plan_delete(
    ast: exp.Delete, runner: QueryRunner, facts: SessionFacts, declared: list[int]
) -> WritePlan:
    table, alias = _target(ast.this, runner)
    projections = [exp.alias_(_col(alias, c), c.name, quoted=True) for c in table.schema.columns]
    select = exp.select(*projections).from_(ast.this.copy())
    for source in ast.args.get("using") or []:
        select = select.join(source.copy(), join_type="cross")
    if ast.args.get("where") is not None:
        select = select.where(ast.args["where"].this.copy())
    bound = runner.bind(select, declared)
    compiled = compile_query(bound, facts)
    returning = _plan_returning(
        ast.args.get("returning"), table, alias, runner, facts, bound.param_oids
    )
    oids = _merge_oids(bound.param_oids, returning)
    references = plan_references(runner.catalog, table)
    return WritePlan(
        "DELETE",
        table,
        compiled,
        list(table.schema.key_columns),
        returning,
        oids,
        key_write=key_writes.plan_delete(ast, table, oids)
        if not table.indexes and references is None
        else None,
        references=references,
    )


def execute_write(
    plan: WritePlan,
    runner: SourceRows,
    txn: Transaction,
    params: list[Any],
    now: Any,
    stats: ScanStats | None = None,
    sequences: SessionSequences | None = None,
) -> tuple[int, pa.Table | None]:
    """Apply the plan; return the row count and the rows RETURNING reads (if any).
    ``sequences`` lets a key write draw its SERIAL values without DuckDB."""
    if plan.key_write is not None and stats is None and sequences is not None:
        count = key_writes.execute(plan.key_write, txn, params, sequences, now)
        if count is not None:
            return count, None
    if plan.repeats != 1:
        return _each_row(plan, runner, txn, params, now, stats, sequences), None
    if plan.constants is not None:
        key_writes.check_constants(plan.constants, params, now)
    rows = runner.run_to_table(plan.source, txn, params, now, stats=stats)
    if rows is None or rows.num_rows == 0:
        return 0, None
    names = [c.name for c in plan.table.schema.columns]
    rows = rows.rename_columns(names + rows.column_names[len(names) :])
    if plan.conflict is not None:
        return recheck.write_with_conflicts(plan, runner, txn, params, now, rows, plan.conflict)
    if plan.kind == "INSERT":
        rows = check_constraints(plan.table, rows, plan.written)
        enforce(plan.table, plan.checks, runner, txn, rows, now)
        count = 0
        for tablet_id, batch in by_tablet(plan.table, storage_batch(rows, plan.written)):
            count += txn.insert(tablet_id, batch, constraint_name=f"{plan.table.name}_pkey")
        if plan.table.indexes:
            index_writes.add_entries(plan.table, txn, rows)
        check_new_rows(plan.references, txn, rows, None)
        return count, rows
    return recheck.modify(plan, runner, txn, params, now, rows)


def _each_row(
    plan: WritePlan,
    runner: SourceRows,
    txn: Transaction,
    params: list[Any],
    now: Any,
    stats: ScanStats | None,
    sequences: SessionSequences | None,
) -> int:
    """A derived multi-row INSERT the general way: its one-row plan once per row, in order
    (a failing row fails the statement, whose transaction or savepoint undoes the rest)."""
    width = len(plan.param_oids) // plan.repeats
    one = dataclasses.replace(plan, repeats=1, key_write=None, param_oids=plan.param_oids[:width])
    return sum(
        execute_write(one, runner, txn, params[at : at + width], now, stats, sequences)[0]
        for at in range(0, len(plan.param_oids), width)
    )


def truncate(ast: exp.TruncateTable, catalog: Catalog, txn: Transaction) -> None:
    """Delete every row of the named tables in this transaction (all or nothing with it).

    ``ONLY`` changes nothing (no table inherits from another).  ``RESTART IDENTITY``
    starts the tables' sequences over at once, whatever becomes of the transaction."""
    tables = [catalog.table_or_partition(table_name(t)) for t in ast.expressions]
    cascade = str(ast.args.get("option") or "").upper() == "CASCADE"
    tables = truncated_with_referencing(catalog, tables, cascade=cascade)
    for table in tables:
        own = catalog.find_table(table.name) is table  # a partition's sequences are its root's
        if own and (ast.args.get("identity") or "").upper() == "RESTART":
            catalog.restart_sequences(table)
        key_ids = table.schema.key_column_ids
        spec = ScanSpec(projection=key_ids)
        for tablet_id in table.tablet_ids:
            batches = list(txn.scan(tablet_id, spec))
            if batches:
                txn.delete(
                    tablet_id, pa.Table.from_batches(batches).combine_chunks().to_batches()[0]
                )
        index_writes.truncate(table, txn)
