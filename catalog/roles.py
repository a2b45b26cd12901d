"""The durable role store: login roles and their SCRAM-SHA-256 verifiers, never a password.

``roles.json`` in the data directory holds each role's name, its LOGIN and
SUPERUSER attributes and its password as a SCRAM-SHA-256 verifier in
PostgreSQL's ``pg_authid.rolpassword`` form
(``SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>``, base64).  The
file is replaced atomically on every change.  As in PostgreSQL 14 and later
with ``password_encryption = scram-sha-256``, no md5 hash is kept, so md5-only
clients cannot log in with a password.
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

import scramp

from storage.errors import DataCorrupted, FeatureNotSupported
from storage.fs import atomic_write

FILE_NAME = "roles.json"
FORMAT_VERSION = 1
SCRAM_ITERATIONS = 4096
MECHANISM = "SCRAM-SHA-256"


@dataclass(frozen=True, slots=True)
class Verifier:
    """A SCRAM-SHA-256 verifier: what a server needs to check a client's proof."""

    iterations: int
    salt: bytes
    stored_key: bytes
    server_key: bytes

    def text(self) -> str:
        b64 = base64.b64encode
        return (
            f"{MECHANISM}${self.iterations}:{b64(self.salt).decode()}"
            f"${b64(self.stored_key).decode()}:{b64(self.server_key).decode()}"
        )

    @classmethod
    def parse(cls, text: str) -> Verifier | None:
        """Read PostgreSQL's verifier form; None if ``text`` is not one."""
        try:
            mechanism, head, keys = text.split("$")
            iterations, salt = head.split(":")
            stored, server = keys.split(":")
            if mechanism != MECHANISM:
                return None
            return cls(
                int(iterations),
                base64.b64decode(salt, validate=True),
                base64.b64decode(stored, validate=True),
                base64.b64decode(server, validate=True),
            )
        except ValueError:
            return None


def make_verifier(password: str, iterations: int = SCRAM_ITERATIONS) -> Verifier:
    """A new verifier for ``password`` with a random salt (PostgreSQL's SASLprep included)."""
    salt, stored_key, server_key, count = scramp.ScramMechanism(MECHANISM).make_auth_info(
        password, iteration_count=iterations
    )
    return Verifier(count, salt, stored_key, server_key)


def password_verifier(password: str) -> str:
    """The stored form of a password given to CREATE/ALTER ROLE: a verifier as is, else a new one."""
    if Verifier.parse(password) is not None:
        return password
    if len(password) == 35 and password.startswith("md5"):
        raise FeatureNotSupported(
            "md5 password hashes are not stored; give the password in clear text or as a"
            " SCRAM-SHA-256 verifier"
        )
    return make_verifier(password).text()


@dataclass(frozen=True, slots=True)
class Role:
    name: str
    login: bool = True
    superuser: bool = False
    password: str | None = None

    @property
    def verifier(self) -> Verifier | None:
        return Verifier.parse(self.password) if self.password else None


class RoleStore:
    """The roles of one data directory; thread-safe, every change written before it returns."""

    def __init__(self, data_dir: Path, *, fsync: bool = True) -> None:
        self._path = Path(data_dir) / FILE_NAME
        self._fsync = fsync
        self._lock = threading.Lock()
        self._roles: dict[str, Role] = {}
        self.is_new = not self._path.exists()
        if not self.is_new:
            self._load()

    def _load(self) -> None:
        try:
            doc = json.loads(self._path.read_bytes())
        except ValueError as exc:
            raise DataCorrupted(f'role file "{self._path}" is not valid JSON') from exc
        if doc.get("version") != FORMAT_VERSION:
            raise DataCorrupted(f"role file format version {doc.get('version')} is not supported")
        self._roles = {r["name"]: Role(**r) for r in doc["roles"]}

    def _save(self) -> None:
        doc = {
            "version": FORMAT_VERSION,
            "roles": [asdict(r) for r in sorted(self._roles.values(), key=lambda r: r.name)],
        }
        atomic_write(self._path, json.dumps(doc, indent=1).encode(), fsync=self._fsync)
        self.is_new = False

    def get(self, name: str) -> Role | None:
        with self._lock:
            return self._roles.get(name)

    def all(self) -> list[Role]:
        with self._lock:
            return sorted(self._roles.values(), key=lambda r: r.name)

    def put(self, role: Role) -> None:
        """Create or replace a role (the caller has checked what PostgreSQL checks)."""
        with self._lock:
            self._roles[role.name] = role
            self._save()

    def drop(self, name: str) -> bool:
        with self._lock:
            if self._roles.pop(name, None) is None:
                return False
            self._save()
            return True

    def bootstrap(self, superuser: str, password: str | None) -> bool:
        """On the first start, create the superuser (with ``password`` if given); True if created."""
        with self._lock:
            if not self.is_new:
                return False
            verifier = password_verifier(password) if password else None
            self._roles[superuser] = Role(superuser, login=True, superuser=True, password=verifier)
            self._save()
            return True
