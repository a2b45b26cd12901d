"""A full disk: commits fail with 53100, reads go on, nothing acknowledged is lost, writes resume.

The server's data directory is on a small tmpfs mounted for the test (so it
needs the right to mount, as root in CI has; elsewhere it is skipped).  The
disk is filled up with a filler file, a commit is refused with 53100, the
committed rows are still read, and once the filler is gone commits succeed
again and everything survives a restart and ``nyala check``.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from tests.support.servers import NyalaServer

DISK_MB = 48
BIG_ROWS = "INSERT INTO t SELECT g, repeat('x', 60000) FROM generate_series(%s, %s) g"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def _fill(path: Path) -> None:
    """Write zeros to ``path`` until the filesystem is full."""
    chunk = b"\0" * (1 << 16)
    with open(path, "wb", buffering=0) as filler:
        try:
            while True:
                filler.write(chunk)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
        try:
            while True:
                filler.write(b"\0" * 512)
        except OSError:
            pass


@pytest.mark.slow
def test_a_full_disk_refuses_commits_with_53100_and_writes_resume(
    small_disk: Path, nyala_server_factory: Callable[..., NyalaServer]
) -> None:
    server = nyala_server_factory(small_disk / "data")
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (k int PRIMARY KEY, v text)")
        conn.execute(BIG_ROWS, (1, 10))
        filler = small_disk / "filler"
        _fill(filler)
        with pytest.raises(psycopg.errors.DiskFull):
            conn.execute(BIG_ROWS, (11, 60))
        assert conn.execute("SELECT count(*), min(k), max(k) FROM t").fetchone() == (10, 1, 10)
        with psycopg.connect(server.dsn, autocommit=True) as other:
            assert other.execute("SELECT count(*) FROM t").fetchone() == (10,)
        os.unlink(filler)
        conn.execute(BIG_ROWS, (11, 60))
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (60,)
    server.stop()
    checked = subprocess.run(
        [sys.executable, "-m", "server", "check", "--data-dir", str(server.data_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute("SELECT count(*), sum(length(v)) FROM t").fetchone() == (60, 60 * 60000)


DDL = [
    "CREATE TABLE u (k int PRIMARY KEY)",
    "ALTER TABLE t ADD COLUMN w text",
    "CREATE ROLE newcomer",
    "GRANT SELECT ON t TO reader",
    "COMMENT ON TABLE t IS 'about t'",
    "DROP TABLE t",
]


def _catalog_seen(conn: psycopg.Connection) -> list[object]:
    return [
        conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
            "ORDER BY 1"
        ).fetchall(),
        conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = 't'::regclass AND attnum > 0 "
            "ORDER BY attnum"
        ).fetchall(),
        conn.execute(
            "SELECT rolname FROM pg_roles WHERE rolname NOT LIKE 'pg%' ORDER BY 1"
        ).fetchall(),
        conn.execute("SELECT relacl::text[] FROM pg_class WHERE relname = 't'").fetchall(),
        conn.execute("SELECT obj_description('t'::regclass, 'pg_class')").fetchall(),
    ]


@pytest.mark.slow
def test_ddl_on_a_full_disk_is_53100_and_the_catalog_stays_as_it_was(
    small_disk: Path, nyala_server_factory: Callable[..., NyalaServer]
) -> None:
    server = nyala_server_factory(small_disk / "data")
    files = server.data_dir
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (k int PRIMARY KEY, v text)")
        conn.execute("CREATE ROLE reader")
        conn.execute("INSERT INTO t VALUES (0, 'zero')")
        before = _catalog_seen(conn)
        documents = {p.name: p.read_bytes() for p in files.iterdir() if p.suffix == ".json"}
        filler = small_disk / "filler"
        _fill(filler)
        rows = 1
        while True:  # use up the WAL segment's last page, so no DDL record fits in it
            try:
                conn.execute("INSERT INTO t VALUES (%s, 'x')", (rows,))
            except psycopg.errors.DiskFull:
                break
            rows += 1
        for sql in DDL:
            with pytest.raises(psycopg.errors.DiskFull):
                conn.execute(sql)
            assert _catalog_seen(conn) == before, sql
        assert {p.name: p.read_bytes() for p in files.iterdir() if p.suffix == ".json"} == (
            documents
        )
        assert not [p for p in files.rglob("*.tmp")]
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (rows,)
        os.unlink(filler)
        for sql in DDL[:-1]:
            conn.execute(sql)
        after = _catalog_seen(conn)
        assert after[0] == [("t",), ("u",)] and after[1] == [("k",), ("v",), ("w",)]
        assert after[2] == [("newcomer",), ("nyala",), ("reader",)]
    server.stop()
    checked = subprocess.run(
        [sys.executable, "-m", "server", "check", "--data-dir", str(server.data_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout
    server.start()
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert _catalog_seen(conn) == after
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (rows,)
