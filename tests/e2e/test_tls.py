"""TLS: --tls-cert/--tls-key answer SSLRequest with 'S'; --tls-required refuses clear text.

Each test makes its own certificate authority with trustme and a server
certificate for localhost and 127.0.0.1, then connects with psycopg and psql
using sslmode=require and verify-full.
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import threading

import psycopg
import pytest
import trustme

pytestmark = pytest.mark.e2e


@pytest.fixture
def pki(tmp_path):
    ca = trustme.CA()
    cert = ca.issue_cert("localhost", "127.0.0.1")
    paths = {
        "ca": tmp_path / "ca.pem",
        "cert": tmp_path / "server.pem",
        "key": tmp_path / "server.key",
    }
    ca.cert_pem.write_to_path(str(paths["ca"]))
    cert.private_key_pem.write_to_path(str(paths["key"]))
    for blob in cert.cert_chain_pems:
        blob.write_to_path(str(paths["cert"]), append=True)
    os.chmod(paths["key"], 0o600)
    return paths


def _tls_server(factory, pki, *extra):
    return factory(
        extra_args=["--tls-cert", str(pki["cert"]), "--tls-key", str(pki["key"]), *extra]
    )


def _ssl_in_use(conn: psycopg.Connection) -> bool:
    return conn.pgconn.ssl_in_use


def test_sslmode_require_and_verify_full_through_psycopg(nyala_server_factory, pki):
    server = _tls_server(nyala_server_factory, pki)
    with psycopg.connect(server.dsn + " sslmode=require") as conn:
        assert _ssl_in_use(conn)
        assert conn.execute("select 1 + 1").fetchone() == (2,)
    verify = f"host=localhost port={server.port} user=nyala dbname=nyala"
    with psycopg.connect(f"{verify} sslmode=verify-full sslrootcert={pki['ca']}") as conn:
        assert _ssl_in_use(conn)
        conn.execute("create table tls_t (id int primary key, v text)")
        # Several TLS records each way (a cell may hold up to 64 KiB).
        conn.execute("insert into tls_t values (1, %s)", ("x" * 60_000,))
        assert conn.execute("select length(v) from tls_t").fetchone() == (60_000,)
    with psycopg.connect(server.dsn + " sslmode=disable") as conn:
        assert not _ssl_in_use(conn)


def test_verify_full_fails_against_another_ca(nyala_server_factory, pki, tmp_path):
    server = _tls_server(nyala_server_factory, pki)
    other = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(other))
    dsn = f"host=localhost port={server.port} user=nyala dbname=nyala"
    with pytest.raises(psycopg.OperationalError, match="certificate verify failed"):
        psycopg.connect(f"{dsn} sslmode=verify-full sslrootcert={other}")
    with psycopg.connect(server.dsn) as conn:  # the server carries on
        assert conn.execute("select 1").fetchone() == (1,)


def test_tls_required_refuses_clear_text(nyala_server_factory, pki):
    server = _tls_server(nyala_server_factory, pki, "--tls-required")
    with pytest.raises(psycopg.OperationalError) as info:
        psycopg.connect(server.dsn + " sslmode=disable")
    assert "no encryption" in str(info.value)
    with psycopg.connect(server.dsn + " sslmode=require") as conn:
        assert conn.execute("select 2").fetchone() == (2,)


def test_without_a_certificate_the_server_answers_n(nyala_server):
    with socket.create_connection((nyala_server.host, nyala_server.port), timeout=10) as sock:
        sock.sendall(struct.pack("!ii", 8, 80877103))
        assert sock.recv(1) == b"N"
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(nyala_server.dsn + " sslmode=require")


def test_plain_bytes_after_ssl_request_are_refused(nyala_server_factory, pki):
    server = _tls_server(nyala_server_factory, pki)
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        # SSLRequest and, in the same packet, a clear-text StartupMessage.
        startup = struct.pack("!i", 196608) + b"user\0nyala\0\0"
        sock.sendall(
            struct.pack("!ii", 8, 80877103) + struct.pack("!i", 4 + len(startup)) + startup
        )
        data = sock.recv(4096)
    assert data[:1] == b"E" and b"C08P01" in data


def test_psql_with_verify_full(nyala_server_factory, pki, psql):
    server = _tls_server(nyala_server_factory, pki, "--tls-required")
    dsn = (
        f"host=localhost port={server.port} user=nyala dbname=nyala"
        f" sslmode=verify-full sslrootcert={pki['ca']}"
    )
    run = subprocess.run(
        [psql, dsn, "-X", "-At", "-c", "select 40 + 2", "-c", "\\conninfo"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "42"
    assert "SSL connection" in run.stdout


def test_cancel_request_reaches_a_tls_connection(nyala_server_factory, pki):
    """libpq sends CancelRequest in the clear on a new socket; --tls-required lets it through."""
    server = _tls_server(nyala_server_factory, pki, "--tls-required")
    with psycopg.connect(server.dsn + " sslmode=require", autocommit=True) as conn:
        timer = threading.Timer(0.5, conn.cancel)
        timer.start()
        try:
            with pytest.raises(psycopg.errors.QueryCanceled):
                conn.execute("select pg_sleep(30)")
        finally:
            timer.cancel()
        assert conn.execute("select 1").fetchone() == (1,)
