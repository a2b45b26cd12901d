"""The pg_catalog relations in PostgreSQL 15's shape, as rows built from the nyala catalog.

Clients (psql's backslash commands, pgjdbc's DatabaseMetaData, SQLAlchemy's
reflection) read these relations to learn what tables, columns, keys and types
exist.  ``RELATIONS`` (pg_relations.py) gives each relation's columns and
DuckDB types; ``catalog_rows`` computes the rows for the tables that exist right now.  OIDs
are stable: a table is ``TableInfo.oid``, its primary-key index and
constraint are derived from the table ID (``index_oid``, ``constraint_oid``).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlglot
import sqlglot.errors
from sqlglot import exp

from catalog.indexes import IndexInfo
from catalog.roles import Membership, Role
from catalog.sequence_objects import StandaloneSequence
from catalog.table import FIRST_USER_OID, TableInfo
from catalog.temp_tables import SCHEMA_PREFIX as TEMP_SCHEMA_PREFIX
from catalog.temp_tables import is_temporary, user_name
from catalog.views import ViewInfo
from sql.common.datatypes import wire_oid
from sql.common.json_values import normalize_jsonb
from sql.common.uuid_values import canonical_uuid
from sql.ddl.sequences import default_sequence
from sql.pg_catalog import casts, foreign_key_rows, operators, partition_rows, routines, sequences
from sql.pg_catalog.builtin_types import BUILTIN_TYPES, TYPE_BY_OID, BuiltinType
from sql.pg_catalog.partitioning import partitioning_clause
from sql.pg_catalog.relations import RELATIONS, relation_oid
from sql.pg_catalog.roles import pg_auth_members_rows, pg_roles_rows
from sql.pg_catalog.security_label_rows import security_label_rows
from sql.pg_catalog.temp_namespaces import PUBLIC_OID, namespace_oid, temp_namespace_oid
from storage.data_type import DataType, TypeKind
from storage.errors import DbError
from storage.schema import ColumnSchema
from storage.type_oids import ARRAY_OID, TypeOid

PG_CATALOG_OID = 11
INFORMATION_SCHEMA_OID = 13_000
SUPERUSER_OID = 10
DATABASE_OID = 16_383
HEAP_AM, BTREE_AM = 2, 403
PG_CLASS_OID = 1259
DEFAULT_COLLATION_OID = 100
INT4_OPS_OID = 1978

_INDEX_OID_BASE = 1_000_000_000
_CONSTRAINT_OID_BASE = 1_100_000_000
_CHECK_OID_BASE = 1_200_000_000
_CHECKS_PER_TABLE = 1000


def index_oid(table: TableInfo) -> int:
    """OID of a table's primary-key index (relkind 'i')."""
    return _INDEX_OID_BASE + table.table_id


def constraint_oid(table: TableInfo) -> int:
    """OID of a table's primary-key constraint (pg_constraint)."""
    return _CONSTRAINT_OID_BASE + table.table_id


@dataclass(slots=True)
class CatalogRows:
    """Rows per relation, as lists of tuples in ``RELATIONS`` column order."""

    rows: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    index_suffixes: dict[int, str] = field(default_factory=dict)
    """What pg_get_indexdef adds after a primary-key index's columns: the table's
    partitioning, so psql's ``\\d`` shows it on the index line (as YugabyteDB shows
    its hash sharding there)."""
    partition_keys: dict[int, str] = field(default_factory=dict)
    """pg_get_partkeydef of each partitioned relation, by OID."""
    partition_constraints: dict[int, str] = field(default_factory=dict)
    """pg_get_partition_constraintdef of each partition, by OID."""

    def add(self, relation: str, **values: Any) -> None:
        names = [c for c, _ in RELATIONS[relation]]
        unknown = set(values) - set(names)
        if unknown:
            raise KeyError(f"{relation} has no column {sorted(unknown)}")
        self.rows.setdefault(relation, []).append(tuple(values.get(n) for n in names))


