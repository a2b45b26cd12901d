"""Corruption is detected, never served: a flipped byte in a tablet file is XX001, not wrong rows.

Each case damages one kind of file of table ``a`` while the server is down
(a column's data, the key index, a REDO delta file), starts it again and
reads ``a`` by a full scan and by key.  Every read either returns exactly
the rows that were committed or fails with XX001 naming the damaged file
(the path holds the tablet); at least one read sees the damage; the session
stays usable and table ``b`` keeps being served.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from tests.support.servers import NyalaServer

ROWS = 3000


def _expected_value(k: int) -> str:
    return "updated" if k % 7 == 0 else f"value-{k}"


@pytest.fixture
def loaded(nyala_server_factory: Callable[..., NyalaServer]) -> NyalaServer:
    server = nyala_server_factory()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE a (k int PRIMARY KEY, v text)")
        conn.execute("CREATE TABLE b (k int PRIMARY KEY, v text)")
        conn.execute(f"INSERT INTO a SELECT g, 'value-' || g FROM generate_series(1, {ROWS}) g")
        conn.execute("INSERT INTO b VALUES (1, 'safe'), (2, 'sound')")
        conn.execute("CHECKPOINT")
        conn.execute("UPDATE a SET v = 'updated' WHERE k % 7 = 0")
        conn.execute("CHECKPOINT")
    server.stop()
    return server


def _table_files(server: NyalaServer, conn_dsn: str | None = None) -> dict[str, Path]:
    """The files of table a's one tablet (the tablet with the most rows), by name."""
    tablets = sorted((server.data_dir / "tablets").iterdir(), key=lambda p: int(p.name))
    rowset = sorted(tablets[0].glob("rowset-*"))[0]
    return {p.name: p for p in rowset.iterdir()}


def _flip_middle_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x5A
    path.write_bytes(bytes(data))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["col-1.cfile", "key.cfile", "redo"])
def test_a_flipped_byte_is_reported_as_xx001_and_nothing_wrong_is_served(
    loaded: NyalaServer, kind: str
) -> None:
    files = _table_files(loaded)
    name = next(n for n in files if n.startswith(kind))
    _flip_middle_byte(files[name])
    loaded.start()
    seen_damage = 0
    with psycopg.connect(loaded.dsn, autocommit=True) as conn:
        probes: list[tuple[str, tuple[int, ...], list[tuple[object, ...]]]] = [
            (
                "SELECT k, v FROM a ORDER BY k",
                (),
                [(k, _expected_value(k)) for k in range(1, ROWS + 1)],
            )
        ]
        probes += [
            ("SELECT v FROM a WHERE k = %s", (k,), [(_expected_value(k),)])
            for k in range(1, ROWS + 1, 37)
        ]
        for sql, params, expected in probes:
            try:
                rows = conn.execute(sql, params).fetchall()
            except psycopg.errors.DataCorrupted as exc:
                seen_damage += 1
                assert name in str(exc) and "tablets" in str(exc), str(exc)
                continue
            assert rows == expected, sql
        assert seen_damage, f"no read noticed the damaged {name}"
        assert conn.execute("SELECT v FROM b ORDER BY k").fetchall() == [("safe",), ("sound",)]
        conn.execute("INSERT INTO b VALUES (3, 'still writable')")
        assert conn.execute("SELECT count(*) FROM b").fetchone() == (3,)
