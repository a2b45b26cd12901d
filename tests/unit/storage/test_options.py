import dataclasses

import pytest

from storage.options import StorageOptions


def test_defaults_are_durable_and_wait_forever():
    options = StorageOptions()
    assert options.fsync is True
    assert options.wal_segment_size_bytes == 64 * 1024 * 1024
    assert options.lock_timeout_ms == 0


def test_options_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        StorageOptions().fsync = False  # type: ignore[misc]


def test_every_option_has_help_and_fsync_says_unsafe():
    help_texts = StorageOptions.help()
    assert set(help_texts) == {f.name for f in dataclasses.fields(StorageOptions)}
    assert "unsafe" in help_texts["fsync"]