def _class_row(rows: CatalogRows, **values: Any) -> None:
    defaults: dict[str, Any] = dict(
        reltype=0,
        reloftype=0,
        relowner=SUPERUSER_OID,
        relfilenode=0,
        reltablespace=0,
        relpages=0,
        reltuples=-1.0,
        relallvisible=0,
        reltoastrelid=0,
        relhasindex=False,
        relisshared=False,
        relpersistence="p",
        relchecks=0,
        relhasrules=False,
        relhastriggers=False,
        relhassubclass=False,
        relrowsecurity=False,
        relforcerowsecurity=False,
        relispopulated=True,
        relreplident="d",
        relispartition=False,
        relrewrite=0,
        relfrozenxid=0,
        relminmxid=0,
    )
    defaults.update(values)
    rows.add("pg_class", **defaults)


def _attribute_row(rows: CatalogRows, **values: Any) -> None:
    defaults: dict[str, Any] = dict(
        attstattarget=-1,
        attndims=0,
        attcacheoff=-1,
        atttypmod=-1,
        attbyval=False,
        attalign="i",
        attstorage="p",
        attcompression="",
        attnotnull=False,
        atthasdef=False,
        atthasmissing=False,
        attidentity="",
        attgenerated="",
        attisdropped=False,
        attislocal=True,
        attinhcount=0,
        attcollation=0,
    )
    defaults.update(values)
    rows.add("pg_attribute", **defaults)


_COLLATABLE = {TypeKind.VARCHAR, TypeKind.STRING}


def _is_collatable(dtype: DataType) -> bool:
    """Text types take a collation; uuid and json(b), though stored as strings, do not."""
    return dtype.kind in _COLLATABLE and not dtype.text_type


_INT4_RANGE = range(-(2**31), 2**31)
_INT8_RANGE = range(-(2**63), 2**63)


_TEXT_TYPE_CASTS = {exp.DataType.Type.UUID, exp.DataType.Type.JSON, exp.DataType.Type.JSONB}


def _text_type_constant(text: str, dtype: DataType) -> str:
    """A uuid or jsonb constant as PostgreSQL stores it in a default (its output text)."""
    try:
        if dtype.text_type == "uuid":
            return canonical_uuid(text)
        if dtype.text_type == "jsonb":
            return normalize_jsonb(text)
    except DbError:
        pass
    return text


def default_expr(default_sql: str, dtype: DataType) -> str:
    """A constant default as PostgreSQL's pg_get_expr shows it.

    Strings carry a cast to the column's type (``'abc'::text``, ``'x'::character
    varying``), booleans are lower case, and a negative number is quoted with
    the type of the literal (``'-1'::integer``, ``'-0.5'::numeric``).
    """
    try:
        node = sqlglot.parse_one(default_sql, read="postgres")
    except sqlglot.errors.ParseError:
        return default_sql
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    if isinstance(node, exp.Uuid) and not node.args:
        return "gen_random_uuid()"
    if isinstance(node, exp.Cast) and node.to.this in _TEXT_TYPE_CASTS:
        node = node.this  # uuid and jsonb constants show in their output form, as stored
    if isinstance(node, exp.Literal) and node.is_string and dtype.text_type:
        return (
            "'" + _text_type_constant(node.this, dtype).replace("'", "''") + "'::" + dtype.text_type
        )
    if isinstance(node, exp.Literal) and node.is_string:
        type_name = re.sub(r"\(.*\)", "", dtype.pg_name())
        return "'" + node.this.replace("'", "''") + "'::" + type_name
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and node.this.is_number:
        text = "-" + node.this.this
        if re.fullmatch(r"-\d+", text):
            value = int(text)
            kind = (
                "integer"
                if value in _INT4_RANGE
                else "bigint"
                if value in _INT8_RANGE
                else "numeric"
            )
        else:
            kind = "numeric"
        return f"'{text}'::{kind}"
    return default_sql


