"""``python -m bench.statement_cost``: server CPU per prepared statement, and where it goes.

A machine shared with other work cannot give honest rates, but the server
process's own CPU time per statement (``/proc/PID/stat``) barely moves with
the load, so this measures that: N prepared point selects, UPDATEs and
DELETEs by key, single-row INSERTs, lookups by an indexed non-key column and
pgbench TPC-B transactions, one client, each kind's server CPU divided by its
count, once the server's background work after loading the tables has ended.  With
``--profile DIR`` the server runs under cProfile on every thread
(``bench.profiled_server``) and each kind's statistics of the measured statements
alone (not the loading, flushing and warm-up before them) land in DIR/KIND.pstats.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from bench.process_cpu import measured_server, server_cpu, settle


def _setup(conn: psycopg.Connection[Any], rows: int) -> None:
    for sql in (
        "create table kv (k bigint primary key, v bigint, s text)",
        f"insert into kv select i, i, 'x' || i from generate_series(1, {rows}) as g(i)",
        "create table ins (a bigint primary key, b bigint, c text)",
        "create table looked (id bigint primary key, code bigint, payload text)",
        f"insert into looked select i, (i * 7919) % 1000003, 'p' || i "
        f"from generate_series(1::bigint, {rows}::bigint) as g(i)",
        "create index looked_code on looked (code)",
        "create table pgbench_branches (bid int primary key, bbalance int, filler varchar(88))",
        "create table pgbench_tellers (tid int primary key, bid int, tbalance int, "
        "filler varchar(84))",
        "create table pgbench_accounts (aid int primary key, bid int, abalance int, "
        "filler varchar(84))",
        "create table pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, "
        "filler varchar(22))",
        "insert into pgbench_branches values (1, 0, null)",
        "insert into pgbench_tellers select i, 1, 0, null from generate_series(1, 10) i",
        f"insert into pgbench_accounts select i, 1, 0, '' from generate_series(1, {rows}) i",
        "checkpoint",
    ):
        conn.execute(sql)


def _kinds(rows: int) -> dict[str, Callable[[psycopg.Cursor[Any], int], None]]:
    rng = random.Random(7)

    def point(cur: psycopg.Cursor[Any], i: int) -> None:
        cur.execute("select v from kv where k = %s", (rng.randint(1, rows),), prepare=True)
        assert len(cur.fetchall()) == 1

    def update(cur: psycopg.Cursor[Any], i: int) -> None:
        cur.execute("update kv set v = v + 1 where k = %s", (rng.randint(1, rows),), prepare=True)
        assert cur.rowcount == 1

    def insert(cur: psycopg.Cursor[Any], i: int) -> None:
        cur.execute("insert into ins values (%s, %s, %s)", (i, i, "row"), prepare=True)
        assert cur.rowcount == 1

    def delete(cur: psycopg.Cursor[Any], i: int) -> None:
        cur.execute("delete from kv where k = %s", (i + 1,), prepare=True)
        assert cur.rowcount == 1

    def index_lookup(cur: psycopg.Cursor[Any], i: int) -> None:
        n = rng.randint(1, rows)
        cur.execute("select id, payload from looked where code = %s", ((n * 7919) % 1000003,),
                    prepare=True)  # fmt: skip
        assert [r[0] for r in cur.fetchall()] == [n]

    def tpcb(cur: psycopg.Cursor[Any], i: int) -> None:
        aid, tid, delta = rng.randint(1, rows), rng.randint(1, 10), rng.randint(-5000, 5000)
        cur.execute("begin", prepare=True)
        cur.execute("update pgbench_accounts set abalance = abalance + %s where aid = %s",
                    (delta, aid), prepare=True)  # fmt: skip
        cur.execute("select abalance from pgbench_accounts where aid = %s", (aid,), prepare=True)
        cur.fetchall()
        cur.execute("update pgbench_tellers set tbalance = tbalance + %s where tid = %s",
                    (delta, tid), prepare=True)  # fmt: skip
        cur.execute("update pgbench_branches set bbalance = bbalance + %s where bid = %s",
                    (delta, 1), prepare=True)  # fmt: skip
        cur.execute("insert into pgbench_history (tid, bid, aid, delta, mtime) "
                    "values (%s, %s, %s, %s, current_timestamp)", (tid, 1, aid, delta),
                    prepare=True)  # fmt: skip
        cur.execute("end", prepare=True)

    return {"point_select": point, "update": update, "insert": insert, "delete": delete,
            "index_lookup": index_lookup, "tpcb": tpcb}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.statement_cost", description=__doc__)
    parser.add_argument("--count", type=int, default=3000, help="statements per kind")
    parser.add_argument("--rows", type=int, default=100_000, help="rows per table")
    parser.add_argument("--profile", type=Path, help="write cProfile statistics here")
    parser.add_argument("--only", default="", help="comma-separated kinds")
    args = parser.parse_args(argv)
    kinds = _kinds(args.rows)
    chosen = args.only.split(",") if args.only else list(kinds)
    with tempfile.TemporaryDirectory(prefix="nyala-cost-") as tmp:
        for kind in chosen:
            pstats = None if args.profile is None else args.profile.resolve() / f"{kind}.pstats"
            with (
                measured_server(Path(tmp) / kind, pstats) as server,
                psycopg.connect(server.dsn, autocommit=True) as conn,
            ):
                _setup(conn, args.rows)
                assert server.pid is not None
                settle(server.pid)
                with conn.cursor() as cur:
                    for i in range(200):  # warm: plans made, first-run costs paid
                        kinds[kind](cur, args.count + i)
                    with server_cpu(server, pstats) as measured:
                        for i in range(args.count):
                            kinds[kind](cur, i)
            print(f"{kind:14s} server CPU {measured.cpu_s / args.count * 1e6:8.1f} us/statement   "
                  f"wall {measured.wall_s / args.count * 1e6:8.1f} us", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
