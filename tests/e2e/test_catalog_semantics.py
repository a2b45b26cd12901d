"""Semantics real clients meet, on nyala as on PostgreSQL 15: catalog queries show
timestamptz values in the session's TimeZone, ``= ANY('{...}'::regclass[])``, the array
dimension functions over arrays of two and more dimensions, ``bytea_output = 'escape'``
and the ``tableoid`` system column of user tables."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.e2e

SETUP = [
    "drop table if exists csem_t",
    "drop table if exists csem_b",
    "drop table if exists csem_p",
    "create table csem_t (id int primary key, v text)",
    "insert into csem_t values (1, 'x'), (2, 'y'), (3, 'z')",
    "create table csem_b (id int primary key, b bytea)",
    "insert into csem_b values (1, '\\x5c00ff41'), (2, NULL), (3, ''), (4, '\\x0a7e7f20')",
    "create table csem_p (id int, k int) partition by range (k)",
    "create table csem_p1 partition of csem_p for values from (0) to (10)",
    "create table csem_p2 partition of csem_p for values from (10) to (20) partition by range (k)",
    "create table csem_p21 partition of csem_p2 for values from (10) to (15)",
    "create table csem_p22 partition of csem_p2 for values from (15) to (20)",
    "insert into csem_p values (1, 5), (2, 12), (3, 17), (4, 6)",
]


@pytest.fixture(scope="module")
def conns(nyala_server, postgres_server):
    with (
        psycopg.connect(nyala_server.dsn, autocommit=True) as nyala,
        psycopg.connect(postgres_server.dsn, autocommit=True) as postgres,
    ):
        for conn in (nyala, postgres):
            for statement in SETUP:
                conn.execute(statement)
        yield nyala, postgres


def _outcome(conn: psycopg.Connection, sql: str, params: tuple = (), binary: bool = False):
    try:
        cur = conn.execute(sql, params, binary=binary)
        names = [c.name for c in cur.description or ()]
        return names, cur.fetchall()
    except psycopg.Error as exc:
        return exc.sqlstate


def _same(conns, sql: str, params: tuple = (), binary: bool = False) -> object:
    nyala, postgres = conns
    expected = _outcome(postgres, sql, params, binary)
    assert _outcome(nyala, sql, params, binary) == expected
    return expected


ZONE_CASES = [
    "select pg_typeof(t), t from (select '2024-01-01 00:00+00'::timestamptz t) s",
    "select relname, '2024-07-01 12:30+00'::timestamptz::text from pg_class"
    " where relname = 'pg_type'",
    "select date_trunc('day', '2024-01-01 20:00+00'::timestamptz), pg_typeof(1)",
    "select relname, t from pg_class, (select '2024-03-10 09:00+00'::timestamptz t) s"
    " where relname = 'pg_class'",
]


@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo", "America/New_York", "-5"])
@pytest.mark.parametrize("sql", ZONE_CASES)
def test_catalog_queries_show_timestamptz_in_the_session_zone(conns, zone, sql):
    for conn in conns:
        conn.execute("select set_config('TimeZone', %s, false)", (zone,))
    try:
        assert not isinstance(_same(conns, sql), str)
    finally:
        for conn in conns:
            conn.execute("reset timezone")


REG_ARRAY_CASES = [
    "select relname from pg_class where oid = any('{pg_class,pg_type}'::regclass[])"
    " order by relname",
    "select relname from pg_class where oid = any('{csem_t}'::pg_catalog.regclass[])",
    "select relname from pg_class where oid <> all('{pg_class}'::regclass[])"
    " and relname in ('pg_class', 'pg_type') order by relname",
    "select typname from pg_type where oid = any('{int4,text}'::regtype[]) order by typname",
    "select '{pg_class,pg_namespace}'::regclass[] as r, '{int4,text}'::regtype[]",
    "select nspname from pg_namespace where oid = any('{pg_catalog}'::regnamespace[])",
]


@pytest.mark.parametrize("sql", REG_ARRAY_CASES)
def test_reg_arrays_as_on_postgresql(conns, sql):
    assert not isinstance(_same(conns, sql), str)


@pytest.mark.parametrize("binary", [False, True])
def test_reg_array_parameter_as_on_postgresql(conns, binary):
    sql = "select relname from pg_class where oid = any(%s::regclass[]) order by relname"
    assert not isinstance(_same(conns, sql, (["pg_class", "csem_t"],), binary), str)
    assert not isinstance(_same(conns, sql, ([],), binary), str)


DIMENSION_FUNCTIONS = [
    "array_length(a, 1)", "array_length(a, 2)", "array_length(a, 3)", "array_length(a, 0)",
    "array_lower(a, 1)", "array_lower(a, 2)", "array_lower(a, 3)", "array_upper(a, 1)",
    "array_upper(a, 2)", "array_upper(a, NULL)", "array_ndims(a)", "array_dims(a)",
    "cardinality(a)",
]  # fmt: skip
ARRAYS = [
    "'{{1,2,3},{4,5,6}}'::int[]",
    "'{{{1},{2}},{{3},{4}}}'::int[]",
    "'{{a,b}}'::text[]",
    "array[1, 2]",
    "array[[1.5, 2], [3, 4], [5, 6]]",
    "'{}'::int[]",
    "NULL::int[]",
    "array['[1,2]'::jsonb]",
]


@pytest.mark.parametrize("array", ARRAYS)
@pytest.mark.parametrize("function", DIMENSION_FUNCTIONS)
def test_array_dimension_functions_as_on_postgresql(conns, function, array):
    assert not isinstance(_same(conns, f"select {function} from (select {array} a) s"), str)


@pytest.mark.parametrize("function", DIMENSION_FUNCTIONS)
def test_array_dimension_functions_over_rows_and_catalogs(conns, function):
    rows = (
        "(values (1, '{{1,2,3},{4,5,6}}'::int[]), (2, '{{7,8}}'::int[]), (3, NULL),"
        " (4, '{{9}}'::int[])) s(id, a)"
    )
    assert not isinstance(_same(conns, f"select id, {function} from {rows} order by id"), str)
    on_catalog = f"select {function.replace('(a', '(indkey::int2[]')} from pg_index limit 0"
    assert not isinstance(_same(conns, on_catalog), str)


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize(
    "value", [[[1, 2, 3], [4, 5, 6]], [[[1], [2]], [[3], [4]]], [1, 2], [[None, 2]]]
)
def test_array_dimension_functions_over_parameters(conns, value, binary):
    sql = (
        "select array_length(%s::int[], 2), array_upper(%s::int[], 1), array_ndims(%s::int[]),"
        " array_dims(%s::int[]), cardinality(%s::int[])"
    )
    assert not isinstance(_same(conns, sql, (value,) * 5, binary), str)


BYTEA_CASES = [
    "select id, b from csem_b order by id",
    "select '\\x00410a5c'::bytea, 'abc'::bytea, ''::bytea, NULL::bytea",
    "select b from csem_b where id = 1",
    "select id, b, 'pg_type'::regclass::text from csem_b order by id",
]


@pytest.mark.parametrize("output", ["escape", "hex"])
@pytest.mark.parametrize("sql", BYTEA_CASES)
def test_bytea_output_as_on_postgresql(conns, sql, output):
    nyala, postgres = conns
    for conn in conns:
        conn.execute(f"set bytea_output = '{output}'")
    try:
        got, expected = (conn.pgconn.exec_(sql.encode()) for conn in (nyala, postgres))
        assert got.status == expected.status == psycopg.pq.ExecStatus.TUPLES_OK
        rows = [
            [
                [r.get_value(i, j) for j in range(r.nfields)]
                for i in range(r.ntuples)
            ]
            for r in (got, expected)
        ]  # fmt: skip
        assert rows[0] == rows[1]
    finally:
        for conn in conns:
            conn.execute("reset bytea_output")


def test_bytea_output_escape_in_copy_and_refused_values(conns):
    nyala, postgres = conns
    outs = []
    for conn in conns:
        conn.execute("set bytea_output = 'escape'")
        with conn.cursor().copy("copy csem_b to stdout") as copy:
            outs.append(b"".join(bytes(block) for block in copy))
        conn.execute("reset bytea_output")
    assert outs[0] == outs[1]
    assert _same(conns, "set bytea_output = 'octal'") == "22023"


TABLEOID_CASES = [
    "select tableoid::regclass, * from csem_t order by id",
    "select t.tableoid::regclass::text, t.*, 1 as one from csem_t t order by id",
    "select tableoid = 'csem_t'::regclass as same, id from csem_t order by id",
    "select c.relname, count(*) from csem_t join pg_class c on c.oid = csem_t.tableoid"
    " group by c.relname",
    "select tableoid::regclass, v from csem_t where id = 1"
    " union all select tableoid::regclass, relname from pg_class where relname = 'pg_type'",
    "select tableoid::regclass, id from csem_p1",
    "select count(*) from csem_t where tableoid = 'csem_t'::regclass",
    "select tableoid::regclass, * from csem_p order by id",
    "select p.tableoid::regclass::text, p.* from csem_p p where tableoid <> 'csem_p1'::regclass"
    " order by id",
    "select tableoid::regclass, k from csem_p2 order by k",
    "select c.relname, count(*) from csem_p join pg_class c on c.oid = csem_p.tableoid"
    " group by c.relname order by 1",
    "select * from csem_p where tableoid = 'csem_p21'::regclass",
    "select t.id, p.tableoid::regclass from csem_t t join csem_p p on p.id = t.id order by 1",
]


@pytest.mark.parametrize("sql", TABLEOID_CASES)
def test_tableoid_as_on_postgresql(conns, sql):
    assert not isinstance(_same(conns, sql), str)


def test_tableoid_is_an_oid(conns):
    for conn in conns:
        cur = conn.execute("select tableoid, id from csem_t where id = 1")
        assert [c.type_code for c in cur.description] == [26, 23]
        assert cur.fetchall()[0][0] == conn.execute("select 'csem_t'::regclass::oid").fetchone()[0]


DESCRIBED = [
    "select $1::jsonb",
    "select $1::json",
    "select $1::jsonb -> $2",
    "select * from csem_j where j = $1",
    "select $1 = j from csem_j",
    "select id from csem_j where j @> $1",
    "select id from csem_j where j in ($1, $2)",
    "select id from csem_j where u = $1",
    "insert into csem_j values ($1, $2, $3)",
    "update csem_j set j = $1 where u = $2",
]


@pytest.mark.parametrize("sql", DESCRIBED)
def test_json_and_uuid_parameters_described_as_on_postgresql(conns, sql):
    described = []
    for conn in conns:
        conn.execute("create table if not exists csem_j (id int primary key, j jsonb, u uuid)")
        result = conn.pgconn.prepare(b"", sql.encode())
        assert result.status == psycopg.pq.ExecStatus.COMMAND_OK, result.error_message
        d = conn.pgconn.describe_prepared(b"")
        described.append(
            ([d.param_type(i) for i in range(d.nparams)], [d.ftype(i) for i in range(d.nfields)])
        )
    assert described[0] == described[1]


@pytest.mark.parametrize(
    "sql",
    [
        "select j -> $1 from csem_j",
        "select j ->> $1 from csem_j",
        "select j ? $1 from csem_j",
        "select j || $1 from csem_j",
        "select u::text || $1 from csem_j",
    ],
)
def test_json_operator_parameters_described_as_on_postgresql(conns, sql):
    test_json_and_uuid_parameters_described_as_on_postgresql(conns, sql)


@pytest.mark.parametrize("sql", ["select $1", "select ($1)", "select $1 as doc, 1"])
@pytest.mark.parametrize("declared", [3802, 114, 2950])
def test_declared_parameter_selected_as_on_postgresql(conns, sql, declared):
    described = []
    for conn in conns:
        result = conn.pgconn.prepare(b"", sql.encode(), [declared])
        assert result.status == psycopg.pq.ExecStatus.COMMAND_OK, result.error_message
        d = conn.pgconn.describe_prepared(b"")
        described.append(
            ([d.param_type(i) for i in range(d.nparams)], [d.ftype(i) for i in range(d.nfields)])
        )
    assert described[0] == described[1]


def test_keywords_as_on_postgresql(conns):
    sql = "select word, catcode, barelabel, catdesc, baredesc from pg_get_keywords() order by word"
    assert len(_same(conns, sql)[1]) > 400
    # pgjdbc's getSQLKeywords: the words PostgreSQL has beyond SQL:2003's.
    words = "select string_agg(word, ',' order by word) from pg_catalog.pg_get_keywords()"
    _same(conns, words + " where word <> all('{a,abs,absolute,action}'::text[])")


def test_oidvector_columns_are_sent_as_oidvector(conns):
    sql = "select proargtypes, indclass from pg_proc, pg_index limit 0"
    nyala, postgres = conns
    for conn in conns:
        cur = conn.execute(sql)
        assert [c.type_code for c in cur.description] == [30, 30]
    rows = nyala.execute(
        "select proargtypes::text from pg_proc where pronargs = 2 limit 5", binary=False
    ).fetchall()
    assert rows and all(len(r[0].split(" ")) == 2 and r[0].replace(" ", "").isdigit() for r in rows)


@pytest.mark.parametrize("meta", ["\\db", "\\deu", "\\dfn", "\\dX", "\\dT", "\\dt csem_*"])
def test_psql_meta_commands_run_as_on_postgresql(nyala_server, postgres_server, psql, meta):
    outs = [s.psql(["-X", "-c", meta]) for s in (nyala_server, postgres_server)]
    assert outs[0].returncode == outs[1].returncode == 0, outs[0].stderr
    if meta != "\\db":  # the tablespaces' owner is the bootstrap role, nyala or postgres
        assert outs[0].stdout == outs[1].stdout


def test_bytea_cast_to_text_as_on_postgresql(conns):
    sql = "select id, b::text, b::varchar, ''::bytea::text, 'a\\000'::bytea::text from csem_b"
    assert not isinstance(_same(conns, sql + " order by id"), str)


@pytest.mark.parametrize(
    "sql",
    [
        "create table csem_sys (id int primary key, tableoid int)",
        "create table csem_sys (id int primary key, xmin int)",
        "alter table csem_t add column ctid int",
        "alter table csem_t rename column v to cmax",
    ],
)
def test_system_column_names_are_refused_as_on_postgresql(conns, sql):
    assert _same(conns, sql) == "42701"