def _storage(info: BuiltinType) -> str:
    """typstorage: plain for fixed width, main for numeric, extended for other varlena."""
    if info.length > 0:
        return "p"
    return "m" if info.oid == 1700 else "x"


def _key_index_oid(table: TableInfo, index_id: int | None) -> int:
    """The OID of the primary-key index (None) or of the secondary index ``index_id``."""
    if index_id is None:
        return index_oid(table)
    return FIRST_USER_OID + index_id


def _table_rows(
    rows: CatalogRows,
    table: TableInfo,
    comments: dict[tuple[int, int], str],
    referenced: bool = False,
    sequence_oids: dict[str, int] | None = None,
    **class_values: Any,
) -> None:
    """A table's rows; ``referenced`` says a foreign key references it (PostgreSQL's RI
    triggers set relhastriggers on both sides, which psql's ``\\d`` reads);
    ``class_values`` override its pg_class values (a partitioned table's or a
    partition's relkind, relispartition, relpartbound)."""
    # A table with the hidden key has no primary key as far as PostgreSQL's clients know.
    hidden = {c.id for c in table.hidden_columns}
    keys = () if hidden & set(table.schema.key_column_ids) else table.schema.key_columns
    values: dict[str, Any] = dict(
        oid=table.oid,
        relname=user_name(table.name),
        relnamespace=namespace_oid(table),
        relpersistence="t" if is_temporary(table.name) else "p",
        relam=HEAP_AM,
        relkind="r",
        relnatts=len(table.columns) + len(table.dropped_attnums),
        relhasindex=bool(keys) or bool(table.indexes),
        relchecks=len(table.checks),
        relhastriggers=referenced or bool(table.foreign_keys),
    )
    values.update(class_values)
    if values["relkind"] == "p":
        values["relam"] = 0
    _class_row(rows, **values)
    for attnum in table.dropped_attnums:
        _attribute_row(
            rows,
            attrelid=table.oid,
            attname=f"........pg.dropped.{attnum}........",
            atttypid=0,
            attlen=-1,
            attnum=attnum,
            attisdropped=True,
        )
    for column in table.columns:
        attnum = table.attnum(column.id)
        dtype = column.type
        info = TYPE_BY_OID[dtype.pg_oid]
        sequence = table.sequence_of(column.id)
        identity = sequence.identity if sequence is not None else ""
        _attribute_row(
            rows,
            attrelid=table.oid,
            attname=column.name,
            atttypid=dtype.pg_oid,
            attlen=info.length,
            attnum=attnum,
            atttypmod=dtype.pg_typmod,
            attbyval=info.length in (1, 2, 4, 8),
            attstorage=_storage(info),
            attnotnull=not column.nullable,
            atthasdef=column.default_sql is not None and not identity,
            attidentity=identity,
            attcollation=DEFAULT_COLLATION_OID if _is_collatable(dtype) else 0,
        )
        if column.default_sql is not None and not identity:
            rows.add(
                "pg_attrdef",
                oid=table.oid * 1000 + attnum,
                adrelid=table.oid,
                adnum=attnum,
                adbin=default_expr(_shown_default(table, column.default_sql), dtype),
            )
            used = default_sequence(column.default_sql)
            if used is not None and sequence_oids and used in sequence_oids:
                # The default needs its sequence (pg_dump sets it after creating both).
                rows.add(
                    "pg_depend", classid=relation_oid("pg_attrdef"),
                    objid=table.oid * 1000 + attnum, objsubid=0, refclassid=PG_CLASS_OID,
                    refobjid=sequence_oids[used], refobjsubid=0, deptype="n",
                )  # fmt: skip
    if keys:
        clause = partitioning_clause(table)
        if clause is not None:
            rows.index_suffixes[index_oid(table)] = clause
        key_attnums = [table.attnum(c.id) for c in keys]
        name = table.primary_key_name or f"{user_name(table.name)}_pkey"
        _index_rows(rows, table, index_oid(table), name, list(keys), primary=True)
        rows.add(
            "pg_constraint",
            oid=constraint_oid(table),
            conname=name,
            connamespace=namespace_oid(table),
            contype="p",
            condeferrable=False,
            condeferred=False,
            convalidated=True,
            conrelid=table.oid,
            contypid=0,
            conindid=index_oid(table),
            conparentid=0,
            confrelid=0,
            confupdtype=" ",
            confdeltype=" ",
            confmatchtype=" ",
            conislocal=True,
            coninhcount=0,
            connoinherit=True,
            conkey=key_attnums,
        )
    _check_rows(rows, table)
    for index in table.indexes:
        _secondary_index_rows(rows, table, index)
    security_label_rows(rows, table, namespace_oid(table))
    for (objsubid_table, objsubid), text in comments.items():
        if objsubid_table == table.oid:
            rows.add(
                "pg_description",
                objoid=table.oid,
                classoid=PG_CLASS_OID,
                objsubid=objsubid,
                description=text,
            )


