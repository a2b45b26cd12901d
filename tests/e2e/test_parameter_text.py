"""A Bind parameter's text with a NUL byte, on nyala as on PostgreSQL 15: 22021 ('invalid
byte sequence for encoding "UTF8": 0x00') for every text-format parameter and for the
binary formats that carry text (text, varchar, json, jsonb, text[] ...), while bytea's
binary format keeps the byte.  libpq ends a text-format value at its first NUL, so the
messages are sent as bytes."""

from __future__ import annotations

import pytest

from server import messages as m
from tests.support.raw_client import RawClient, errors

pytestmark = pytest.mark.e2e

CASES = [
    ("select $1::text", 0, 0, b"a\x00b"),
    ("select $1", 25, 0, b"a\x00b"),
    ("select $1", 25, 1, b"a\x00b"),
    ("select $1", 1043, 1, b"a\x00"),
    ("select $1::int", 0, 0, b"1\x00"),
    ("select $1", 3802, 1, b'\x01"a\x00"'),
    ("select $1", 114, 1, b'"a\x00"'),
    ("select $1", 1009, 0, b"{a\x00}"),
    ("select $1", 17, 1, b"a\x00b"),
    ("select $1", 17, 0, b"a\x00b"),
    ("select $1::text", 0, 0, b"ab"),
]


def _answers(server) -> list[tuple[list[str | None], list[object]]]:
    client = RawClient(server.host, server.port)
    try:
        client.startup()
        found = []
        for sql, oid, code, value in CASES:
            client.send(
                m.Parse("", sql, [oid]),
                m.Bind("", "", [code], [value], [0]),
                m.Execute("", 0),
                m.Sync(),
            )
            replies = client.until_ready()
            rows = [msg.values for msg in replies if isinstance(msg, m.DataRow)]
            found.append((errors(replies), rows))
        found.append((errors(client.query("select 1")), []))  # the connection is still usable
        return found
    finally:
        client.close()


def test_nul_in_a_parameter_is_refused_as_by_postgresql(nyala_server, postgres_server):
    ours, theirs = _answers(nyala_server), _answers(postgres_server)
    assert ours == theirs
    assert [e for e, _ in theirs].count(["22021"]) == 9
