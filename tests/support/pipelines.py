"""Pipelined ``executemany`` runs on a fresh table, for tests that compare what nyala's
batched writes leave with PostgreSQL's (each run's row count or SQLSTATE, then the rows)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from tests.support.servers import NyalaServer, PostgresServer


def run_pipelines(
    server: NyalaServer | PostgresServer,
    table: str,
    ddl: str,
    rows: Sequence[tuple[Any, ...]],
    statements: Sequence[tuple[str, Sequence[Sequence[Any]]]],
    order_by: str,
    copied: bool = False,
) -> list[Any]:
    """The table ``table`` (made by ``ddl``, holding ``rows``, loaded by executemany or with
    ``copied`` by COPY) after ``statements``, each an executemany run whose rowcount or
    SQLSTATE is kept, then its rows in ``order_by``."""
    seen: list[Any] = []
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"drop table if exists {table}")
        conn.execute(ddl)
        marks = ", ".join(["%s"] * len(rows[0]))
        with conn.cursor() as cur:
            if copied:
                with cur.copy(f"copy {table} from stdin") as copy:
                    for row in rows:
                        copy.write_row(row)
            else:
                cur.executemany(f"insert into {table} values ({marks})", rows)
        for sql, params in statements:
            with conn.cursor() as cur:
                try:
                    cur.executemany(sql, params)
                    seen.append(("ok", cur.rowcount))
                except psycopg.Error as exc:
                    seen.append(("error", exc.sqlstate))
        seen.append(conn.execute(f"select * from {table} order by {order_by}").fetchall())
    return seen