def _shown_default(table: TableInfo, default_sql: str) -> str:
    """A temporary table's ``nextval('pg_temp_<n>.t_id_seq')`` as PostgreSQL shows it to its
    session, by the sequence's bare name."""
    if not is_temporary(table.name):
        return default_sql
    return default_sql.replace(f"'{table.name.split('.', 1)[0]}.", "'")


def _partition_index_rows(rows: CatalogRows, table: TableInfo) -> None:
    """Each partition's primary-key index is a partition of its parent's (pg_inherits)."""
    tree = table.partition_schema.tree if table.partition_schema is not None else None
    hidden = {c.id for c in table.hidden_columns}
    if tree is None or hidden & set(table.schema.key_column_ids):
        return
    parents = {n.name: n.relation_id for n in tree.nodes}
    for node in tree.nodes:
        parent = table.table_id if node.parent is None else parents[node.parent]
        rows.add(
            "pg_inherits",
            inhrelid=_INDEX_OID_BASE + node.relation_id,
            inhparent=_INDEX_OID_BASE + parent,
            inhseqno=1,
            inhdetachpending=False,
        )


def _index_rows(
    rows: CatalogRows,
    table: TableInfo,
    oid: int,
    name: str,
    keys: list[ColumnSchema],
    *,
    primary: bool = False,
    unique: bool = True,
    include: Sequence[ColumnSchema] = (),
    nulls_not_distinct: bool = False,
    predicate: str | None = None,
    valid: bool = True,
) -> None:
    """An index's pg_class, pg_attribute and pg_index rows (INCLUDE columns after the keys)."""
    columns = [*keys, *include]
    _class_row(
        rows, oid=oid, relname=name, relnamespace=namespace_oid(table), relam=BTREE_AM,
        relkind="i", relnatts=len(columns),
        relpersistence="t" if is_temporary(table.name) else "p",
    )  # fmt: skip
    for position, column in enumerate(columns, start=1):
        info = TYPE_BY_OID[column.type.pg_oid]
        _attribute_row(
            rows,
            attrelid=oid,
            attname=column.name,
            atttypid=column.type.pg_oid,
            attlen=info.length,
            attnum=position,
            atttypmod=column.type.pg_typmod,
            attnotnull=primary,
        )
    rows.add(
        "pg_index",
        indexrelid=oid,
        indrelid=table.oid,
        indnatts=len(columns),
        indnkeyatts=len(keys),
        indisunique=unique,
        indnullsnotdistinct=nulls_not_distinct,
        indisprimary=primary,
        indisexclusion=False,
        indimmediate=True,
        indisclustered=False,
        indisvalid=valid,
        indcheckxmin=False,
        indisready=True,
        indislive=True,
        indisreplident=False,
        indkey=[table.attnum(c.id) for c in columns],
        indcollation=[DEFAULT_COLLATION_OID if _is_collatable(c.type) else 0 for c in keys],
        indclass=[INT4_OPS_OID] * len(keys),
        indoption=[0] * len(keys),
        indpred=predicate,
    )


