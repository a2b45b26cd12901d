"""Corruption is detected, never served: a flipped byte in a tablet file is XX001, not wrong rows.

Each case damages one kind of file of table ``a`` while the server is down
(a column's data, the key index, a REDO delta file), starts it again and
reads ``a`` by a full scan and by key.  Every read either returns exactly
the rows that were committed or fails with XX001 naming the damaged file
(the path holds the tablet); at least one read sees the damage; the session
stays usable and table ``b`` keeps being served.  ``nyala check`` passes the
intact directory and names the damaged file in the damaged one.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from tests.support.servers import NyalaServer

ROWS = 3000


def _expected_value(k: int) -> str:
    return "updated" if k % 7 == 0 else f"value-{k}"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stopped server's data directory with tables a, b and c, built once per module."""
    server = NyalaServer(tmp_path_factory.mktemp("pristine") / "data").start()
    try:
        _load(server)
    finally:
        server.stop()
    clean = _nyala_check(server.data_dir)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    return server.data_dir


@pytest.fixture
def loaded(
    pristine: Path, tmp_path: Path, nyala_server_factory: Callable[..., NyalaServer]
) -> NyalaServer:
    """A not yet started server on a copy of the pristine directory, this test's to damage."""
    shutil.copytree(pristine, tmp_path / "data")
    server: NyalaServer = nyala_server_factory(tmp_path / "data", start=False)
    return server


def _load(server: NyalaServer) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE a (k int PRIMARY KEY, v text)")
        conn.execute("CREATE TABLE b (k int PRIMARY KEY, v text)")
        conn.execute(f"INSERT INTO a SELECT g, 'value-' || g FROM generate_series(1, {ROWS}) g")
        conn.execute("INSERT INTO b VALUES (1, 'safe'), (2, 'sound')")
        conn.execute("CHECKPOINT")
        conn.execute("UPDATE a SET v = 'updated' WHERE k % 7 = 0")
        conn.execute("CHECKPOINT")
        conn.execute("CREATE TABLE d (k serial PRIMARY KEY, v text)")  # the catalog documents
        conn.execute("INSERT INTO d (v) VALUES ('first'), ('second')")
        conn.execute("COMMENT ON TABLE d IS 'a commented table'")
        conn.execute("CREATE ROLE reader LOGIN")
        conn.execute("GRANT SELECT ON d TO reader")
        conn.execute("ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO reader")
        conn.execute("CREATE TABLE c (k int PRIMARY KEY, v text)")  # WAL records to damage
        for k in range(3):
            conn.execute("INSERT INTO c VALUES (%s, repeat('w', 200))", (k,))


