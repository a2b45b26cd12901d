"""Unit tests for catalog.roles: verifiers and the durable role file."""

from __future__ import annotations

import json

import pytest

from catalog.roles import Role, RoleStore, Verifier, make_verifier, password_verifier
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