def secondary_index_oid(index: IndexInfo) -> int:
    """OID of a secondary index: its ID comes from the table IDs, so no relation shares it."""
    return FIRST_USER_OID + index.index_id


def unique_constraint_oid(index: IndexInfo) -> int:
    return _CONSTRAINT_OID_BASE + index.index_id


def _secondary_index_rows(rows: CatalogRows, table: TableInfo, index: IndexInfo) -> None:
    oid = secondary_index_oid(index)
    _index_rows(
        rows, table, oid, index.name, [table.schema.column(c) for c in index.columns],
        unique=index.unique, include=[table.schema.column(c) for c in index.include],
        nulls_not_distinct=index.nulls_not_distinct, predicate=index.predicate,
        valid=index.valid,
    )  # fmt: skip
    if not index.constraint:
        return
    rows.add(
        "pg_constraint",
        oid=unique_constraint_oid(index),
        conname=index.name,
        connamespace=namespace_oid(table),
        contype="u",
        condeferrable=False,
        condeferred=False,
        convalidated=True,
        conrelid=table.oid,
        contypid=0,
        conindid=oid,
        conparentid=0,
        confrelid=0,
        confupdtype=" ",
        confdeltype=" ",
        confmatchtype=" ",
        conislocal=True,
        coninhcount=0,
        connoinherit=True,
        conkey=[table.attnum(c) for c in index.columns],
        conbin="NULLS NOT DISTINCT" if index.nulls_not_distinct else None,
    )


_REWRITE_OID_BASE = 1_300_000_000


def _view_rule_rows(rows: CatalogRows, view: ViewInfo, relation_oids: dict[str, int]) -> None:
    """The view's ``_RETURN`` rule in pg_rewrite, and pg_depend rows from the rule to the
    view and to each relation it reads: pg_dump orders a view after what it reads by them."""
    rule = _REWRITE_OID_BASE + view.view_id
    rows.add(
        "pg_rewrite", oid=rule, rulename="_RETURN", ev_class=view.oid, ev_type="1",
        ev_enabled="O", is_instead=True,
    )  # fmt: skip
    rewrite_oid = relation_oid("pg_rewrite")
    targets = [(view.oid, "i")] + [
        (relation_oids[name], "n") for name in view.relations if name in relation_oids
    ]
    for target, deptype in targets:
        rows.add(
            "pg_depend", classid=rewrite_oid, objid=rule, objsubid=0, refclassid=PG_CLASS_OID,
            refobjid=target, refobjsubid=0, deptype=deptype,
        )  # fmt: skip


def _view_rows(rows: CatalogRows, view: ViewInfo, user: str) -> None:
    oid = FIRST_USER_OID + view.view_id
    _class_row(
        rows, oid=oid, relname=view.name, relnamespace=PUBLIC_OID, relam=0, relkind="v",
        relnatts=len(view.columns),
    )  # fmt: skip
    for attnum, (name, type_oid, typmod) in enumerate(view.columns, start=1):
        info = TYPE_BY_OID.get(type_oid) or TYPE_BY_OID[TypeOid.TEXT]
        _attribute_row(
            rows,
            attrelid=oid,
            attname=name,
            atttypid=info.oid,
            attlen=info.length,
            attnum=attnum,
            atttypmod=typmod,
            attbyval=info.length in (1, 2, 4, 8),
            attstorage=_storage(info),
            attcollation=DEFAULT_COLLATION_OID if info.oid in _TEXT_OIDS else 0,
        )
    rows.add(
        "pg_views", schemaname="public", viewname=view.name, viewowner=user,
        definition=f" {view.query};",
    )  # fmt: skip


