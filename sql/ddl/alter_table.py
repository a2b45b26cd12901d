"""ALTER TABLE: rename the table or its columns, add and drop columns, set and drop defaults.

Schema changes follow kudu-schema-changes.txt: columns are known by internal
ID, so a rename changes only names, an added column gets a fresh ID (a
column dropped and added again under its old name never sees the old data)
and existing rows read it as its *read default*, the DEFAULT given when it
was added, without rewriting anything.  A later SET DEFAULT changes only
what new rows get, as in PostgreSQL.

All actions of one statement are checked first and then applied as one new
table definition, so either all of them take effect or none.  ADD PRIMARY
KEY on a table without one rewrites it (``primary_key``).  What Kudu cannot
do in place is refused with 0A000 and the reason: changing an existing
primary key, a column's type, or the partitioning (beyond ADD/DROP RANGE
PARTITION, partition_ddl.py).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import pyarrow as pa
from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from catalog import rekey
from catalog.catalog import Catalog
from catalog.constraints import CheckConstraint
from catalog.foreign_keys import ForeignKey
from catalog.indexes import IndexInfo
from catalog.table import TableInfo
from sql.common.datatypes import column_type
from sql.common.json_values import normalize_jsonb
from sql.common.names import identifier_name, table_name
from sql.common.result import Result
from sql.ddl import (
    check_constraints,
    foreign_keys,
    indexes,
    primary_key,
    rewrite,
    sequences,
    tables,
    view_dependencies,
)
from sql.frontend import parser
from sql.frontend.dialect import ValidateConstraint
from storage.data_type import ColumnId, DataType, TypeKind
from storage.errors import (
    CheckViolation,
    DbError,
    DuplicateColumn,
    DuplicateObject,
    DuplicateTable,
    FeatureNotSupported,
    InvalidTableDefinition,
    NotNullViolation,
    SqlSyntaxError,
    UndefinedColumn,
    UndefinedObject,
    UndefinedTable,
)
from storage.row_change import to_storage_values
from storage.schema import ColumnSchema, Schema
from storage.transaction import Transaction

Evaluator = Callable[[exp.Expr, DataType], object]
RowExists = Callable[[str], bool]
"""Runs a SELECT and says whether it returned a row (is the table empty, any NULLs, ...)."""
InTransaction = Callable[[Callable[[Transaction], None]], None]
"""Runs DDL that writes rows (an index's entries) in the session's transaction."""


def _own_transaction(catalog: Catalog) -> InTransaction:
    def run(write: Callable[[Transaction], None]) -> None:
        txn = catalog.engine.begin()
        try:
            write(txn)
            txn.commit()
        except BaseException:
            txn.rollback()
            raise

    return run


def alter_table(
    ast: exp.Alter,
    statement_text: str,
    catalog: Catalog,
    check_default: tables.DefaultChecker,
    evaluate: Evaluator,
    row_exists: RowExists,
    *,
    in_block: bool = False,
    in_transaction: InTransaction | None = None,
) -> Result:
    name = table_name(ast.this)
    table = catalog.find_table(name)
    actions = list(ast.args.get("actions") or [])
    owner = catalog.partition_owner(name) if table is None else None
    added = _added_primary_key(actions[0]) if len(actions) == 1 else None
    if owner is not None and added is not None:
        primary_key.add_partition_primary_key(owner, added[0], catalog, evaluate, in_block=in_block)
        return Result(command_tag="ALTER TABLE")
    if table is None:
        if ast.args.get("exists"):
            notice = UndefinedTable(
                f'relation "{name}" does not exist, skipping', severity="NOTICE"
            )
            return Result(command_tag="ALTER TABLE", notices=[notice])
        raise UndefinedTable(f'relation "{name}" does not exist')
    change = _TableChange(table, catalog, check_default, evaluate, row_exists)
    if len(actions) > 1 and any(
        isinstance(a, (exp.AlterRename, exp.RenameColumn)) for a in actions
    ):
        raise SqlSyntaxError(
            'syntax error at or near "RENAME"'
        )  # as PostgreSQL: RENAME stands alone
    renames = [a for a in actions if isinstance(a, exp.AlterRename)]
    if renames:
        column_rename = _column_rename_without_keyword(statement_text)
        if column_rename is not None:
            change.rename_column(*column_rename)
        else:
            change.rename_to(table_name(renames[0].this))
    for action in actions:
        if isinstance(action, exp.AlterRename):
            continue
        if isinstance(action, exp.RenameColumn):
            change.rename_column(identifier_name(action.this), identifier_name(action.args["to"]))
        elif isinstance(action, exp.ColumnDef):
            change.add_column(action)
        elif isinstance(action, exp.Drop) and (action.args.get("kind") or "").upper() == "COLUMN":
            for column in action.args.get("tables") or []:
                change.drop_column(
                    identifier_name(column), if_exists=bool(action.args.get("exists"))
                )
        elif isinstance(action, exp.AlterColumn):
            change.alter_column(action)
        elif (check := _added_check(action)) is not None:
            change.add_check(*check, not_valid=bool(ast.args.get("not_valid")))
        elif (
            isinstance(action, exp.AddConstraint)
            and len(action.expressions) == 1
            and ((reference := foreign_keys.declared(action.expressions[0])) is not None)
        ):
            change.add_foreign_key(*reference, not_valid=bool(ast.args.get("not_valid")))
        elif isinstance(action, ValidateConstraint):
            change.validate_check(identifier_name(action.this))
        elif (
            isinstance(action, exp.Drop) and (action.args.get("kind") or "").upper() == "CONSTRAINT"
        ):
            for node in action.args.get("tables") or []:
                change.drop_constraint(
                    identifier_name(node.this if isinstance(node, exp.Table) else node),
                    if_exists=bool(action.args.get("exists")),
                )
        elif (added := _added_primary_key(action)) is not None:
            if len(actions) > 1:
                raise FeatureNotSupported(
                    "ADD PRIMARY KEY beside other ALTER TABLE actions is not supported"
                )
            primary_key.add_primary_key(table, *added, catalog, evaluate, in_block=in_block)
            return Result(command_tag="ALTER TABLE")
        elif (
            isinstance(action, exp.AddConstraint)
            and len(action.expressions) == 1
            and (unique := indexes.unique_constraint(action.expressions[0])) is not None
        ):
            if len(actions) > 1:
                raise FeatureNotSupported(
                    "ADD UNIQUE beside other ALTER TABLE actions is not supported"
                )
            columns, constraint_name, nulls_not_distinct = unique
            run = in_transaction or _own_transaction(catalog)
            run(functools.partial(_add_unique, catalog, name, columns, constraint_name,
                                  nulls_not_distinct))  # fmt: skip
        elif isinstance(action, exp.AddConstraint):
            raise FeatureNotSupported(
                f"ALTER TABLE ... ADD {action.sql(dialect='postgres')[4:]} is not supported",
                detail="nyala has CHECK constraints and a primary key added to a table "
                "without one.",
            )
        else:
            raise FeatureNotSupported(
                f"ALTER TABLE {action.sql(dialect='postgres')} is not supported"
            )
    if change.changed and change.needs_rewrite:
        if in_block:
            raise FeatureNotSupported(
                "ALTER COLUMN ... TYPE that rewrites the table inside a transaction block is "
                "not supported"
            )
        new = change.result()
        catalog.rewrite_table(
            table,
            lambda tablet_id: dataclasses.replace(new, tablet_ids=(tablet_id,), partitions=()),
            lambda written: rewrite.copy_rows(catalog, table, written),
        )
        indexes.rebuild_all(catalog, table.name)
    elif change.changed:
        changed = catalog.replace_table(table, change.result())
        view_dependencies.carry_renames(catalog, table.name, change.name, change.renamed_columns)
        dropped = set(table.schema.column_ids) - set(changed.schema.column_ids)
        if dropped:
            indexes.drop_indexes_of_columns(catalog, table, dropped)
    for index_name in change.dropped_indexes:
        catalog.drop_index(index_name)
    return Result(command_tag="ALTER TABLE", notices=change.notices)


def _add_unique(
    catalog: Catalog,
    table_name_: str,
    columns: list[str],
    name: str | None,
    nulls_not_distinct: bool,
    txn: Transaction,
) -> None:
    """ADD [CONSTRAINT name] UNIQUE [NULLS NOT DISTINCT] (cols): a unique index, built now."""
    table = catalog.get_table(table_name_)
    if name is not None and (
        name in {c.name for c in table.checks} or table.index_named(name) is not None
    ):
        raise DuplicateObject(f'constraint "{name}" for relation "{table.name}" already exists')
    indexes.add_index(
        catalog, table, columns, name, txn, unique=True, constraint=True,
        nulls_not_distinct=nulls_not_distinct,
    )  # fmt: skip


def _added_check(action: exp.Expr) -> tuple[exp.CheckColumnConstraint, str | None] | None:
    """The CHECK and its name of ``ADD [CONSTRAINT name] CHECK (...)``."""
    if not isinstance(action, exp.AddConstraint) or len(action.expressions) != 1:
        return None
    return check_constraints.table_constraint(action.expressions[0])


def _added_primary_key(action: exp.Expr) -> tuple[exp.PrimaryKey, str | None] | None:
    """The key and constraint name of ``ADD [CONSTRAINT name] PRIMARY KEY (cols)``."""
    if not isinstance(action, exp.AddConstraint) or len(action.expressions) != 1:
        return None
    node = action.expressions[0]
    name = None
    if isinstance(node, exp.Constraint) and len(node.expressions) == 1:
        name = identifier_name(node.this)
        node = node.expressions[0]
    return (node, name) if isinstance(node, exp.PrimaryKey) else None


def _renamed(check: CheckConstraint, old: str, new: str) -> CheckConstraint:
    """``check`` with its references to column ``old`` made to ``new``."""
    if old not in check.columns:
        return check
    tree: exp.Expr = exp.maybe_parse(check.expression, dialect="postgres")
    for column in tree.find_all(exp.Column):
        if identifier_name(column.this) == old:
            column.set("this", exp.to_identifier(new, quoted=new != new.lower() or None))
    columns = tuple(new if c == old else c for c in check.columns)
    return dataclasses.replace(check, expression=tree.sql(dialect="postgres"), columns=columns)


def _column_rename_without_keyword(text: str) -> tuple[str, str] | None:
    """``RENAME a TO b`` (COLUMN left out), which sqlglot reads as a table rename."""
    tokens = parser.tokenize(text)
    for idx, token in enumerate(tokens[:-3]):
        if token.text.upper() == "RENAME" and tokens[idx + 2].text.upper() == "TO":
            first, target = tokens[idx + 1], tokens[idx + 3]
            if first.text.upper() not in ("TO", "COLUMN"):
                return _identifier(first), _identifier(target)
    return None


def _identifier(token: Token) -> str:
    text = token.text
    return text if token.token_type is TokenType.IDENTIFIER else text.lower()


class _TableChange:
    """The table definition the actions build, checked as each action is added."""

    def __init__(
        self,
        table: TableInfo,
        catalog: Catalog,
        check_default: tables.DefaultChecker,
        evaluate: Evaluator,
        row_exists: RowExists,
    ) -> None:
        self._table = table
        self._catalog = catalog
        self._check_default = check_default
        self._evaluate = evaluate
        self._row_exists = row_exists
        self._name = table.name
        self._columns: dict[ColumnId, ColumnSchema] = {c.id: c for c in table.schema.columns}
        self._order = list(table.column_order)
        self._next_id = table.next_column_id
        self._storage = list(table.column_storage)
        self._is_empty: bool | None = None
        self._checks = list(table.checks)
        self._foreign_keys = list(table.foreign_keys)
        self.renamed_columns: list[tuple[str, str]] = []
        self.needs_rewrite = False
        """A column's stored type widens: the rows are copied into a new tablet."""
        self.notices: list[DbError] = []
        self.changed = False
        self.dropped_indexes: list[str] = []
        """UNIQUE constraints dropped: their indexes go once the rest is applied."""

    def _find(self, name: str) -> ColumnSchema | None:
        return next((c for c in self._columns.values() if c.name == name), None)

    def _column(self, name: str) -> ColumnSchema:
        column = self._find(name)
        if column is None:
            raise UndefinedColumn(f'column "{name}" of relation "{self._name}" does not exist')
        return column

    def _key(self, column: ColumnSchema) -> bool:
        return column.id in self._table.schema.key_column_ids

    def _table_is_empty(self) -> bool:
        if self._is_empty is None:
            self._is_empty = not self._row_exists(f'SELECT 1 FROM "{self._table.name}" LIMIT 1')
        return self._is_empty

    def _set(self, column: ColumnSchema) -> None:
        self._columns[column.id] = column
        self.changed = True

    @property
    def name(self) -> str:
        """The table's name once the actions are applied."""
        return self._name

    def rename_to(self, new_name: str) -> None:
        if new_name != self._name and self._catalog.find_table(new_name) is not None:
            raise DuplicateTable(f'relation "{new_name}" already exists')
        self._name = new_name
        self.changed = True

    def rename_column(self, old: str, new: str) -> None:
        column = self._column(old)
        tables.check_not_system_column(new)
        if old != new and self._find(new) is not None:
            raise DuplicateColumn(f'column "{new}" of relation "{self._name}" already exists')
        self._set(dataclasses.replace(column, name=new))
        self._checks = [_renamed(check, old, new) for check in self._checks]
        self.renamed_columns.append((old, new))

    def _taken_names(self) -> list[str]:
        return [
            self._table.primary_key_name or f"{self._table.name}_pkey",
            *(c.name for c in self._checks),
            *(k.name for k in self._foreign_keys),
            *(i.name for i in self._table.indexes if i.constraint),
        ]

    def add_foreign_key(
        self, columns: list[str], reference: exp.Reference, name: str | None, *, not_valid: bool
    ) -> None:
        """ADD [CONSTRAINT name] FOREIGN KEY (cols) REFERENCES ... [NOT VALID]: existing rows
        are checked (23503) unless NOT VALID or the key's columns are added by this statement
        (their rows hold the default)."""
        taken = self._taken_names()
        if name is not None and name in taken:
            raise DuplicateObject(f'constraint "{name}" for relation "{self._name}" already exists')
        current = self.result()
        key = foreign_keys.foreign_key(
            self._catalog, current, columns, reference, name, taken, validated=not not_valid,
            number=max(
                (k.number for k in (*self._table.foreign_keys, *self._foreign_keys)), default=-1
            ) + 1,
        )  # fmt: skip
        if not not_valid and all(c in self._table.schema.column_ids for c in key.columns):
            self._probe_key(key)
        self._foreign_keys.append(key)
        self.changed = True

    def _probe_key(self, key: ForeignKey) -> None:
        foreign_keys.validate(self._catalog, self._table, key, self._row_exists)

    def add_check(
        self,
        node: exp.CheckColumnConstraint,
        name: str | None,
        *,
        not_valid: bool,
        column: str | None = None,
    ) -> None:
        """ADD [CONSTRAINT name] CHECK (...) [NOT VALID]: existing rows are checked (23514)
        unless NOT VALID; a name in use is 42710."""
        taken = self._taken_names()
        if name is not None and name in taken:
            raise DuplicateObject(f'constraint "{name}" for relation "{self._name}" already exists')
        number = max((c.number for c in self._checks), default=-1) + 1
        names = [c.name for c in self._columns.values() if c.id in self._order]
        check = check_constraints.check_constraint(
            node, name, self._name, names, taken, number, column=column, validated=not not_valid
        )
        if not not_valid:
            self._probe(check)
        self._checks.append(check)
        self.changed = True

    def _probe(self, check: CheckConstraint) -> None:
        if self._row_exists(check_constraints.violation_probe(self._table.name, check)):
            raise CheckViolation(
                f'check constraint "{check.name}" of relation "{self._name}" is violated by '
                "some row"
            )

    def validate_check(self, name: str) -> None:
        """VALIDATE CONSTRAINT: check the existing rows against a NOT VALID constraint."""
        keys = [k for k in self._foreign_keys if k.name == name]
        if keys:
            if not keys[0].validated:
                self._probe_key(keys[0])
                index = self._foreign_keys.index(keys[0])
                self._foreign_keys[index] = dataclasses.replace(keys[0], validated=True)
                self.changed = True
            return
        found = [c for c in self._checks if c.name == name]
        if not found:
            raise UndefinedObject(f'constraint "{name}" of relation "{self._name}" does not exist')
        if not found[0].validated:
            self._probe(found[0])
            index = self._checks.index(found[0])
            self._checks[index] = dataclasses.replace(found[0], validated=True)
            self.changed = True

    def drop_constraint(self, name: str, *, if_exists: bool) -> None:
        if name == (self._table.primary_key_name or f"{self._table.name}_pkey") and not (
            rekey.has_hidden_key(self._table)
        ):
            raise FeatureNotSupported(
                "dropping the primary key is not supported",
                detail="A table's primary key is fixed when it is created, as in Kudu.",
            )
        index = self._table.index_named(name)
        if index is not None and index.constraint:
            self.dropped_indexes.append(name)
            return
        keys = [k for k in self._foreign_keys if k.name != name]
        if len(keys) != len(self._foreign_keys):
            self._foreign_keys = keys
            self.changed = True
            return
        kept = [c for c in self._checks if c.name != name]
        if len(kept) == len(self._checks):
            message = f'constraint "{name}" of relation "{self._name}" does not exist'
            if if_exists:
                self.notices.append(UndefinedObject(message + ", skipping", severity="NOTICE"))
                return
            raise UndefinedObject(message)
        self._checks = kept
        self.changed = True

    def add_column(self, node: exp.ColumnDef) -> None:
        definition = tables.column_definition(node, self._check_default)
        if definition.uniques:
            raise FeatureNotSupported("ADD COLUMN ... UNIQUE is not supported",
                                      hint="Add the column, then ADD UNIQUE (column).")  # fmt: skip
        if self._find(definition.name) is not None:
            message = f'column "{definition.name}" of relation "{self._name}" already exists'
            if node.args.get("exists"):
                self.notices.append(DuplicateColumn(message + ", skipping", severity="NOTICE"))
                return
            raise DuplicateColumn(message)
        if definition.is_key:
            raise FeatureNotSupported(
                f'cannot add primary key column "{definition.name}"',
                detail="A table's primary key is fixed when it is created, as in Kudu.",
            )
        if definition.serial is not None or (
            definition.default is not None and sequences.default_sequence(definition.default)
        ):
            raise FeatureNotSupported(
                f'cannot add serial or identity column "{definition.name}" to an existing table',
                hint="Create the table with it, or add a plain column and fill it.",
            )
        encoding, compression = tables.check_storage_attributes(
            definition.name, definition.type, definition.attributes
        )
        read_default = None
        if definition.default is not None:
            default: exp.Expr = exp.maybe_parse(definition.default, dialect="postgres")
            if tables.is_volatile(default) and not self._table_is_empty():
                raise FeatureNotSupported(
                    f'cannot add column "{definition.name}" with a volatile default to a table '
                    "with rows: each row would need its own value",
                    hint="Add the column without the default, fill it with UPDATE, then SET "
                    "DEFAULT.",
                )
            value = self._evaluate(default, definition.type)
            if definition.type.text_type == "jsonb" and isinstance(value, str):
                value = normalize_jsonb(value)  # DuckDB's JSON cast keeps the text as given
            read_default = to_storage_values(
                pa.array([value], definition.type.arrow_type), definition.type
            )[0]
        if not definition.nullable and read_default is None and not self._table_is_empty():
            raise NotNullViolation(
                f'column "{definition.name}" of relation "{self._name}" contains null values'
            )
        column_id = ColumnId(self._next_id)
        self._next_id += 1
        self._order.append(column_id)
        if definition.attributes:
            self._storage.append((column_id, encoding, compression))
        self._set(
            ColumnSchema(
                column_id, definition.name, definition.type, definition.nullable,
                definition.default, encoding, compression, read_default,
            )
        )  # fmt: skip
        if definition.checks and not self._table_is_empty():
            raise FeatureNotSupported(
                f'adding column "{definition.name}" with a CHECK constraint to a table with rows '
                "is not supported",
                hint="Add the column, then ADD CONSTRAINT ... CHECK.",
            )
        for check_node, named in definition.checks:
            self.add_check(check_node, named, not_valid=True, column=definition.name)
            self._checks[-1] = dataclasses.replace(self._checks[-1], validated=True)
        for reference, named in definition.references:
            self.add_foreign_key([definition.name], reference, named, not_valid=False)

    def drop_column(self, name: str, *, if_exists: bool) -> None:
        column = self._find(name)
        if column is None:
            message = f'column "{name}" of relation "{self._name}" does not exist'
            if if_exists:
                self.notices.append(UndefinedColumn(message + ", skipping", severity="NOTICE"))
                return
            raise UndefinedColumn(message)
        if self._key(column):
            raise FeatureNotSupported(
                f'cannot drop primary key column "{name}"',
                detail="A table's primary key is fixed when it is created, as in Kudu.",
            )
        view_dependencies.check_column_drop(self._catalog, self._table.name, column.name)
        del self._columns[column.id]
        self._order.remove(column.id)
        # As PostgreSQL: the table constraints that use the column go with it.
        self._checks = [c for c in self._checks if name not in c.columns]
        self._foreign_keys = [k for k in self._foreign_keys if column.id not in k.columns]
        self._storage = [entry for entry in self._storage if entry[0] != column.id]
        self.changed = True

    def alter_column(self, node: exp.AlterColumn) -> None:
        column = self._column(identifier_name(node.this))
        if node.args.get("dtype") is not None:
            self._set_type(column, node)
        elif node.args.get("allow_null") is not None:
            self._set_nullable(column, bool(node.args["allow_null"]))
        elif node.args.get("drop"):
            self._set(dataclasses.replace(column, default_sql=None))
        elif node.args.get("default") is not None:
            default = sequences.check_sequence_default(
                node.args["default"], self._catalog
            ) or tables.column_default(
                node.args["default"], column.name, column.type, self._check_default
            )
            self._set(dataclasses.replace(column, default_sql=default))
        else:
            raise FeatureNotSupported(
                f"ALTER TABLE {node.sql(dialect='postgres')} is not supported"
            )

    def _set_type(self, column: ColumnSchema, node: exp.AlterColumn) -> None:
        """ALTER COLUMN ... TYPE for the changes that leave every stored value as it is: a
        string type to text or to a varchar or char at least as long (char(n) is stored
        without its padding, which PostgreSQL drops when it becomes text anyway)."""
        new = column_type(node.args["dtype"])
        old = column.type
        if new == old:
            return
        same_values = (
            old.is_string
            and new.is_string
            and not new.text_type  # text becomes a uuid or a document only by conversion
            and (not new.blank_padded or old.blank_padded)
            and (new.length is None or (old.length is not None and new.length >= old.length))
        )
        widening = (
            old.is_integer and new.is_integer and new.integer_range[1] >= old.integer_range[1]
        ) or (
            old.kind is TypeKind.DECIMAL
            and new.kind is TypeKind.DECIMAL
            and new.scale == old.scale
            and (new.precision or 0) >= (old.precision or 0)
        )
        if node.args.get("using") or not (same_values or widening):
            raise FeatureNotSupported(
                f'cannot change the type of column "{column.name}" from {old.pg_name()} to '
                f"{new.pg_name()}",
                detail="Supported: a string type to text or to a varchar or char at least as "
                "long (no rewrite), and integer or numeric widening (the table is rewritten).",
            )
        self.needs_rewrite = self.needs_rewrite or widening
        self._set(dataclasses.replace(column, type=new))

    def _set_nullable(self, column: ColumnSchema, nullable: bool) -> None:
        if self._key(column):
            if nullable:
                raise InvalidTableDefinition(f'column "{column.name}" is in a primary key')
            return
        original = self._table.schema.find_id(column.id)
        if (
            not nullable
            and original is not None
            and self._row_exists(
                f'SELECT 1 FROM "{self._table.name}" WHERE "{original.name}" IS NULL LIMIT 1'
            )
        ):
            raise NotNullViolation(
                f'column "{column.name}" of relation "{self._name}" contains null values'
            )
        self._set(dataclasses.replace(column, nullable=nullable))

    def result(self) -> TableInfo:
        schema = self._table.schema
        key = [self._columns[c.id] for c in schema.key_columns]
        rest = [self._columns[c] for c in self._order if c not in schema.key_column_ids]
        return dataclasses.replace(
            self._table,
            name=self._name,
            schema=Schema(tuple(key + rest), schema.num_key_columns),
            next_column_id=self._next_id,
            column_order=tuple(self._order),
            column_storage=tuple(self._storage),
            sequences=tuple(i for i in self._table.sequences if i.column_id in self._columns),
            checks=tuple(self._checks),
            foreign_keys=tuple(self._foreign_keys),
            indexes=tuple(self._renamed_predicate(i) for i in self._table.indexes),
        )

    def _renamed_predicate(self, index: IndexInfo) -> IndexInfo:
        """A partial index's WHERE with this statement's column renames carried into it."""
        if index.predicate is None or not self.renamed_columns:
            return index
        tree: exp.Expr = exp.maybe_parse(index.predicate, dialect="postgres")
        for old, new in self.renamed_columns:
            for column in tree.find_all(exp.Column):
                if identifier_name(column.this) == old:
                    column.set("this", exp.to_identifier(new, quoted=new != new.lower() or None))
        return dataclasses.replace(index, predicate=tree.sql(dialect="postgres"))
