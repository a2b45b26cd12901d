from __future__ import annotations

import asyncio

from server.auth import TrustAuthenticator
from server.messages import AuthenticationOk


class ExchangeDouble:
    def __init__(self) -> None:
        self.sent: list[object] = []

    def send(self, message) -> None:
        self.sent.append(message)

    async def flush(self) -> None:
        return None

    async def receive(self):
        raise AssertionError("trust authentication reads nothing from the client")


def test_trust_answers_authentication_ok_without_reading():
    exchange = ExchangeDouble()
    asyncio.run(TrustAuthenticator().authenticate(exchange, "nyala", "nyala"))
    assert exchange.sent == [AuthenticationOk()]