_TEXT_OIDS = {TypeOid.TEXT, TypeOid.VARCHAR, TypeOid.BPCHAR}


def check_constraint_oid(table: TableInfo, number: int) -> int:
    """OID of a table's CHECK constraint (pg_constraint), by its number in the table."""
    return _CHECK_OID_BASE + table.table_id * _CHECKS_PER_TABLE + number


def _check_rows(rows: CatalogRows, table: TableInfo) -> None:
    attnums = {c.name: table.attnum(c.id) for c in table.columns}
    for check in table.checks:
        definition = f"CHECK ({check.expression})" + ("" if check.validated else " NOT VALID")
        rows.add(
            "pg_constraint",
            oid=check_constraint_oid(table, check.number),
            conname=check.name,
            connamespace=namespace_oid(table),
            contype="c",
            condeferrable=False,
            condeferred=False,
            convalidated=check.validated,
            conrelid=table.oid,
            contypid=0,
            conindid=0,
            conparentid=0,
            confrelid=0,
            confupdtype=" ",
            confdeltype=" ",
            confmatchtype=" ",
            conislocal=True,
            coninhcount=0,
            connoinherit=False,
            conkey=[attnums[c] for c in check.columns if c in attnums],
            conbin=definition,
        )


def _catalog_column_type(column: str, duck_type: str) -> int:
    """The PostgreSQL type of an emulated catalog column: name for names, else by DuckDB type."""
    if duck_type.endswith("[]"):
        element = _catalog_column_type(column, duck_type[:-2])
        return TYPE_BY_OID[element].array_oid or ARRAY_OID[TypeOid.TEXT]
    if duck_type == "VARCHAR":
        return TypeOid.NAME if column.endswith("name") else TypeOid.TEXT
    return wire_oid(duck_type, catalog=True)


@functools.lru_cache(maxsize=8)
def _static(database: str) -> dict[str, tuple[tuple[Any, ...], ...]]:
    """The rows no catalog change or session moves (the system relations themselves, types,
    functions, operators, casts ...), made once per database name: a session's first
    catalog query spent a third of its time making them again."""
    rows = CatalogRows({name: [] for name in RELATIONS})
    _static_rows(rows, database)
    for module in (routines, operators, casts):
        for row in module.rows():
            rows.add(row.relation, **row.values)
    return {name: tuple(found) for name, found in rows.rows.items()}


