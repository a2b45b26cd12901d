"""A client that stops reading holds up only itself: its answer waits in the server (the
transport's backpressure), other sessions are answered meanwhile, and once it reads again
every row arrives, in order.  A pipeline of short reads sent in one burst larger than the
server's read buffer is answered whole."""

from __future__ import annotations

import psycopg
import pytest

from server import messages as m
from tests.support.raw_client import RawClient

pytestmark = pytest.mark.e2e

_ROWS = 200_000


def test_a_client_that_stops_reading_holds_up_only_itself(nyala_server):
    slow = RawClient(nyala_server.host, nyala_server.port)
    try:
        slow.startup()
        slow.send(m.Query(f"select g, repeat('x', 100) from generate_series(1, {_ROWS}) as s(g)"))
        with psycopg.connect(nyala_server.dsn, autocommit=True) as other:
            for n in range(20):
                assert other.execute("select %s::int + 1", (n,)).fetchone() == (n + 1,)
        answer = slow.until_ready()
    finally:
        slow.close()
    rows = [msg for msg in answer if isinstance(msg, m.DataRow)]
    assert len(rows) == _ROWS
    assert rows[0].values[0] == b"1" and rows[-1].values[0] == str(_ROWS).encode()
    complete = [msg for msg in answer if isinstance(msg, m.CommandComplete)]
    assert [msg.tag for msg in complete] == [f"SELECT {_ROWS}"]


def test_a_burst_of_short_reads_larger_than_the_read_buffer_is_answered_whole(nyala_server):
    client = RawClient(nyala_server.host, nyala_server.port)
    try:
        client.startup()
        client.send(m.Parse("one", "select $1::int8 * 2", (20,)), m.Sync())
        client.until_ready()
        count = 12_000  # about 500 KiB of Bind/Execute/Sync in one send
        burst: list[m.FrontendMessage] = []
        for n in range(count):
            burst += [m.Bind("", "one", (), (str(n).encode(),), ()), m.Execute("", 0), m.Sync()]
        client.send(*burst)
        values = []
        for _ in range(count):
            answer = client.until_ready()
            values += [msg.values[0] for msg in answer if isinstance(msg, m.DataRow)]
    finally:
        client.close()
    assert values == [str(n * 2).encode() for n in range(count)]
