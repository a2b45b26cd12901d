"""A raw protocol client for tests: exact frontend messages out, backend messages back.

Built on ``server.codec``, so a test sees what a driver would hide (message sequences,
pipelines, skip-to-Sync, suspension); ``connector`` makes started clients on one server
and remembers them for closing.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from server import codec
from server import messages as m

TIMEOUT_S = 15.0


class RawClient:
    """One TCP connection speaking the frontend side of the protocol."""

    def __init__(self, host: str, port: int) -> None:
        self.sock = socket.create_connection((host, port), timeout=TIMEOUT_S)
        self.decoder = codec.BackendDecoder()
        self.pending: list[m.BackendMessage] = []
        self.key: m.BackendKeyData | None = None

    def close(self) -> None:
        self.sock.close()

    def send(self, *messages: m.FrontendMessage) -> None:
        self.sock.sendall(b"".join(codec.encode_frontend(msg) for msg in messages))

    def read_byte(self) -> bytes:
        return self.sock.recv(1)

    def receive(self) -> m.BackendMessage | None:
        """The next backend message, or None when the server closed the connection."""
        while not self.pending:
            data = self.sock.recv(65536)
            if not data:
                return None
            self.decoder.feed(data)
            self.pending.extend(self.decoder)
        return self.pending.pop(0)

    def until_ready(self) -> list[m.BackendMessage]:
        """Messages up to and including the next ReadyForQuery."""
        messages: list[m.BackendMessage] = []
        while True:
            message = self.receive()
            assert message is not None, f"connection closed after {messages}"
            messages.append(message)
            if isinstance(message, m.ReadyForQuery):
                return messages

    def startup(self, user: str = "nyala", database: str = "nyala") -> list[m.BackendMessage]:
        self.send(m.StartupMessage(parameters={"user": user, "database": database}))
        messages = self.until_ready()
        self.key = next(msg for msg in messages if isinstance(msg, m.BackendKeyData))
        return messages

    def query(self, sql: str) -> list[m.BackendMessage]:
        self.send(m.Query(sql))
        return self.until_ready()


def kinds(messages: list[m.BackendMessage]) -> str:
    return " ".join(type(msg).TYPE.decode() for msg in messages)


def errors(messages: list[m.BackendMessage]) -> list[str | None]:
    return [msg.get("C") for msg in messages if isinstance(msg, m.ErrorResponse)]


def connector(server: Any) -> tuple[Callable[..., RawClient], list[RawClient]]:
    """A factory of clients of ``server`` (started unless ``startup=False``), and the list of
    those made, for the caller to close."""
    clients: list[RawClient] = []

    def make(startup: bool = True) -> RawClient:
        client = RawClient(server.host, server.port)
        clients.append(client)
        if startup:
            client.startup()
        return client

    return make, clients