def _static_rows(rows: CatalogRows, database: str) -> None:
    for oid, name in (
        (PG_CATALOG_OID, "pg_catalog"),
        (PUBLIC_OID, "public"),
        (INFORMATION_SCHEMA_OID, "information_schema"),
        (99, "pg_toast"),
    ):
        rows.add("pg_namespace", oid=oid, nspname=name, nspowner=SUPERUSER_OID)
    # PostgreSQL's own comment (pg_dump leaves it out of a dump, as it does for PostgreSQL).
    rows.add(
        "pg_description", objoid=PUBLIC_OID, classoid=relation_oid("pg_namespace"), objsubid=0,
        description="standard public schema",
    )  # fmt: skip
    for name in sorted(RELATIONS):
        _class_row(
            rows,
            oid=relation_oid(name),
            relname=name,
            relnamespace=PG_CATALOG_OID,
            relam=HEAP_AM,
            relkind="v" if name in _VIEWS else "r",
            relnatts=len(RELATIONS[name]),
        )
        for attnum, (column, duck_type) in enumerate(RELATIONS[name], start=1):
            type_oid = _catalog_column_type(column, duck_type)
            _attribute_row(
                rows,
                attrelid=relation_oid(name),
                attname=column,
                atttypid=type_oid,
                attlen=TYPE_BY_OID[type_oid].length,
                attnum=attnum,
                attnotnull=column == "oid",
            )
    for info in BUILTIN_TYPES:
        rows.add(
            "pg_type",
            oid=info.oid,
            typname=info.name,
            typnamespace=PG_CATALOG_OID,
            typowner=SUPERUSER_OID,
            typlen=info.length,
            typbyval=info.length in (1, 2, 4, 8),
            typtype="p" if info.category == "P" else "b",
            typcategory=info.category,
            typispreferred=info.name in ("text", "float8", "bool", "oid", "timestamptz"),
            typisdefined=True,
            typdelim=",",
            typrelid=0,
            typsubscript="array_subscript_handler" if info.element_oid else "-",
            typelem=info.element_oid,
            typarray=info.array_oid,
            typinput="array_in" if info.element_oid else info.name.lstrip("_") + "in",
            typoutput="array_out" if info.element_oid else info.name.lstrip("_") + "out",
            typreceive="-",
            typsend="-",
            typmodin="-",
            typmodout="-",
            typanalyze="-",
            typalign="i",
            typstorage=_storage(info),
            typnotnull=False,
            typbasetype=0,
            typtypmod=-1,
            typndims=0,
            typcollation=DEFAULT_COLLATION_OID if info.category == "S" else 0,
        )
    rows.add("pg_am", oid=HEAP_AM, amname="heap", amhandler="heap_tableam_handler", amtype="t")
    rows.add("pg_am", oid=BTREE_AM, amname="btree", amhandler="bthandler", amtype="i")
    rows.add(
        "pg_database",
        oid=DATABASE_OID,
        datname=database,
        datdba=SUPERUSER_OID,
        encoding=6,
        datlocprovider="c",
        datistemplate=False,
        datallowconn=True,
        datconnlimit=-1,
        datfrozenxid=0,
        datminmxid=1,
        dattablespace=1663,
        datcollate="C",
        datctype="C",
    )
    rows.add(
        "pg_collation",
        oid=DEFAULT_COLLATION_OID,
        collname="default",
        collnamespace=PG_CATALOG_OID,
        collowner=SUPERUSER_OID,
        collprovider="d",
        collisdeterministic=True,
        collencoding=-1,
    )
    rows.add(
        "pg_collation",
        oid=950,
        collname="C",
        collnamespace=PG_CATALOG_OID,
        collowner=SUPERUSER_OID,
        collprovider="c",
        collisdeterministic=True,
        collencoding=-1,
        collcollate="C",
        collctype="C",
    )
    for oid, name, trusted in ((12, "internal", False), (13, "c", False), (14, "sql", True)):
        rows.add(
            "pg_language", oid=oid, lanname=name, lanowner=SUPERUSER_OID, lanispl=False,
            lanpltrusted=trusted, lanplcallfoid=0, laninline=0, lanvalidator=0,
        )  # fmt: skip
    for oid, name in ((1663, "pg_default"), (1664, "pg_global")):
        rows.add("pg_tablespace", oid=oid, spcname=name, spcowner=SUPERUSER_OID)


_VIEWS = (
    "pg_roles", "pg_settings", "pg_cursors", "pg_prepared_xacts", "pg_prepared_statements",
)  # fmt: skip


