"""The benchmark's data: generated with numpy, loaded the same way into every system.

Rows reach nyala and PostgreSQL through psycopg: COPY FROM STDIN in text
format when nyala supports COPY, batched multi-row INSERTs with parameters
otherwise (``LoadMethod``; the report says which ran).  The COPY text is
written by pyarrow's CSV writer, so generating and encoding stay vectorised.
DuckDB gets the same Arrow tables in-process.
"""

from __future__ import annotations

import enum
import io
from typing import Any

import numpy as np
import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

COPY_CHUNK_ROWS = 100_000
INSERT_BATCH_ROWS = 500

METRICS_DDL = (
    "create table {name} (host text, metric text, time bigint, value double precision, "
    "primary key (host, metric, time))"
)
METRIC_NAMES = ("cpu.user", "cpu.system", "mem.used", "disk.read", "disk.write", "net.in")

# TPC-H's lineitem with its types, except CHAR(n) as VARCHAR(n): Kudu (and nyala) have
# no blank-padded CHAR, so all three systems get VARCHAR.
LINEITEM_DDL = """create table lineitem (
    l_orderkey bigint not null,
    l_partkey bigint not null,
    l_suppkey bigint not null,
    l_linenumber integer not null,
    l_quantity numeric(15,2) not null,
    l_extendedprice numeric(15,2) not null,
    l_discount numeric(15,2) not null,
    l_tax numeric(15,2) not null,
    l_returnflag varchar(1) not null,
    l_linestatus varchar(1) not null,
    l_shipdate date not null,
    l_commitdate date not null,
    l_receiptdate date not null,
    l_shipinstruct varchar(25) not null,
    l_shipmode varchar(10) not null,
    l_comment varchar(44) not null,
    primary key (l_orderkey, l_linenumber)
)"""
SHIP_INSTRUCT = ("DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN")
SHIP_MODE = ("REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB")
COMMENT_WORDS = (
    "furiously", "carefully", "blithely", "quickly", "slyly", "ironic", "final", "pending",
    "regular", "express", "special", "bold", "even", "silent", "deposits", "requests",
    "accounts", "packages", "theodolites", "instructions", "foxes", "pinto", "beans", "asymptotes",
)  # fmt: skip


class LoadMethod(enum.Enum):
    COPY = "COPY FROM STDIN (text)"
    INSERT = f"multi-row INSERT, {INSERT_BATCH_ROWS} rows per statement"


