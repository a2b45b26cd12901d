"""The server's connection registry: CancelRequest matching and process ids."""

from __future__ import annotations

from server.config import Config
from server.server import Server
from tests.unit.server.fake_sql import FakeDatabase


class RecordingConnection:
    def __init__(self, secret_key: int) -> None:
        self.secret_key = secret_key
        self.cancelled = 0

    def cancel_statement(self) -> None:
        self.cancelled += 1


def make_server() -> Server:
    return Server(FakeDatabase(), Config())  # type: ignore[arg-type]


def test_cancel_request_with_the_right_secret_cancels_that_connection():
    server = make_server()
    target, other = RecordingConnection(-12345), RecordingConnection(7)
    server._connections.update({10: target, 11: other})  # type: ignore[dict-item]
    server.cancel(10, -12345)
    assert (target.cancelled, other.cancelled) == (1, 0)


def test_cancel_request_with_a_wrong_secret_or_pid_is_ignored():
    server = make_server()
    target = RecordingConnection(99)
    server._connections[10] = target  # type: ignore[assignment]
    server.cancel(10, 98)
    server.cancel(12, 99)
    assert target.cancelled == 0


def test_process_ids_skip_live_connections_and_stay_positive_int32():
    server = make_server()
    server._next_process_id = 2**31 - 2
    server._connections[2**31 - 1] = RecordingConnection(0)  # type: ignore[assignment]
    assert server._allocate_process_id() == 1
    assert server._allocate_process_id() == 2
