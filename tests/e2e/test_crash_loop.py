"""Crash loop under load: kill -9 during transfer transactions, flushes and checkpoints, many times.

Several clients move money between accounts, each transfer one transaction
of two UPDATEs and a ledger INSERT; a client notes a transfer as
acknowledged only when its COMMIT returned.  Meanwhile another client runs
CHECKPOINT (flushes and compactions in progress).  At a random moment the
server is killed with SIGKILL and started again, and the data must show:

- every acknowledged transfer is in the ledger (nothing acknowledged is lost);
- each account's balance is its opening balance plus what the ledger says
  came in minus what went out (no transaction is partly visible);
- the balances still sum to what the bank started with (conservation).

``NYALA_SOAK_KILLS`` sets the number of kills (``make soak`` runs 200).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import psycopg
import pytest

from tests.support.servers import NyalaServer

KILLS = int(os.environ.get("NYALA_SOAK_KILLS", "3"))
ACCOUNTS = 12
OPENING = 1_000
CLIENTS = 4
REPORT = os.environ.get("NYALA_SOAK_REPORT")


class Bank:
    """The clients of one server run, and what they were told."""

    def __init__(self, dsn: str, run: int) -> None:
        self.dsn = dsn
        self.run = run
        self.acknowledged: set[tuple[int, int, int]] = set()
        self.endings: list[str | None] = []
        """The SQLSTATE of the error that ended each client's connection (None: no error)."""
        self.stop = threading.Event()
        self._lock = threading.Lock()

    def transfer_loop(self, client: int) -> None:
        rng = random.Random(self.run * 100 + client)
        seq = 0
        try:
            conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=10)
        except psycopg.Error:
            return
        with conn:
            while not self.stop.is_set():
                seq += 1
                source, target = rng.sample(range(1, ACCOUNTS + 1), 2)
                amount = rng.randint(1, 50)
                try:
                    conn.execute("BEGIN")
                    conn.execute(
                        "UPDATE accounts SET balance = balance - %s WHERE id = %s",
                        (amount, source),
                    )
                    conn.execute(
                        "UPDATE accounts SET balance = balance + %s WHERE id = %s",
                        (amount, target),
                    )
                    conn.execute(
                        "INSERT INTO ledger VALUES (%s, %s, %s, %s, %s, %s)",
                        (self.run, client, seq, source, target, amount),
                    )
                    conn.execute("COMMIT")
                except psycopg.OperationalError as exc:
                    if not (exc.sqlstate or "").startswith("40"):  # 40001/40P01 are retried
                        self.endings.append(exc.sqlstate)
                        return  # the server is gone; the outcome of this transfer is unknown
                except psycopg.Error:
                    pass
                else:
                    with self._lock:
                        self.acknowledged.add((self.run, client, seq))
                    continue
                try:
                    conn.execute("ROLLBACK")  # a conflict (40001, 40P01, 55P03): try another
                except psycopg.Error:
                    return

    def checkpoint_loop(self) -> None:
        try:
            conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=10)
        except psycopg.Error:
            return
        with conn:
            while not self.stop.wait(0.3):
                try:
                    conn.execute("CHECKPOINT")
                except psycopg.Error:
                    return


def _check_invariants(dsn: str, acknowledged: set[tuple[int, int, int]]) -> int:
    """Assert the three invariants; return the number of transfers in the ledger."""
    with psycopg.connect(dsn, autocommit=True, connect_timeout=30) as conn:
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        balances = dict(conn.execute("SELECT id, balance FROM accounts").fetchall())
        ledger = conn.execute(
            "SELECT run, client, seq, source, target, amount FROM ledger"
        ).fetchall()
        conn.execute("COMMIT")
    recorded = {(run, client, seq) for run, client, seq, *_ in ledger}
    lost = acknowledged - recorded
    assert not lost, f"{len(lost)} acknowledged transfers are missing, e.g. {sorted(lost)[:5]}"
    expected = dict.fromkeys(range(1, ACCOUNTS + 1), OPENING)
    for *_, source, target, amount in ledger:
        expected[source] -= amount
        expected[target] += amount
    assert balances == expected, "a transfer is partly visible"
    assert sum(balances.values()) == ACCOUNTS * OPENING
    return len(ledger)


def _bank_server(nyala_server_factory: Callable[..., NyalaServer]) -> NyalaServer:
    server = nyala_server_factory(extra_args=("--flush-threshold-bytes", "65536"))
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL)")
        conn.execute(
            "CREATE TABLE ledger (run int, client int, seq int, source int, target int,"
            " amount int, PRIMARY KEY (run, client, seq))"
        )
        conn.execute(
            f"INSERT INTO accounts SELECT g, {OPENING} FROM generate_series(1, {ACCOUNTS}) g"
        )
    return server


def _start_clients(bank: Bank) -> list[threading.Thread]:
    threads = [
        threading.Thread(target=bank.transfer_loop, args=(c,), daemon=True) for c in range(CLIENTS)
    ]
    threads.append(threading.Thread(target=bank.checkpoint_loop, daemon=True))
    for thread in threads:
        thread.start()
    return threads


