"""The server side of one SCRAM-SHA-256 exchange (RFC 5802 / RFC 7677), as PostgreSQL runs it.

PostgreSQL ignores the user name inside the SCRAM messages (libpq sends an
empty ``n=``) and uses the startup packet's; channel binding is not offered,
so the client's GS2 header must be ``n,,`` or ``y,,``.  The verifier (salt,
iteration count, StoredKey, ServerKey) is whatever the role store keeps
(``catalog.roles`` hashes with scramp, SASLprep and PBKDF2 included), seen
here through the ``ScramVerifier`` protocol so that the server never imports
the catalog; this module only checks the client's proof and signs the
server's answer, with constant-time comparisons.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Protocol

MECHANISM = "SCRAM-SHA-256"
NONCE_BYTES = 18
MOCK_SALT_BYTES = 32  # as long as scramp makes them for the role store, so the mock looks real
MOCK_ITERATIONS = 4096


class ScramVerifier(Protocol):
    """What the server keeps of a password: enough to check a proof, not to make one."""

    @property
    def iterations(self) -> int: ...

    @property
    def salt(self) -> bytes: ...

    @property
    def stored_key(self) -> bytes: ...

    @property
    def server_key(self) -> bytes: ...


@dataclass(frozen=True, slots=True)
class MockVerifier:
    """A verifier for a role that has none, so a doomed exchange looks like a real one.

    As PostgreSQL's ``mock_scram_secret``: a salt and the default iteration
    count for the client to see, and keys no proof matches.
    """

    iterations: int
    salt: bytes
    stored_key: bytes = bytes(32)
    server_key: bytes = bytes(32)


def mock_verifier() -> MockVerifier:
    return MockVerifier(MOCK_ITERATIONS, secrets.token_bytes(MOCK_SALT_BYTES))


class ScramError(Exception):
    """The exchange failed: a malformed message or a wrong proof."""


def _attributes(message: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in message.split(","):
        key, equals, value = part.partition("=")
        if not equals or len(key) != 1:
            raise ScramError(f"malformed SCRAM message: {message!r}")
        out.setdefault(key, value)
    return out


class ScramServer:
    """One exchange: ``first`` answers client-first, ``final`` checks client-final."""

    def __init__(self, verifier: ScramVerifier) -> None:
        self._verifier = verifier
        self._gs2_header = ""
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""

    def first(self, client_first: str) -> str:
        """Take client-first-message; return server-first-message."""
        if client_first.startswith(("n,", "y,")):
            second = client_first.find(",", 2)
        elif client_first.startswith("p="):
            raise ScramError("channel binding is not supported")
        else:
            raise ScramError("malformed SCRAM message: bad GS2 header")
        if second < 0:
            raise ScramError("malformed SCRAM message: bad GS2 header")
        self._gs2_header = client_first[: second + 1]
        self._client_first_bare = client_first[second + 1 :]
        attributes = _attributes(self._client_first_bare)
        client_nonce = attributes.get("r", "")
        if not client_nonce or "m" in attributes:
            raise ScramError("malformed SCRAM message: no client nonce")
        server_nonce = base64.b64encode(secrets.token_bytes(NONCE_BYTES)).decode()
        self._nonce = client_nonce + server_nonce
        salt = base64.b64encode(self._verifier.salt).decode()
        self._server_first = f"r={self._nonce},s={salt},i={self._verifier.iterations}"
        return self._server_first

    def final(self, client_final: str) -> str:
        """Check client-final-message's proof; return server-final-message or raise ScramError."""
        head, separator, proof_text = client_final.rpartition(",p=")
        if not separator:
            raise ScramError("malformed SCRAM message: no proof")
        attributes = _attributes(head)
        expected_binding = base64.b64encode(self._gs2_header.encode()).decode()
        if not hmac.compare_digest(attributes.get("c", ""), expected_binding):
            raise ScramError("unexpected SCRAM channel-binding attribute")
        if not hmac.compare_digest(attributes.get("r", ""), self._nonce):
            raise ScramError("SCRAM nonce does not match")
        try:
            proof = base64.b64decode(proof_text, validate=True)
        except ValueError as exc:
            raise ScramError("malformed SCRAM proof") from exc
        auth_message = f"{self._client_first_bare},{self._server_first},{head}".encode()
        signature = hmac.digest(self._verifier.stored_key, auth_message, "sha256")
        if len(proof) != len(signature):
            raise ScramError("malformed SCRAM proof")
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.sha256(client_key).digest(), self._verifier.stored_key):
            raise ScramError("wrong password")
        server_signature = hmac.digest(self._verifier.server_key, auth_message, "sha256")
        return "v=" + base64.b64encode(server_signature).decode()
