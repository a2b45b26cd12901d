"""Passwords: --auth password with SCRAM-SHA-256 against roles from CREATE/ALTER/DROP ROLE.

The first superuser comes from --superuser and NYALA_PASSWORD on the first
start.  Role statements are compared with PostgreSQL 15 (tags, SQLSTATEs,
messages); logins go through psycopg and psql.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import time

import psycopg
import pytest
from psycopg import errors

from tests.support.servers import NyalaServer, make_dsn

pytestmark = pytest.mark.e2e

PASSWORD = "s3cret pass"


class PasswordServer(NyalaServer):
    """A nyala server started with --auth password and NYALA_PASSWORD in its environment."""

    def __init__(self, data_dir, password: str | None = PASSWORD, **options) -> None:
        options.setdefault("extra_args", ["--auth", "password"])
        super().__init__(data_dir, **options)
        self.password = password

    def environment(self) -> dict[str, str]:
        env = super().environment()
        if self.password is not None:
            env["NYALA_PASSWORD"] = self.password
        return env


@pytest.fixture
def server(tmp_path):
    with PasswordServer(tmp_path / "data") as running:
        yield running


def dsn_for(server, user: str, password: str | None) -> str:
    dsn = make_dsn(server.host, server.port, user, "nyala")
    return dsn if password is None else f"{dsn} password='{password}'"


def login_error(dsn: str) -> psycopg.OperationalError:
    with pytest.raises(psycopg.OperationalError) as info:
        psycopg.connect(dsn).close()
    return info.value


def test_superuser_from_nyala_password_logs_in_with_scram(server):
    with psycopg.connect(dsn_for(server, "nyala", PASSWORD)) as conn:
        assert conn.execute("select 1").fetchone() == (1,)
        assert conn.pgconn.used_password
    error = login_error(dsn_for(server, "nyala", "wrong"))
    assert 'password authentication failed for user "nyala"' in str(error)


def test_unknown_user_and_wrong_password_fail_alike_with_a_log_line(server):
    wrong = login_error(dsn_for(server, "nyala", "wrong"))
    unknown = login_error(dsn_for(server, "nobody", "wrong"))
    assert str(wrong).replace('"nyala"', "U") == str(unknown).replace('"nobody"', "U")
    # The server logs after it has answered, and its log reaches us through a pipe.
    deadline = time.monotonic() + 10
    while 'Role "nobody" does not exist' not in server.log and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 'password authentication failed for user "nobody"' in server.log
    assert 'Role "nobody" does not exist' in server.log


def test_login_failure_sqlstate_is_28p01(server):
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(dsn_for(server, "nyala", None) + " password=bad")
    # libpq hides the SQLSTATE of a failed connection; read it from the raw protocol.
    with socket.create_connection((server.host, server.port), timeout=10) as sock:
        body = struct.pack("!i", 196608) + b"user\0nobody\0database\0nyala\0\0"
        sock.sendall(struct.pack("!i", 4 + len(body)) + body)
        assert sock.recv(1) == b"R"
        _length, kind = struct.unpack("!ii", sock.recv(8))
        assert kind == 10  # AuthenticationSASL
        sock.recv(4096)
        first = b"n,,n=,r=abcdefghijklmnop"
        payload = b"SCRAM-SHA-256\0" + struct.pack("!i", len(first)) + first
        sock.sendall(b"p" + struct.pack("!i", 4 + len(payload)) + payload)
        data = sock.recv(4096)
        assert data[:1] == b"R"  # AuthenticationSASLContinue, as for a real role
        server_first = data[9:].decode()
        nonce = dict(p.split("=", 1) for p in server_first.split(","))["r"]
        final = f"c=biws,r={nonce},p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=".encode()
        sock.sendall(b"p" + struct.pack("!i", 4 + len(final)) + final)
        reply = b""
        while chunk := sock.recv(4096):
            reply += chunk
    assert reply[:1] == b"E" and b"C28P01" in reply and b"SFATAL" in reply


def _role_script(conn) -> list[tuple[str, str | None]]:
    """Role statements and what each answered: its tag, or SQLSTATE and message."""
    statements = [
        "drop role if exists app_alice",
        "create user app_alice with login password 'alice-pw'",
        "create user app_alice",
        "create role app_reader nologin",
        "alter role app_alice with password 'alice-new'",
        "alter role app_nobody password 'x'",
        "alter user app_alice nosuperuser connection limit 5",
        "drop role app_nobody",
        "drop role if exists app_reader, app_nobody",
    ]
    out = []
    for statement in statements:
        try:
            cur = conn.execute(statement)
            out.append((cur.statusmessage, None))
        except psycopg.Error as exc:
            out.append((exc.sqlstate, exc.diag.message_primary))
    conn.execute("drop role if exists app_alice")
    return out


def test_role_statements_answer_as_postgresql(server, postgres_server):
    with psycopg.connect(dsn_for(server, "nyala", PASSWORD), autocommit=True) as conn:
        ours = _role_script(conn)
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        theirs = _role_script(conn)
    assert ours == theirs
    assert ours[1] == ("CREATE ROLE", None) and ours[2][0] == "42710"


def test_create_alter_drop_role_change_who_can_log_in(server, psql):
    with psycopg.connect(dsn_for(server, "nyala", PASSWORD), autocommit=True) as admin:
        admin.execute("create user alice with login password 'alice-pw'")
        admin.execute("create role bob with password 'bob-pw'")  # NOLOGIN by default
    with psycopg.connect(dsn_for(server, "alice", "alice-pw")) as conn:
        assert conn.execute("select current_user").fetchone() == ("alice",)
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("create role mallory")
    with psycopg.connect(dsn_for(server, "alice", "alice-pw"), autocommit=True) as conn:
        conn.execute("alter role alice password 'alice-2'")  # one's own password
    assert "password authentication failed" in str(
        login_error(dsn_for(server, "alice", "alice-pw"))
    )
    assert "not permitted to log in" in str(login_error(dsn_for(server, "bob", "bob-pw")))
    env = {**os.environ, "PGPASSWORD": "alice-2"}
    run = subprocess.run(
        [psql, dsn_for(server, "alice", None), "-X", "-At", "-c", "select 6 * 7"],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "42"
    with psycopg.connect(dsn_for(server, "nyala", PASSWORD), autocommit=True) as admin:
        admin.execute("drop role alice")
        with pytest.raises(errors.ObjectInUse):
            admin.execute("drop role nyala")
    assert "password authentication failed" in str(login_error(dsn_for(server, "alice", "alice-2")))


def test_only_scram_verifiers_are_stored_and_they_survive_a_restart(server):
    with psycopg.connect(dsn_for(server, "nyala", PASSWORD), autocommit=True) as admin:
        admin.execute("create user carol with password 'carol-pw'")
    stored = (server.data_dir / "roles.json").read_text()
    assert "carol-pw" not in stored and PASSWORD not in stored
    verifiers = [r["password"] for r in json.loads(stored)["roles"]]
    assert all(v.startswith("SCRAM-SHA-256$4096:") for v in verifiers)
    server.restart()
    with psycopg.connect(dsn_for(server, "carol", "carol-pw")) as conn:
        assert conn.execute("select 1").fetchone() == (1,)


def test_trust_mode_needs_no_password(nyala_server):
    with psycopg.connect(nyala_server.dsn) as conn:
        assert conn.execute("select 1").fetchone() == (1,)
        assert not conn.pgconn.used_password


def test_is_superuser_is_reported_per_role(server):
    with psycopg.connect(dsn_for(server, "nyala", PASSWORD), autocommit=True) as admin:
        assert admin.info.parameter_status("is_superuser") == "on"
        admin.execute("create user dave with password 'dave-pw'")
    with psycopg.connect(dsn_for(server, "dave", "dave-pw")) as conn:
        assert conn.info.parameter_status("is_superuser") == "off"
        assert conn.execute("show is_superuser").fetchone() == ("off",)