def catalog_rows(
    tables: Iterable[TableInfo],
    database: str,
    user: str,
    settings: Iterable[tuple[str, str, str, str, str, str]],
    comments: dict[tuple[int, int], str],
    cursors: Iterable[tuple[str, str, bool]] = (),
    roles: Iterable[Role] = (),
    prepared: Iterable[tuple[int, str, dt.datetime, str, str]] = (),
    views: Iterable[ViewInfo] = (),
    memberships: Iterable[Membership] = (),
    statements: Iterable[tuple[str, str, dt.datetime, tuple[str, ...], bool]] = (),
    standalone: Iterable[tuple[StandaloneSequence, TableInfo | None]] = (),
) -> CatalogRows:
    """Every pg_catalog row for this database, user and session settings; ``roles`` are
    the role store's roles (none: the session user is the one superuser)."""
    static = _static(database)
    rows = CatalogRows({name: list(static.get(name, ())) for name in RELATIONS})
    for role_row in pg_roles_rows(list(roles), user, SUPERUSER_OID):
        rows.add("pg_roles", **role_row)
    for member_row in pg_auth_members_rows(list(memberships), list(roles), user, SUPERUSER_OID):
        rows.add("pg_auth_members", **member_row)
    tables, views, standalone = list(tables), list(views), list(standalone)
    sequence_oids = {q.name: q.oid for q, _ in standalone}
    sequence_oids.update(
        (i.name, sequences.sequence_oid(t, i.column_id)) for t in tables for i in t.sequences
    )
    relation_oids = {t.name: t.oid for t in tables} | {v.name: v.oid for v in views}
    for view in views:
        _view_rows(rows, view, user)
        _view_rule_rows(rows, view, relation_oids)
    for schema in sorted({t.name.split(".", 1)[0] for t in tables if is_temporary(t.name)}):
        oid = temp_namespace_oid(schema)
        toast = schema.replace(TEMP_SCHEMA_PREFIX, "pg_toast_temp_", 1)
        for namespace, nspname in ((oid, schema), (oid + 1, toast)):
            rows.add("pg_namespace", oid=namespace, nspname=nspname, nspowner=SUPERUSER_OID)
    by_id: dict[int, TableInfo] = {t.table_id: t for t in tables}
    parents = {k.parent_id for t in tables for k in t.foreign_keys}
    for table in tables:
        _table_rows(
            rows, table, comments, table.table_id in parents, sequence_oids,
            **partition_rows.root_class_values(table),
        )  # fmt: skip
        for row in foreign_key_rows.rows(table, by_id.__getitem__, _key_index_oid):
            rows.add(row.relation, **row.values)
        for partition in partition_rows.partitions(table):
            _table_rows(
                rows, partition.table, comments, False, sequence_oids, **partition.class_values
            )
        for relation, values in partition_rows.rows(table):
            rows.add(relation, **values)
        _partition_index_rows(rows, table)
        rows.partition_keys.update(partition_rows.key_defs(table))
        rows.partition_constraints.update(partition_rows.constraint_defs(table))
        for row in sequences.rows(table):
            if row.relation == "pg_class":
                _class_row(rows, **row.values)
            elif row.relation == "pg_sequences":
                rows.add(row.relation, **{**row.values, "sequenceowner": user})
            else:
                rows.add(row.relation, **row.values)
    for sequence, owning in standalone:
        for row in sequences.standalone_rows(sequence, owning):
            if row.relation == "pg_class":
                _class_row(rows, **row.values)
            elif row.relation == "pg_sequences":
                rows.add(row.relation, **{**row.values, "sequenceowner": user})
            else:
                rows.add(row.relation, **row.values)
    for name, value, unit, context, vartype, note in settings:
        rows.add(
            "pg_settings",
            name=name,
            setting=value,
            unit=unit or None,
            short_desc=note or None,
            context=context,
            vartype=vartype,
            source="default",
            boot_val=value,
            reset_val=value,
            pending_restart=False,
        )
    for name, statement, hold in cursors:
        rows.add(
            "pg_cursors",
            name=name,
            statement=statement,
            is_holdable=hold,
            is_binary=False,
            is_scrollable=False,
        )
    for name, text, when, types, from_sql in statements:
        rows.add(
            "pg_prepared_statements", name=name, statement=text, prepare_time=when,
            parameter_types=list(types), from_sql=from_sql, generic_plans=0, custom_plans=0,
        )  # fmt: skip
    for xid, gid, when, owner, database_name in prepared:
        rows.add(
            "pg_prepared_xacts", transaction=xid, gid=gid, prepared=when, owner=owner,
            database=database_name,
        )  # fmt: skip
    return rows