def _nyala_check(data_dir: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "server", "check", "--data-dir", str(data_dir)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def _table_files(server: NyalaServer) -> dict[str, Path]:
    """The files of table a's tablet (the first one made), by name."""
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
    checked = _nyala_check(loaded.data_dir)
    assert checked.returncode == 1, checked.stdout
    assert f"CORRUPT tablet 1: {files[name]}" in checked.stdout, checked.stdout
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


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bloom.bin", "undo", "metadata.json", "wal"])
def test_nyala_check_names_every_other_damaged_file_kind(loaded: NyalaServer, kind: str) -> None:
    if kind == "metadata.json":
        target = loaded.data_dir / "tablets" / "1" / "metadata.json"
        target.write_bytes(target.read_bytes()[:-7])
    elif kind == "wal":
        target = max((loaded.data_dir / "wal").iterdir(), key=lambda p: p.stat().st_size)
        data = bytearray(target.read_bytes())
        data[len(data) // 2] ^= 0x5A  # inside a record that intact records follow
        target.write_bytes(bytes(data))
    else:
        files = _table_files(loaded)
        target = files[next(n for n in files if n.startswith(kind))]
        _flip_middle_byte(target)
    checked = _nyala_check(loaded.data_dir)
    assert checked.returncode == 1, checked.stdout
    assert str(target) in checked.stdout, checked.stdout


def _rewrite_json_number(path: Path, key: str) -> None:
    """Change the number after ``"key":`` by one digit: still valid JSON, now wrong."""
    text = path.read_text()
    match = re.search(rf'"{key}": (\d+)', text)
    assert match is not None, text[:500]
    digits = match.group(1)
    changed = digits[:-1] + str((int(digits[-1]) + 1) % 10)
    path.write_text(text[: match.start(1)] + changed + text[match.end(1) :])


@pytest.mark.slow
def test_a_tablet_damaged_at_start_up_is_offline_and_the_rest_is_served(
    loaded: NyalaServer,
) -> None:
    metadata = loaded.data_dir / "tablets" / "1" / "metadata.json"
    _rewrite_json_number(metadata, "next_rowset_id")
    checked = _nyala_check(loaded.data_dir)
    assert checked.returncode == 1, checked.stdout
    assert str(metadata) in checked.stdout, checked.stdout
    loaded.start()  # the server starts: only table a's tablet is offline
    with psycopg.connect(loaded.dsn, autocommit=True) as conn:
        for sql in ("SELECT count(*) FROM a", "SELECT v FROM a WHERE k = 1"):
            with pytest.raises(psycopg.errors.DataCorrupted) as info:
                conn.execute(sql)
            assert "tablet 1" in str(info.value) and str(metadata) in str(info.value)
        with pytest.raises(psycopg.errors.DataCorrupted):
            conn.execute("INSERT INTO a VALUES (-1, 'lost?')")
        assert conn.execute("SELECT v FROM b ORDER BY k").fetchall() == [("safe",), ("sound",)]
        conn.execute("INSERT INTO b VALUES (3, 'still writable')")
        assert conn.execute("SELECT count(*) FROM c").fetchone() == (3,)
        conn.execute("CHECKPOINT")
    # The WAL keeps what the offline tablet has not flushed; nothing else changed.
    loaded.restart()
    with psycopg.connect(loaded.dsn, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM b").fetchone() == (3,)
        with pytest.raises(psycopg.errors.DataCorrupted):
            conn.execute("SELECT count(*) FROM a")
        conn.execute("DROP TABLE a")  # an offline tablet can be dropped
        assert conn.execute("SELECT count(*) FROM b").fetchone() == (3,)
    assert not (loaded.data_dir / "tablets" / "1").exists()


def test_catalog_json_carries_a_checksum(loaded: NyalaServer) -> None:
    catalog = loaded.data_dir / "catalog.json"
    assert '"crc32c"' in catalog.read_text()
    _rewrite_json_number(catalog, "next_table_id")
    checked = _nyala_check(loaded.data_dir)
    assert checked.returncode == 1, checked.stdout
    assert str(catalog) in checked.stdout and "checksum" in checked.stdout, checked.stdout


DOCUMENTS = ["catalog.json", "roles.json", "privileges.json", "sequences.json", "comments.json"]


def _documents_read_back(server: NyalaServer) -> list[tuple[object, ...]]:
    """What each catalog document holds, as a client sees it."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        return [
            conn.execute("SELECT k, v FROM d ORDER BY k").fetchall(),
            conn.execute("SELECT obj_description('d'::regclass, 'pg_class')").fetchall(),
            conn.execute("SELECT rolname FROM pg_roles WHERE rolname = 'reader'").fetchall(),
            conn.execute("SELECT relacl::text[] FROM pg_class WHERE relname = 'd'").fetchall(),
            conn.execute("SELECT defaclacl::text[] FROM pg_default_acl").fetchall(),
            conn.execute("SELECT count(*) FROM b").fetchall(),
        ]


@pytest.mark.slow
@pytest.mark.parametrize("name", DOCUMENTS)
def test_a_damaged_catalog_document_is_named_and_nothing_wrong_is_served(
    loaded: NyalaServer, name: str
) -> None:
    """The server refuses to start (every session needs roles, privileges and the catalog)
    with XX001 naming the file in its log; ``nyala check`` names it; putting the intact
    file back (the README's recovery) brings back exactly what was committed."""
    path = loaded.data_dir / name
    intact = path.read_bytes()
    assert b'"crc32c"' in intact
    _flip_middle_byte(path)
    checked = _nyala_check(loaded.data_dir)
    assert checked.returncode == 1, checked.stdout
    assert f"CORRUPT {path}: " in checked.stdout, checked.stdout
    with pytest.raises(RuntimeError, match="exited with code 1"):
        loaded.start()
    assert "SQLSTATE XX001" in loaded.log and str(path) in loaded.log, loaded.log_tail()
    assert path.read_bytes() != intact  # nothing rewrote the damaged file
    path.write_bytes(intact)
    assert _nyala_check(loaded.data_dir).returncode == 0
    loaded.start()
    seen = _documents_read_back(loaded)
    assert seen[0] == [(1, "first"), (2, "second")]
    assert seen[1] == [("a commented table",)]
    assert seen[2] == [("reader",)]
    assert any("reader=r/" in item for item in seen[3][0][0])
    assert seen[4] and any("reader=r/" in item for item in seen[4][0][0])
    assert seen[5] == [(2,)]
