"""Config: defaults, NYALA_* variables, generated flags and their precedence."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

from server.config import Config, add_arguments


def test_defaults_work_for_one_machine():
    config = Config.from_args([], environ={})
    assert (config.host, config.port, config.data_dir, config.database) == (
        "127.0.0.1", 5433, Path("./nyala-data"), "nyala",
    )  # fmt: skip
    assert config.fsync is True
    assert config.max_message_size_bytes > 0


def test_every_field_has_a_default_and_help():
    for field in dataclasses.fields(Config):
        assert field.default is not dataclasses.MISSING, field.name
        assert field.metadata.get("help"), field.name


def test_flags_are_generated_from_fields():
    config = Config.from_args(
        ["--host", "0.0.0.0", "--port", "0", "--data-dir", "/tmp/x", "--database", "db",
         "--log-level", "debug", "--max-message-size-bytes", "1024", "--no-fsync"],
        environ={},
    )  # fmt: skip
    assert config == Config(
        host="0.0.0.0", port=0, data_dir=Path("/tmp/x"), database="db", log_level="debug",
        max_message_size_bytes=1024, fsync=False,
    )  # fmt: skip


def test_environment_overrides_defaults():
    environ = {
        "NYALA_HOST": "127.0.0.2",
        "NYALA_PORT": "6000",
        "NYALA_DATA_DIR": "/srv/nyala",
        "NYALA_DATABASE": "prod",
        "NYALA_FSYNC": "off",
        "NYALA_MAX_MESSAGE_SIZE_BYTES": "4096",
    }
    config = Config.from_args([], environ=environ)
    assert (config.host, config.port, config.data_dir, config.database) == (
        "127.0.0.2", 6000, Path("/srv/nyala"), "prod",
    )  # fmt: skip
    assert config.fsync is False
    assert config.max_message_size_bytes == 4096


def test_flags_win_over_environment():
    config = Config.from_args(["--port", "7000"], environ={"NYALA_PORT": "6000"})
    assert config.port == 7000


def test_bad_environment_value_is_refused():
    with pytest.raises(ValueError):
        Config.from_args([], environ={"NYALA_FSYNC": "maybe"})


@pytest.mark.parametrize("flags", [["--port", "70000"], ["--log-level", "loud"],
                                   ["--max-message-size-bytes", "0"], ["--http-port", "-2"],
                                   ["--http-port", "70000"]])  # fmt: skip
def test_invalid_values_are_refused(flags):
    with pytest.raises(ValueError):
        Config.from_args(flags, environ={})


def test_no_fsync_help_says_it_is_unsafe():
    parser = argparse.ArgumentParser()
    add_arguments(parser, environ={})
    assert "unsafe: may lose committed data" in parser.format_help().replace("\n", " ").replace(
        "  ", " "
    )


def test_config_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Config().port = 1  # type: ignore[misc]


def test_auth_and_tls_options_are_checked():
    assert Config.from_args(["--auth", "password"], environ={}).auth == "password"
    config = Config.from_args(
        ["--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-required"], environ={}
    )
    assert (config.tls_cert, config.tls_key, config.tls_required) == ("c.pem", "k.pem", True)
    for bad in ({"auth": "md5"}, {"tls_cert": "c.pem"}, {"tls_required": True}):
        with pytest.raises(ValueError):
            Config(**bad)


def test_status_page_is_off_unless_a_port_is_given():
    assert Config.from_args([], environ={}).http_port == -1
    config = Config.from_args([], environ={"NYALA_HTTP_PORT": "8050"})
    assert (config.http_host, config.http_port) == ("127.0.0.1", 8050)


def test_history_max_age_takes_fractions_of_a_second():
    assert Config.from_args(["--history-max-age-s", "2.5"], environ={}).history_max_age_s == 2.5
