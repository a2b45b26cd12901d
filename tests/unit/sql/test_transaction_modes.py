from __future__ import annotations

from types import SimpleNamespace

from sql.frontend.statements import Utility
from sql.session.settings import SessionSettings
from sql.session.transaction_modes import TransactionModes


def test_session_characteristics_become_the_defaults_of_later_blocks():
    settings = SessionSettings("u", {})
    modes = TransactionModes(settings)
    chars = Utility(
        "SET", name="characteristics", modes=("isolation level serializable", "read only")
    )
    assert modes.set(chars, False, None).command_tag == "SET"
    assert modes.show("transaction_isolation", False, None) == "serializable"
    assert modes.show("transaction_read_only", False, None) == "on"
    txn = SimpleNamespace(read_only=False)
    modes.begin(("isolation level repeatable read", "read only"), txn)
    assert modes.show("TRANSACTION_ISOLATION", True, txn) == "repeatable read"
    assert txn.read_only is True
    modes.set(Utility("SET", name="transaction", modes=("read write",)), True, txn)
    assert modes.show("transaction_read_only", True, txn) == "off"


def test_set_transaction_outside_a_block_only_warns():
    modes = TransactionModes(SessionSettings("u", {}))
    result = modes.set(Utility("SET", name="transaction", modes=("read only",)), False, None)
    assert [n.severity for n in result.notices] == ["WARNING"]
    assert modes.show("transaction_read_only", False, None) == "off"
