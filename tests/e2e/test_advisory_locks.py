"""Advisory locks across connections through psycopg, side by side with PostgreSQL 15:
migration tools take one before migrating and job queues use the try forms."""

from __future__ import annotations

import random
import threading
import time

import psycopg
import pytest
from psycopg import errors

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["nyala", "postgres"])
def dsn(request, nyala_server, postgres_server) -> str:
    return nyala_server.dsn if request.param == "nyala" else postgres_server.dsn


def _key() -> int:
    return random.randrange(1, 2**62)


def test_session_lock_blocks_others_until_unlocked(dsn):
    key = _key()
    with psycopg.connect(dsn, autocommit=True) as a, psycopg.connect(dsn, autocommit=True) as b:
        a.execute("select pg_advisory_lock(%s)", (key,))
        a.execute("select pg_advisory_lock(%s)", (key,))  # reentrant: held twice
        assert b.execute("select pg_try_advisory_lock(%s)", (key,)).fetchone() == (False,)
        assert b.execute("select pg_try_advisory_lock(%s, 1)", (key % 2**31,)).fetchone() == (
            True,
        )  # the two-key space is another
        released = threading.Event()

        def unlock_later() -> None:
            time.sleep(0.4)
            assert a.execute("select pg_advisory_unlock(%s)", (key,)).fetchone() == (True,)
            released.set()
            assert a.execute("select pg_advisory_unlock(%s)", (key,)).fetchone() == (True,)

        thread = threading.Thread(target=unlock_later)
        thread.start()
        b.execute("select pg_advisory_lock(%s)", (key,))  # waits for both unlocks
        thread.join()
        assert released.is_set()
        assert a.execute("select pg_advisory_unlock(%s)", (key,)).fetchone() == (False,)
        assert b.execute("select pg_advisory_unlock(%s)", (key,)).fetchone() == (True,)


def test_lock_timeout_and_cancel_end_a_wait(dsn):
    key = _key()
    with psycopg.connect(dsn, autocommit=True) as a, psycopg.connect(dsn, autocommit=True) as b:
        a.execute("select pg_advisory_lock(%s)", (key,))
        b.execute("set lock_timeout = 200")
        with pytest.raises(errors.LockNotAvailable):
            b.execute("select pg_advisory_lock(%s)", (key,))
        b.execute("set lock_timeout = 0")
        timer = threading.Timer(0.3, b.cancel)
        timer.start()
        try:
            with pytest.raises(errors.QueryCanceled):
                b.execute("select pg_advisory_lock(%s)", (key,))
        finally:
            timer.cancel()
        assert b.execute("select pg_try_advisory_lock(%s)", (key,)).fetchone() == (False,)


def test_xact_lock_ends_with_the_transaction_and_session_lock_with_the_session(dsn):
    key = _key()
    with psycopg.connect(dsn) as a, psycopg.connect(dsn, autocommit=True) as b:
        a.execute("select pg_advisory_xact_lock(%s)", (key,))
        assert b.execute("select pg_try_advisory_xact_lock(%s)", (key,)).fetchone() == (False,)
        a.commit()
        assert b.execute("select pg_try_advisory_lock(%s)", (key,)).fetchone() == (True,)
        b.close()  # disconnecting releases its session locks (once the server sees it)
        a.execute("set lock_timeout = 10000")
        a.execute("select pg_advisory_lock(%s)", (key,))
        assert a.execute("select pg_try_advisory_lock(%s)", (key,)).fetchone() == (True,)
        a.execute("select pg_advisory_unlock_all()")
        a.commit()
