"""Foreign keys in CREATE TABLE and ALTER TABLE: read, resolve against the parent, name, validate.

The referenced columns must be the parent's primary key or the columns of one
of its UNIQUE indexes (42830 otherwise), of comparable types (42804); as in
PostgreSQL an unnamed key is called ``<table>_<columns>_fkey``.  Existing rows
are validated by one anti-join query (``violation_probe``) unless NOT VALID.
Enforcement on writes is in sql/dml (``dml.referential_checks``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sqlglot import exp

from catalog.catalog import Catalog
from catalog.constraints import choose_name
from catalog.foreign_keys import (
    CASCADE,
    MATCH_FULL,
    MATCH_SIMPLE,
    NO_ACTION,
    RESTRICT,
    SET_DEFAULT,
    SET_NULL,
    ForeignKey,
)
from catalog.table import TableInfo
from catalog.temp_tables import is_temporary, user_name
from sql.common.names import fold, identifier_name, table_name
from storage.data_type import ColumnId, DataType, TypeKind
from storage.errors import (
    DatatypeMismatch,
    FeatureNotSupported,
    ForeignKeyViolation,
    InvalidColumnReference,
    InvalidForeignKey,
    InvalidTableDefinition,
    SqlSyntaxError,
    UndefinedColumn,
    UndefinedObject,
    WrongObjectType,
)
from storage.schema import ColumnSchema

_ACTIONS = {
    "NO ACTION": NO_ACTION,
    "RESTRICT": RESTRICT,
    "CASCADE": CASCADE,
    "SET NULL": SET_NULL,
    "SET DEFAULT": SET_DEFAULT,
}
_NUMERIC = {
    TypeKind.INT8, TypeKind.INT16, TypeKind.INT32, TypeKind.INT64, TypeKind.FLOAT,
    TypeKind.DOUBLE, TypeKind.DECIMAL,
}  # fmt: skip
_TEXT = {TypeKind.VARCHAR, TypeKind.STRING}
_TIME = {TypeKind.DATE, TypeKind.TIMESTAMP}


def _family(dtype: DataType) -> object:
    """Types PostgreSQL has an equality operator between fall in one family."""
    for family in (_NUMERIC, _TEXT, _TIME):
        if dtype.kind in family:
            return frozenset(family)
    return dtype.kind


def declared(node: exp.Expr) -> tuple[list[str], exp.Reference, str | None] | None:
    """The columns, reference and name of a table constraint ``[CONSTRAINT name] FOREIGN KEY
    (cols) REFERENCES ...``, or None when ``node`` is something else."""
    name = None
    if isinstance(node, exp.Constraint) and len(node.expressions) == 1:
        name = identifier_name(node.this)
        node = node.expressions[0]
    if not isinstance(node, exp.ForeignKey):
        return None
    reference = node.args.get("reference")
    if not isinstance(reference, exp.Reference):
        raise SqlSyntaxError("FOREIGN KEY needs a REFERENCES clause")
    return [identifier_name(c) for c in node.expressions], reference, name


def _parent(reference: exp.Reference) -> tuple[str, list[str]]:
    target = reference.this
    if isinstance(target, exp.Schema):
        return table_name(target.this), [identifier_name(c) for c in target.expressions]
    return table_name(target), []


def _unquoted(word: str) -> str:
    if len(word) > 1 and word[0] == word[-1] == '"':
        return word[1:-1].replace('""', '"')
    return fold(word)


def _options(reference: exp.Reference) -> dict[str, object]:
    found: dict[str, object] = {}
    deferrable: bool | None = None
    for option in reference.args.get("options") or []:
        words = " ".join(str(option).upper().split())
        if words.startswith("ON DELETE "):
            action, _, listed = words[len("ON DELETE ") :].partition(" (")
            found["on_delete"] = _ACTIONS[action]
            if listed:
                text = str(option)
                found["set_columns"] = [
                    _unquoted(n.strip()) for n in text[text.index("(") + 1 : -1].split(",")
                ]
        elif words.startswith("ON UPDATE "):
            found["on_update"] = _ACTIONS[words[len("ON UPDATE ") :]]
        elif words == "MATCH SIMPLE":
            found["match"] = MATCH_SIMPLE
        elif words == "MATCH FULL":
            found["match"] = MATCH_FULL
        elif words == "MATCH PARTIAL":
            raise FeatureNotSupported("MATCH PARTIAL not yet implemented")
        elif words in ("DEFERRABLE", "NOT DEFERRABLE"):
            deferrable = words == "DEFERRABLE"
        elif words in ("INITIALLY DEFERRED", "INITIALLY IMMEDIATE"):
            found["deferred"] = words == "INITIALLY DEFERRED"
        else:
            raise FeatureNotSupported(f"foreign key option {words} is not supported")
    if found.get("deferred") and deferrable is False:
        raise SqlSyntaxError("constraint declared INITIALLY DEFERRED must be DEFERRABLE")
    found["deferrable"] = bool(deferrable) or bool(found.get("deferred"))
    return found


def _column(table: TableInfo, name: str) -> ColumnSchema:
    column = table.schema.find(name)
    if column is None or column.id not in table.column_order:
        raise UndefinedColumn(
            f'column "{name}" referenced in foreign key constraint does not exist'
        )
    return column


def foreign_key(
    catalog: Catalog,
    child: TableInfo,
    columns: list[str],
    reference: exp.Reference,
    name: str | None,
    taken: Iterable[str],
    *,
    validated: bool = True,
    number: int = 0,
) -> ForeignKey:
    """The foreign key ``child (columns) REFERENCES ...`` as the catalog keeps it."""
    parent_name, parent_columns = _parent(reference)
    if parent_name == child.name:
        parent = child
    else:
        if catalog.find_view(parent_name) is not None:
            raise WrongObjectType(f'referenced relation "{parent_name}" is not a table')
        parent = catalog.get_table(parent_name)
    if is_temporary(child.name) != is_temporary(parent.name):
        kind = "temporary" if is_temporary(child.name) else "permanent"
        raise InvalidTableDefinition(
            f"constraints on {kind} tables may reference only {kind} tables"
        )
    options = _options(reference)
    own = [_column(child, c) for c in columns]
    if parent_columns:
        referenced = [_column(parent, c) for c in parent_columns]
    elif any(c.id not in parent.column_order for c in parent.schema.key_columns):
        raise UndefinedObject(f'there is no primary key for referenced table "{parent.name}"')
    else:
        referenced = list(parent.schema.key_columns)
    if len(own) != len(referenced):
        raise InvalidForeignKey(
            "number of referencing and referenced columns for foreign key disagree"
        )
    wanted = {c.id for c in referenced}
    index_id: int | None = None
    if wanted != set(parent.schema.key_column_ids) or len(wanted) != len(referenced):
        matches = [
            i for i in parent.indexes
            if i.unique and i.valid and i.predicate is None and set(i.columns) == wanted
            and len(i.columns) == len(referenced)
        ]  # fmt: skip
        if not matches:
            raise InvalidForeignKey(
                "there is no unique constraint matching given keys for referenced table "
                f'"{parent.name}"'
            )
        index_id = matches[0].index_id
    set_names = options.pop("set_columns", None)
    set_columns: tuple[ColumnId, ...] = ()
    if isinstance(set_names, list):
        for set_name in set_names:
            if set_name not in columns:
                raise InvalidColumnReference(
                    f'column "{set_name}" referenced in ON DELETE SET action must be part of '
                    "foreign key"
                )
        set_columns = tuple(_column(child, n).id for n in set_names)
    if name is None:
        name = choose_name(user_name(child.name), "_".join(columns), "fkey", taken)
    for mine, theirs in zip(own, referenced, strict=True):
        if _family(mine.type) != _family(theirs.type):
            raise DatatypeMismatch(
                f'foreign key constraint "{name}" cannot be implemented',
                detail=f'Key columns "{mine.name}" and "{theirs.name}" are of incompatible '
                f"types: {mine.type.pg_name()} and {theirs.type.pg_name()}.",
            )
    return ForeignKey(
        name,
        tuple(c.id for c in own),
        parent.table_id,
        tuple(c.id for c in referenced),
        index_id,
        validated=validated,
        number=number,
        set_columns=set_columns,
        **options,  # type: ignore[arg-type]
    )


def violation_probe(child: TableInfo, parent: TableInfo, key: ForeignKey) -> str:
    """A query that returns a row when some row of ``child`` has no parent row for ``key``."""
    mine = [f'c."{child.schema.column(c).name}"' for c in key.columns]
    theirs = [f'p."{parent.schema.column(c).name}"' for c in key.parent_columns]
    joined = " AND ".join(f"{t} = {m}" for m, t in zip(mine, theirs, strict=True))
    all_set = " AND ".join(f"{m} IS NOT NULL" for m in mine)
    orphan = f'NOT EXISTS (SELECT 1 FROM "{parent.name}" p WHERE {joined})'
    if key.match == MATCH_FULL:
        any_set = " OR ".join(f"{m} IS NOT NULL" for m in mine)
        condition = f"(({all_set}) AND {orphan}) OR (({any_set}) AND NOT ({all_set}))"
    else:
        condition = f"({all_set}) AND {orphan}"
    return f'SELECT 1 FROM "{child.name}" c WHERE {condition} LIMIT 1'


def validate(
    catalog: Catalog, child: TableInfo, key: ForeignKey, row_exists: Callable[[str], bool]
) -> None:
    """23503 when a row of ``child`` breaks ``key`` (ADD CONSTRAINT, VALIDATE CONSTRAINT);
    ``row_exists`` runs the probe in the statement's transaction."""
    parent = child if key.parent_id == child.table_id else catalog.table_by_id(key.parent_id)
    if row_exists(violation_probe(child, parent, key)):
        raise ForeignKeyViolation(
            f'insert or update on table "{child.name}" violates foreign key constraint "{key.name}"'
        )
