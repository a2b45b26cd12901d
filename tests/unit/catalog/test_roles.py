"""Unit tests for catalog.roles: verifiers and the durable role file."""

from __future__ import annotations

import json

import pytest

from catalog.roles import (
    Membership,
    Role,
    RoleStore,
    Verifier,
    make_verifier,
    password_verifier,
)
from storage import errors


def test_verifier_text_round_trips():
    verifier = make_verifier("pw", iterations=4096)
    text = verifier.text()
    assert text.startswith("SCRAM-SHA-256$4096:")
    assert Verifier.parse(text) == verifier
    assert Verifier.parse("md5abc") is None


def test_password_verifier_keeps_verifiers_and_refuses_md5():
    existing = make_verifier("x").text()
    assert password_verifier(existing) == existing
    assert password_verifier("plain") != "plain"
    with pytest.raises(errors.FeatureNotSupported):
        password_verifier("md5" + "0" * 32)


def test_store_persists_and_bootstraps_once(tmp_path):
    store = RoleStore(tmp_path, fsync=False)
    assert store.bootstrap("root", "secret")
    assert not store.bootstrap("root", "other")
    store.put(Role("app", password=password_verifier("app-pw")))
    reopened = RoleStore(tmp_path, fsync=False)
    assert [r.name for r in reopened.all()] == ["app", "root"]
    assert reopened.get("root").superuser
    raw = (tmp_path / "roles.json").read_text()
    assert "secret" not in raw and "app-pw" not in raw
    assert reopened.drop("app") and not reopened.drop("app")


def test_corrupt_file_is_reported(tmp_path):
    (tmp_path / "roles.json").write_text("{nope")
    with pytest.raises(errors.DataCorrupted):
        RoleStore(tmp_path)
    (tmp_path / "roles.json").write_text(json.dumps({"version": 99, "roles": []}))
    with pytest.raises(errors.DataCorrupted):
        RoleStore(tmp_path)


def _members(tmp_path) -> RoleStore:
    store = RoleStore(tmp_path, fsync=False)
    for name, inherit in (("a", True), ("b", False), ("c", True), ("d", True)):
        store.put(Role(name, inherit=inherit))
    # a -> b (b NOINHERIT) -> c -> d, and a -> pg_read_all_data
    store.put_membership(Membership("b", "a", "su"))
    store.put_membership(Membership("c", "b", "su", admin_option=True))
    store.put_membership(Membership("d", "c", "su"))
    store.put_membership(Membership("pg_read_all_data", "a", "su"))
    return store


def test_privileges_follow_inheriting_memberships_only(tmp_path):
    store = _members(tmp_path)
    assert store.privileges_of("a") == {"a", "b", "pg_read_all_data"}
    assert store.privileges_of("b") == {"b"}
    assert store.privileges_of("c") == {"c", "d"}
    assert store.member_of("a") == {"a", "b", "c", "d", "pg_read_all_data"}
    assert store.has_admin("a", "c") and store.has_admin("b", "c")
    assert not store.has_admin("c", "c") and not store.has_admin("a", "d")


def test_memberships_persist_and_go_with_their_roles(tmp_path):
    _members(tmp_path)
    store = RoleStore(tmp_path, fsync=False)
    assert store.membership("c", "b") == Membership("c", "b", "su", admin_option=True)
    assert store.get("b") == Role("b", inherit=False)
    assert store.get("pg_signal_backend") is not None
    assert "pg_signal_backend" not in {r.name for r in store.all()}
    store.drop("c")
    assert {(m.role, m.member) for m in store.memberships()} == {
        ("b", "a"), ("pg_read_all_data", "a"),
    }  # fmt: skip


def test_a_version_1_role_file_still_opens(tmp_path):
    doc = {"version": 1, "roles": [{"name": "x", "login": True, "superuser": True,
                                     "password": None}]}  # fmt: skip
    (tmp_path / "roles.json").write_text(json.dumps(doc))
    store = RoleStore(tmp_path, fsync=False)
    assert store.get("x") == Role("x", superuser=True)
    assert store.memberships() == []
