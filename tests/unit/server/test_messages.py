from __future__ import annotations

import dataclasses

import pytest

from server import messages as m


def test_error_response_fields_are_looked_up_by_code():
    response = m.ErrorResponse((("S", "ERROR"), ("C", "42P01"), ("M", "x")))
    assert response.get("C") == "42P01"
    assert response.get("P") is None


def test_messages_are_immutable_values():
    ready = m.ReadyForQuery("I")
    assert ready == m.ReadyForQuery("I")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ready.status = "T"  # type: ignore[misc]


def test_backend_messages_carry_their_type_byte():
    assert m.ReadyForQuery.TYPE == b"Z"
    assert m.AuthenticationOk.TYPE == b"R"
    assert m.ErrorResponse.TYPE == b"E"