def metrics(n: int, *, seed: int = 1, time_offset: int = 0) -> pa.Table:
    """Return n rows of ``metrics`` with distinct keys: hosts x metric names x times."""
    rng = np.random.default_rng(seed)
    i = np.arange(n, dtype=np.int64)
    hosts = max(1, min(1000, n // 600))
    host = pc.binary_join_element_wise("host-", pa.array((i % hosts).astype(str)), "")
    metric = pa.array(np.asarray(METRIC_NAMES)[(i // hosts) % len(METRIC_NAMES)])
    time = 1_700_000_000_000 + time_offset + (i // (hosts * len(METRIC_NAMES))) * 10_000
    value = rng.normal(50.0, 15.0, n)
    return pa.table({"host": host, "metric": metric, "time": time, "value": value})


def metrics_keys(table: pa.Table) -> list[tuple[str, str, int]]:
    return list(
        zip(table["host"].to_pylist(), table["metric"].to_pylist(), table["time"].to_pylist())
    )


def lineitem(n: int, *, seed: int = 7) -> pa.Table:
    """Return about n rows of a TPC-H-like lineitem with the spec's value ranges."""
    rng = np.random.default_rng(seed)
    lines_per_order = rng.integers(1, 8, size=n)
    ends = np.cumsum(lines_per_order)
    orders = int(np.searchsorted(ends, n, side="left")) + 1
    lines_per_order = lines_per_order[:orders]
    lines_per_order[-1] -= int(ends[orders - 1] - n)
    n_orders = lines_per_order.size
    orderkey = np.repeat(np.arange(1, n_orders + 1, dtype=np.int64) * 4 - 3, lines_per_order)
    starts = np.repeat(np.cumsum(lines_per_order) - lines_per_order, lines_per_order)
    linenumber = (np.arange(n) - starts + 1).astype(np.int32)
    scale_factor = max(n / 6_000_000, 1e-3)
    partkey = rng.integers(1, int(200_000 * scale_factor) + 2, size=n)
    suppkey = rng.integers(1, int(10_000 * scale_factor) + 2, size=n)
    quantity = rng.integers(1, 51, size=n)
    retail_cents = 90_000 + (partkey // 10) % 20_001 + 100 * (partkey % 1_000)
    extended_cents = quantity * retail_cents
    discount_cents = rng.integers(0, 11, size=n)
    tax_cents = rng.integers(0, 9, size=n)
    start, end = np.datetime64("1992-01-01"), np.datetime64("1998-12-31")
    order_date = np.repeat(
        start + rng.integers(0, int((end - start).astype(np.int64)) - 151 + 1, size=n_orders),
        lines_per_order,
    )
    ship = order_date + rng.integers(1, 122, size=n)
    commit = order_date + rng.integers(30, 91, size=n)
    receipt = ship + rng.integers(1, 31, size=n)
    current = np.datetime64("1995-06-17")
    returnflag = np.where(receipt <= current, np.where(rng.random(n) < 0.5, "R", "A"), "N")
    linestatus = np.where(ship > current, "O", "F")
    words = np.asarray(COMMENT_WORDS)
    comment = pc.binary_join_element_wise(
        *(pa.array(words[rng.integers(0, words.size, size=n)]) for _ in range(3)), " "
    )
    return pa.table(
        {
            "l_orderkey": orderkey,
            "l_partkey": partkey,
            "l_suppkey": suppkey,
            "l_linenumber": linenumber,
            "l_quantity": _cents(quantity * 100),
            "l_extendedprice": _cents(extended_cents),
            "l_discount": _cents(discount_cents),
            "l_tax": _cents(tax_cents),
            "l_returnflag": returnflag,
            "l_linestatus": linestatus,
            "l_shipdate": ship.astype("datetime64[D]"),
            "l_commitdate": commit.astype("datetime64[D]"),
            "l_receiptdate": receipt.astype("datetime64[D]"),
            "l_shipinstruct": np.asarray(SHIP_INSTRUCT)[rng.integers(0, 4, size=n)],
            "l_shipmode": np.asarray(SHIP_MODE)[rng.integers(0, 7, size=n)],
            "l_comment": pc.utf8_slice_codeunits(comment, 0, 44),
        }
    )


def _cents(cents: np.ndarray) -> pa.Array:
    """Return exact numeric(15,2) values from integer hundredths (128-bit little-endian words)."""
    words = np.zeros((cents.size, 2), dtype=np.int64)
    words[:, 0] = cents
    words[:, 1] = np.where(cents < 0, -1, 0)
    return pa.Array.from_buffers(pa.decimal128(15, 2), cents.size, [None, pa.py_buffer(words)])


def q6_answer(table: pa.Table) -> Any:
    """Return TPC-H Q6's revenue computed with numpy on exact hundredths, as a Decimal."""
    import decimal

    ship = table["l_shipdate"].to_numpy()
    discount = _to_cents(table["l_discount"])
    quantity = _to_cents(table["l_quantity"])
    price = _to_cents(table["l_extendedprice"])
    mask = (
        (ship >= np.datetime64("1994-01-01"))
        & (ship < np.datetime64("1995-01-01"))
        & (discount >= 5)
        & (discount <= 7)
        & (quantity < 2400)
    )
    revenue = int(np.sum(price[mask].astype(object) * discount[mask].astype(object)))
    return decimal.Decimal(revenue).scaleb(-4)


def _to_cents(column: pa.ChunkedArray) -> np.ndarray:
    return pc.multiply(column, pa.scalar(100, pa.decimal128(3, 0))).cast(pa.int64()).to_numpy()


def copy_text(table: pa.Table) -> list[bytes]:
    """Return COPY text-format chunks (tab-separated, no NULLs) of a table."""
    if any(column.null_count for column in table.columns):
        raise ValueError("COPY text writer here does not write NULLs")
    options = pacsv.WriteOptions(include_header=False, delimiter="\t", quoting_style="none")
    chunks = []
    for start in range(0, table.num_rows, COPY_CHUNK_ROWS):
        buffer = io.BytesIO()
        pacsv.write_csv(table.slice(start, COPY_CHUNK_ROWS), buffer, options)
        chunks.append(buffer.getvalue())
    return chunks


def insert_batches(table: pa.Table) -> list[list[Any]]:
    """Return the flattened parameters of each multi-row INSERT batch."""
    batches = []
    for start in range(0, table.num_rows, INSERT_BATCH_ROWS):
        part = table.slice(start, INSERT_BATCH_ROWS)
        columns = [column.to_pylist() for column in part.columns]
        batches.append([value for row in zip(*columns) for value in row])
    return batches


def load(
    conn: psycopg.Connection[Any],
    name: str,
    table: pa.Table,
    method: LoadMethod,
    prepared: list[Any] | None = None,
) -> None:
    """Load a table's rows into ``name`` in one transaction with the given method."""
    payload = prepared if prepared is not None else prepare_load(table, method)
    with conn.transaction(), conn.cursor() as cur:
        if method is LoadMethod.COPY:
            with cur.copy(f"copy {name} from stdin") as copy:
                for chunk in payload:
                    copy.write(chunk)
            return
        width = table.num_columns
        for params in payload:
            rows = len(params) // width
            values = ", ".join("(" + ", ".join(["%s"] * width) + ")" for _ in range(rows))
            cur.execute(f"insert into {name} values {values}", params, prepare=True)


def prepare_load(table: pa.Table, method: LoadMethod) -> list[Any]:
    """Encode a table for ``load`` ahead of time, so the timed part is the load itself."""
    return copy_text(table) if method is LoadMethod.COPY else insert_batches(table)


def load_duckdb(con: Any, name: str, table: pa.Table) -> None:
    con.register("bench_source", table)
    try:
        con.execute(f"insert into {name} select * from bench_source")
    finally:
        con.unregister("bench_source")


def detect_load_method(conn: psycopg.Connection[Any]) -> LoadMethod:
    """Return COPY if the server accepts COPY FROM STDIN, else INSERT."""
    conn.execute("drop table if exists bench_copy_probe")
    conn.execute("create table bench_copy_probe (id bigint primary key)")
    try:
        with conn.cursor() as cur, cur.copy("copy bench_copy_probe from stdin") as copy:
            copy.write(b"1\n")
        return LoadMethod.COPY
    except psycopg.errors.FeatureNotSupported:
        return LoadMethod.INSERT
    finally:
        conn.execute("drop table if exists bench_copy_probe")
