"""Bulk loads (COPY text/binary, multi-row VALUES, INSERT ... SELECT, executemany) enter the
MemRowSet as insert segments; every later statement must answer as PostgreSQL 15 does:
duplicates (23505 and its detail), changes of loaded rows in and after their transaction,
savepoints, ON CONFLICT, foreign keys, ALTER TABLE, CHECKPOINT."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.differential import both_connected

pytestmark = [pytest.mark.e2e]

N = 2_000


@pytest.fixture
def servers(nyala_server, postgres_server):
    return nyala_server.dsn, postgres_server.dsn


def _error(conn: psycopg.Connection, action) -> tuple[str | None, str | None]:
    try:
        action()
    except psycopg.Error as exc:
        return exc.sqlstate, exc.diag.message_detail
    return None, None


def _copy(conn: psycopg.Connection, rows, binary: bool = False) -> str:
    cur = conn.cursor()
    statement = "copy seg from stdin" + (" (format binary)" if binary else "")
    with cur.copy(statement) as copy:
        if binary:
            copy.set_types(["int8", "int8", "text"])
        for row in rows:
            copy.write_row(row)
    return cur.statusmessage or ""


def _state(conn: psycopg.Connection, table: str = "seg"):
    return conn.execute(
        f"select count(*), sum(k), sum(v), count(distinct s), md5(string_agg(k::text || ':' || "
        f"coalesce(v::text, '-') || ':' || coalesce(s, '-'), ',' order by k)) from {table}"
    ).fetchone()


def test_bulk_loaded_rows_behave_as_in_postgresql(servers):
    def scenario(conn: psycopg.Connection):
        conn.execute("drop table if exists seg_child")
        conn.execute("drop table if exists seg")
        conn.execute("create table seg (k bigint primary key, v bigint, s text)")
        out = [_copy(conn, ((k, k * 3, f"t{k % 7}") for k in range(N)))]
        out.append(_copy(conn, ((k, -k, None) for k in range(N, 2 * N)), binary=True))
        # Duplicates: in the batch, against a loaded segment, against a single-row insert.
        dup_in_batch = [(k, 0, "d") for k in range(3 * N, 3 * N + 300)] + [(3 * N + 5, 0, "d")]
        out.append(_error(conn, lambda: _copy(conn, dup_in_batch)))
        out.append(
            _error(conn, lambda: _copy(conn, ((k, 0, "x") for k in range(2 * N - 5, 3 * N))))
        )
        conn.execute("insert into seg values (%s, 1, 'single')", (5 * N,))
        near = [(k, 0, "y") for k in range(5 * N - 300, 5 * N + 1)]
        out.append(_error(conn, lambda: _copy(conn, near)))
        values = ", ".join(f"({k}, {k}, 'values')" for k in range(6 * N, 6 * N + 400))
        conn.execute(f"insert into seg values {values}")
        conn.execute(
            f"insert into seg select g, g % 13, 'select' from generate_series({7 * N}, {7 * N + 999}) g"
        )
        with conn.cursor() as cur:
            cur.executemany(
                "insert into seg values (%s, %s, 'many')",
                [(k, k) for k in range(8 * N, 8 * N + 500)],
            )
        out.append(_state(conn))
        # Changes of loaded rows by a later transaction, and reads of them by key.
        conn.execute("update seg set v = v + 1000 where k % 97 = 0")
        conn.execute("delete from seg where k between 100 and 199 or k between 7100 and 7150")
        out.append(
            conn.execute("select * from seg where k in (97, 150, 1940, 7001) order by k").fetchall()
        )
        out.append(_state(conn))
        # In one transaction: load, change own rows, savepoint, load, roll back to it.
        with conn.transaction():
            _copy(conn, ((k, k, "own") for k in range(9 * N, 9 * N + 600)))
            conn.execute(
                "update seg set s = 'own-updated' where k between %s and %s", (9 * N, 9 * N + 9)
            )
            conn.execute("delete from seg where k = %s", (9 * N + 10,))
            conn.execute("savepoint a")
            _copy(conn, ((k, k, "gone") for k in range(10 * N, 10 * N + 600)))
            conn.execute("update seg set v = 0 where k = %s or k = %s", (10 * N, 9 * N + 1))
            inside = _state(conn)
            conn.execute("rollback to savepoint a")
            out.append((inside, _state(conn)))
        with conn.transaction(force_rollback=True):
            _copy(conn, ((k, k, "rolled back") for k in range(11 * N, 11 * N + 600)))
        out.append(_state(conn))
        # ON CONFLICT and foreign keys probe the loaded rows.
        conflict = ", ".join(f"({k}, 5, 'conflict')" for k in range(N - 150, N + 150))
        cur = conn.execute(f"insert into seg values {conflict} on conflict do nothing")
        out.append(cur.rowcount)
        cur = conn.execute(
            f"insert into seg values {conflict} on conflict (k) do update set s = excluded.s"
        )
        out.append(cur.rowcount)
        conn.execute("create table seg_child (id int primary key, k bigint references seg)")
        conn.execute("insert into seg_child select g, g from generate_series(300, 900) g")
        out.append(_error(conn, lambda: conn.execute("insert into seg_child values (1, 150)")))
        out.append(_error(conn, lambda: conn.execute("delete from seg where k = 300")))
        conn.execute("alter table seg add column extra int default 7")
        out.append(conn.execute("select count(*), sum(extra) from seg").fetchone())
        conn.execute("checkpoint")
        out.append(_state(conn))
        out.append(
            conn.execute("select sum(v), count(*) filter (where s = 'select') from seg").fetchone()
        )
        return out

    both_connected(scenario, *servers)