@pytest.mark.slow
def test_kill_9_under_transfer_load_loses_no_acknowledged_commit(
    nyala_server_factory: Callable[..., NyalaServer],
) -> None:
    server = _bank_server(nyala_server_factory)
    acknowledged: set[tuple[int, int, int]] = set()
    rng = random.Random(19)
    transfers = 0
    for run in range(1, KILLS + 1):
        bank = Bank(server.dsn, run)
        threads = _start_clients(bank)
        time.sleep(rng.uniform(0.5, 2.5))
        server.kill9()
        bank.stop.set()
        for thread in threads:
            thread.join(timeout=60)
        acknowledged |= bank.acknowledged
        server.start()
        transfers = _check_invariants(server.dsn, acknowledged)
    if REPORT:
        with open(REPORT, "a", encoding="utf-8") as out:
            out.write(
                f"crash loop: {KILLS} kills, {len(acknowledged)} commits acknowledged, "
                f"{transfers} transfers recorded, lost: 0\n"
            )


@pytest.mark.slow
def test_sigterm_under_transfer_load_ends_sessions_with_57p01_and_leaves_a_clean_wal(
    nyala_server_factory: Callable[..., NyalaServer],
) -> None:
    server = _bank_server(nyala_server_factory)
    bank = Bank(server.dsn, 1)
    threads = _start_clients(bank)
    deadline = time.monotonic() + 60
    while len(bank.acknowledged) < 20 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert server.stop() == 0  # SIGTERM: a clean exit, running commits finished
    bank.stop.set()
    for thread in threads:
        thread.join(timeout=60)
    # Each client was told the server is going away (57P01) or found it gone afterwards.
    assert bank.endings and set(bank.endings) <= {"57P01", None}, bank.endings
    assert "57P01" in bank.endings, bank.endings
    checked = subprocess.run(
        [sys.executable, "-m", "server", "check", "--data-dir", str(server.data_dir)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    server.start()
    assert "torn WAL tail" not in server.log
    assert _check_invariants(server.dsn, bank.acknowledged) >= len(bank.acknowledged)


RR_CLIENTS = 8
RR_SECONDS = float(os.environ.get("NYALA_RR_BANK_SECONDS", "6"))


def _rr_client(
    dsn: str, client: int, deadline: float, failures: list[str], reads: list[int]
) -> None:
    """Alternate transfers and audits, each a REPEATABLE READ transaction; audit every read."""
    rng = random.Random(client)
    seq = 0
    with psycopg.connect(dsn, autocommit=True, connect_timeout=20) as conn:
        while time.monotonic() < deadline and not failures:
            seq += 1
            try:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                if rng.random() < 0.5:
                    total = conn.execute("SELECT sum(balance) FROM accounts").fetchone()
                    balances = dict(conn.execute("SELECT id, balance FROM accounts").fetchall())
                    moved = conn.execute(
                        "SELECT source, target, amount FROM ledger WHERE run = 0"
                    ).fetchall()
                    again = conn.execute("SELECT sum(balance) FROM accounts").fetchone()
                    conn.execute("COMMIT")
                    expected = dict.fromkeys(range(1, ACCOUNTS + 1), OPENING)
                    for source, target, amount in moved:
                        expected[source] -= amount
                        expected[target] += amount
                    if total != (ACCOUNTS * OPENING,) or again != total or balances != expected:
                        failures.append(f"client {client} read {total}, {again}, {balances}")
                    reads.append(1)
                    continue
                source, target = rng.sample(range(1, ACCOUNTS + 1), 2)
                amount = rng.randint(1, 50)
                conn.execute(
                    "UPDATE accounts SET balance = balance - %s WHERE id = %s", (amount, source)
                )
                conn.execute(
                    "UPDATE accounts SET balance = balance + %s WHERE id = %s", (amount, target)
                )
                conn.execute(
                    "INSERT INTO ledger VALUES (0, %s, %s, %s, %s, %s)",
                    (client, seq, source, target, amount),
                )
                conn.execute("COMMIT")
            except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected):
                # Transfers in random order may deadlock (40P01), as on PostgreSQL.
                conn.execute("ROLLBACK")


@pytest.mark.slow
def test_repeatable_read_bank_with_8_clients_sees_the_invariants_on_every_read(
    nyala_server: NyalaServer,
) -> None:
    with psycopg.connect(nyala_server.dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS accounts")
        conn.execute("DROP TABLE IF EXISTS ledger")
        conn.execute("CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL)")
        conn.execute(
            "CREATE TABLE ledger (run int, client int, seq int, source int, target int,"
            " amount int, PRIMARY KEY (run, client, seq))"
        )
        conn.execute(
            f"INSERT INTO accounts SELECT g, {OPENING} FROM generate_series(1, {ACCOUNTS}) g"
        )
    failures: list[str] = []
    reads: list[int] = []
    deadline = time.monotonic() + RR_SECONDS
    threads = [
        threading.Thread(
            target=_rr_client, args=(nyala_server.dsn, c, deadline, failures, reads), daemon=True
        )
        for c in range(RR_CLIENTS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=RR_SECONDS + 120)
    assert not failures, failures[:3]
    assert reads, "no audit ran"
    _check_invariants(nyala_server.dsn, set())
